"""VisPath path-search options at scale (intent fallback, Eq. 5 weighting, first cut, Eq. 8 on relations).

Each option keeps the paper's reading as its default value; these tests pin what each other value
does, on a hub where distractor tails share words with the question (the failure bench/scale.py
measures). Fakes from tests/fakes/vispath.py: in-memory graph, bag-of-words encoder (cosine = word overlap).
"""

from __future__ import annotations

import numpy as np
import pytest

from kgqa.methods.vispath.options import VisPathOptions
from kgqa.core.question import greedy_relation_matches, question_phrases
from kgqa.methods.vispath.records import ReasoningPath
from kgqa.methods.vispath.scoring import Scorer, cap_per_key, edge_scores, first_cut_relation_scores
from kgqa.core.errors import InvalidInput
from tests.conftest import make_vispath
from tests.fakes.vispath import BagOfWordsEncoder, FakeGraph, ScriptedModel

# A tower whose architect is the gold hop; its other edges lead to tails named like the question.
ENTITIES = {"T": "Kamar Tower", "A": "Gustave Eiffel", "B": "Dijon", "X1": "Tower of Old Paris",
            "X2": "Paris Tower Museum", "X3": "Old Tower", "C": "France"}
RELATIONS = {"P84": "architect", "P551": "residence", "P1435": "heritage designation",
             "P19": "place of birth", "P17": "country"}
FACTS = [("T", "P84", "A"), ("T", "P1435", "X1"), ("T", "P1435", "X2"), ("T", "P1435", "X3"),
         ("A", "P19", "B"), ("A", "P551", "X2"), ("B", "P17", "C")]
QUESTION = "Where was the architect of the Paris Tower born?"


#: the paper's literal reading of what it leaves open (the defaults are bench/scale.py's best variant)
PAPER = dict(intent_fallback="question", edge_relation_weight=0.0, chain_relation_weight=0.0,
             depth_fallback="dmax", chain_score="sbert", M1_per_relation=0, delta=0.05, M3_fallback=0,
             delta_grounding=0.0)


#: the option defaults (VisPathOptions()), for tests of what the defaults do
DEFAULTS = VisPathOptions().model_dump()


def make(facts=FACTS, scripts=None, **opts):
    opts = {**PAPER, **opts}
    enc = BagOfWordsEncoder()
    g = FakeGraph(ENTITIES, RELATIONS, facts, encoder=enc)
    m = ScriptedModel(scripts or {})          # every scripted step raises BadModelReply: all fallbacks
    return make_vispath(g, enc, m, m, VisPathOptions(**opts)), g, m


# --------------------------------------------------------------------------- pure helpers
def test_question_phrases_are_content_word_ngrams():
    texts = [p[2] for p in question_phrases("Where was the architect of the Eiffel Tower born?")]
    assert {"architect", "born", "eiffel tower", "tower born", "eiffel"} <= set(texts)
    for t in texts:  # none starts or ends with a function word
        assert t.split()[0] not in {"the", "of", "where", "was"} and t.split()[-1] not in {"the", "of"}
    assert all(len(t.split()) <= 3 for t in texts)


def test_greedy_matches_use_each_span_and_relation_once_above_the_threshold():
    phrases = [(0, 1, "capital"), (0, 2, "capital city"), (3, 4, "born")]
    sims = np.array([[1.0, 0.9, 0.1],      # capital    ↔ capital, capital of, place of birth
                     [0.8, 0.7, 0.1],      # capital city (overlaps "capital")
                     [0.1, 0.2, 0.6]])     # born
    assert greedy_relation_matches(phrases, sims, 0.45, 3) == [(0, 0, 1.0), (2, 2, 0.6)]
    assert greedy_relation_matches(phrases, sims, 0.65, 3) == [(0, 0, 1.0)]
    assert greedy_relation_matches(phrases, sims, 0.45, 1) == [(0, 0, 1.0)]


def test_a_phrase_said_twice_names_its_relation_twice_another_phrase_does_not():
    # "the parent taxon of the parent taxon of this fish": two hops of one relation
    phrases = [(3, 5, "parent taxon"), (7, 9, "parent taxon"), (7, 8, "parent")]
    sims = np.array([[0.9, 0.1], [0.9, 0.1], [0.6, 0.2]])
    assert greedy_relation_matches(phrases, sims, 0.45, 3) == [(0, 0, 0.9), (1, 0, 0.9)]
    # another phrase for an already matched relation is not another hop
    phrases = [(0, 1, "capital"), (3, 4, "capital city")]
    sims = np.array([[0.9], [0.8]])
    assert greedy_relation_matches(phrases, sims, 0.45, 3) == [(0, 0, 0.9)]


def test_edge_score_weight_zero_is_the_papers_eq5_and_one_is_the_relation_alone():
    rel, concat = np.array([0.9, 0.2]), np.array([0.3, 0.8])
    assert np.allclose(edge_scores(rel, concat, 0.0), concat)
    assert np.allclose(edge_scores(rel, concat, 1.0), rel)
    assert np.allclose(edge_scores(rel, concat, 0.5), [0.6, 0.5])


@pytest.mark.parametrize("w", [0.0, 0.3, 0.7, 0.95])
def test_first_cut_scaling_ranks_like_the_weighted_score(w):
    rng = np.random.default_rng(3)
    rs, es = rng.uniform(-1, 1, 50), rng.uniform(-1, 1, 50)
    scaled = np.array(list(first_cut_relation_scores({str(i): v for i, v in enumerate(rs)}, w).values()))
    cypher_order = np.argsort(-(scaled + es) / 2, kind="stable")        # what the Cypher cut ranks by
    wanted = np.argsort(-(w * rs + (1 - w) * (rs + es) / 2), kind="stable")
    assert list(cypher_order) == list(wanted)
    if w == 0.0:
        assert np.allclose(scaled, rs)                                  # the paper's cut unchanged


def test_first_cut_with_relation_weight_one_keeps_the_relation_order_tail_breaks_ties():
    s = first_cut_relation_scores({"P1": 0.5, "P2": 0.4}, 1.0)
    # any tail cosine in [-1, 1] cannot lift P2 over P1
    assert (s["P2"] + 1.0) / 2 < (s["P1"] - 1.0) / 2


# --------------------------------------------------------------------------- in the engine
def test_papers_eq5_lets_tails_named_like_the_question_crowd_out_the_relation():
    vp, _, _ = make(M1=2)
    q = vp.scorer.embed([QUESTION])[0]
    kept = vp.scorer.score_edges(["T"], q, intent=QUESTION)["T"]
    assert "P84" not in [e.relation_id for e in kept]        # "… Paris Tower Museum" outranks "architect"


def test_relation_weight_one_ranks_by_relation_and_breaks_ties_by_the_tail():
    vp, _, _ = make(M1=2, edge_relation_weight=1.0)
    intent = "architect Paris Tower"
    q = vp.scorer.embed([intent])[0]
    kept = vp.scorer.score_edges(["T"], q, intent=intent)["T"]
    assert kept[0].relation_id == "P84"                      # the relation decides, whatever the tails say
    assert kept[0].score == pytest.approx(float(vp.scorer.relations()["P84"][1] @ q))
    # the three heritage-designation edges tie on the relation: the tail closest to q_i wins
    assert kept[1].relation_id == "P1435" and kept[1].tail_id == "X2"   # "Paris Tower Museum"


def test_relation_first_at_a_hub_encodes_no_edge_texts():
    vp, _, _ = make(M1=2, edge_relation_weight=1.0)
    q = vp.scorer.embed(["architect"])[0]
    vp.scorer.score_edges(["T"], q, intent="architect")
    assert not [t for t in vp.kg._emb_cache if t.startswith("heritage designation ")]
    weighed = Scorer(vp.kg, vp.graph, VisPathOptions(**{**PAPER, "M1": 2, "edge_relation_weight": 0.5}))
    weighed.score_edges(["T"], q, intent="architect")
    assert "heritage designation Old Tower" in vp.kg._emb_cache       # Eq. 5's r ‖ e_t, when it is weighed


def test_question_fallback_uses_the_question():
    vp, _, _ = make()
    run = vp.run(QUESTION, entity_id="T")
    assert run.hops[0].intent == QUESTION
    assert any("Q ‖ sketch step" in f.message for f in run.fallbacks)


def test_relations_fallback_names_the_relations_the_question_mentions():
    vp, _, _ = make(intent_fallback="relations", sketch_min_cos=0.9)
    sketch = vp.scorer.relation_sketch(QUESTION)
    text, scores = sketch.intent, sketch.scores
    assert text == "architect"                               # "born" ≠ "place of birth" for a bag of words
    assert scores["P84"] == pytest.approx(1.0) and scores["P551"] < 0.5
    run = vp.run(QUESTION, entity_id="T")
    assert [h.intent for h in run.hops][:1] == ["architect"]
    assert any("the relations the question names" in f.message for f in run.fallbacks)


def test_relations_fallback_scores_edges_by_their_relations_phrase_match():
    vp, _, _ = make(M1=1, intent_fallback="relations", sketch_min_cos=0.9, edge_relation_weight=1.0)
    run = vp.run(QUESTION, entity_id="T")
    assert run.hops[0].retained[0].edges[0].relation_id == "P84"   # the architect, not a "… Tower" tail


def test_relations_fallback_without_any_match_falls_back_to_the_question():
    vp, _, _ = make(intent_fallback="relations")
    run = vp.run("Zzz qqq?", entity_id="T")
    assert run.hops[0].intent == "Zzz qqq?"


def test_chain_relation_weight_scores_the_relation_chain_not_the_entity_names():
    vp, _, _ = make()
    start = ReasoningPath("T", "Kamar Tower")
    e = {k: vp.scorer.score_edges(["T"], vp.scorer.embed(["x"])[0], M1=10)["T"] for k in ("all",)}["all"]
    by_rel = {x.relation_id + x.tail_id: x for x in e}
    gold, distractor = start.extend(by_rel["P84A"]), start.extend(by_rel["P1435X2"])
    assert gold.relation_chain() == "architect"
    paper = vp.scorer.chain_scores([gold, distractor], QUESTION, [QUESTION], QUESTION)
    assert paper[0] is distractor                             # tail words "Paris Tower" dominate Eq. 8
    ours = Scorer(vp.kg, vp.graph, VisPathOptions(**{**PAPER, "chain_relation_weight": 1.0})).chain_scores(
        [gold, distractor], QUESTION, [QUESTION], QUESTION)
    assert ours[0] is gold


@pytest.mark.parametrize("bad", [{"edge_relation_weight": 1.5}, {"chain_relation_weight": -0.1},
                                 {"intent_fallback": "sketch"}, {"sketch_min_cos": 2},
                                 {"M1_per_relation": -1}])
def test_bad_scoring_options_are_refused_with_the_option_named(bad):
    from kgqa.methods.vispath.algorithm import VisPath
    from kgqa.core.method import parse_options

    with pytest.raises(InvalidInput) as e:
        parse_options(VisPath, {k: str(v) for k, v in bad.items()})
    assert next(iter(bad)) in str(e.value)


def test_defaults_are_the_ones_chosen_on_more_dev_and_the_papers_reading_stays_available():
    o = VisPathOptions()
    assert (o.intent_fallback, o.edge_relation_weight, o.chain_relation_weight, o.depth_fallback,
            o.chain_score, o.chain_alignment, o.delta, o.M1_per_relation, o.M3_fallback, o.coverage_edge_cost,
            o.delta_grounding) == (
        "relations", 1.0, 1.0, "dmax", "sketch", "coverage", 0.2, 5, 15, 0.5, 1.0)   # chosen on more-dev
    p = VisPathOptions(**PAPER)
    assert (p.intent_fallback, p.edge_relation_weight, p.depth_fallback, p.M1_per_relation, p.delta, p.M3_fallback,
            p.delta_grounding) == ("question", 0.0, "dmax", 0, 0.05, 0, 0.0)


# --------------------------------------------------------------------------- diversity at hubs
def test_cap_per_key_keeps_rank_order_and_at_most_k_of_a_key():
    ranked = ["a1", "a2", "a3", "b1", "c1", "b2"]
    assert cap_per_key(ranked, lambda x: x[0], 1, 3) == ["a1", "b1", "c1"]
    assert cap_per_key(ranked, lambda x: x[0], 2, 4) == ["a1", "a2", "b1", "c1"]
    assert cap_per_key(ranked, lambda x: x[0], 0, 4) == ranked[:4]           # 0: the plain top-k


def test_edge_cap_per_relation_lets_another_relation_past_a_hubs_many_edges_of_one():
    # three heritage-designation edges tie on the relation and outrank "architect" for this intent
    intent = "heritage designation architect"
    vp, _, _ = make(M1=3, edge_relation_weight=1.0)
    q = vp.scorer.embed([intent])[0]
    assert [e.relation_id for e in vp.scorer.score_edges(["T"], q, intent=intent)["T"]] == ["P1435"] * 3
    vp, _, _ = make(M1=3, edge_relation_weight=1.0, M1_per_relation=2)
    kept = vp.scorer.score_edges(["T"], q, intent=intent)["T"]
    assert [e.relation_id for e in kept] == ["P1435", "P1435", "P84"]


# --------------------------------------------------------------------------- the non-LLM sketch: D̂ and σ
def words(question, idx):
    from kgqa.core.question import question_tokens

    toks = question_tokens(question)
    return {toks[i].lower() for i in idx}


def test_mentions_of_entities_and_of_the_image_are_not_relation_phrases():
    from kgqa.core.question import mention_tokens

    q = "In which city was the astronaut in this photo born?"
    ex, typ = mention_tokens(q, has_image=True)
    assert words(q, ex) == {"the", "astronaut", "in", "this", "photo"} and words(q, typ) == {"city"}
    ex, _ = mention_tokens(q, has_image=False)           # without an image nothing points at one
    assert not ex
    q = "What is the capital of the country whose flag is shown?"
    ex, typ = mention_tokens(q, has_image=True)
    assert {"country", "flag"} <= words(q, ex) and "capital" not in words(q, ex) and not typ
    q = "Where was the architect of the Eiffel Tower born?"
    ex, _ = mention_tokens(q, has_image=False)
    assert words(q, ex) == {"eiffel", "tower"}           # capitalised: an entity's name, not a relation
    q = "Who founded the company that builds the rocket shown in this photo?"
    ex, typ = mention_tokens(q, has_image=True)
    assert words(q, typ) == {"company"} and "rocket" in words(q, ex) and "founded" not in words(q, ex)
    q = "What is the parent taxon of the parent taxon of this fish?"
    ex, _ = mention_tokens(q, has_image=True)            # "this fish" is the topic; what precedes names hops
    assert words(q, ex) == {"this", "fish"}
    q = "Who is the owner of the entity that owns this island?"
    ex, _ = mention_tokens(q, has_image=True)
    assert words(q, ex) == {"this", "island"}
    q = "Where was Michael Collins, the Apollo 11 astronaut, born?"
    ex, _ = mention_tokens(q, has_image=False)           # an apposition describes the named entity
    assert words(q, ex) == {"michael", "collins", "the", "apollo", "11", "astronaut"}


def test_question_phrases_skip_excluded_tokens():
    q = "Where was the architect of the Eiffel Tower born?"
    texts = {p[2] for p in question_phrases(q, exclude={6, 7})}
    assert "architect" in texts and "born" in texts
    assert not [t for t in texts if "eiffel" in t or "tower" in t]


def test_relation_aliases_name_relations_in_the_sketch():
    vp, g, _ = make(intent_fallback="relations", sketch_min_cos=0.9)
    g.aliases = {"P19": ["birthplace", "born in", "born"]}
    assert vp.scorer.relation_sketch(QUESTION).intent == "architect; place of birth"   # "born" is an alias of P19
    vp, g, _ = make(intent_fallback="relations", sketch_min_cos=0.9, sketch_aliases=False)
    g.aliases = {"P19": ["born"]}
    assert vp.scorer.relation_sketch(QUESTION).intent == "architect"


def test_depth_fallback_sketch_takes_the_depth_from_the_named_relations():
    opts = dict(intent_fallback="relations", sketch_min_cos=0.9, edge_relation_weight=1.0,
                chain_relation_weight=1.0, chain_score="sketch")
    vp, g, _ = make(**opts)                               # paper: D̂ = Dmax, no depth preference
    g.aliases = {"P19": ["born"]}
    run = vp.run(QUESTION, entity_id="T")
    assert run.depth_range is None and run.depth_hat == 3
    vp, g, _ = make(depth_fallback="sketch", **opts)
    g.aliases = {"P19": ["born"]}
    run = vp.run(QUESTION, entity_id="T")
    assert run.depth_range == (2, 2) and run.depth_hat == 2
    assert run.answer == "Dijon" and len(run.selected_paths[0].edges) == 2
    # the answer-type noun of "which N" is an optional last hop: "country" here
    vp, g, _ = make(depth_fallback="sketch", **opts)
    g.aliases = {"P19": ["born"]}
    run = vp.run("In which country was the architect of the Paris Tower born?", entity_id="T")
    assert run.depth_range == (2, 3)
    assert 2 <= len(run.selected_paths[0].edges) <= 3 and run.answer in ("Dijon", "France")


def test_sketch_alignment_pairs_relations_and_phrases_one_to_one():
    from kgqa.core.result import Step

    vp, g, _ = make(intent_fallback="relations", sketch_min_cos=0.9, chain_score="sketch")
    g.aliases = {"P19": ["born"]}
    sketch = vp.scorer.relation_sketch(QUESTION)

    def path(*rels):
        return ReasoningPath("T", "Kamar Tower", tuple(Step("h", "h", r, g.relations[r], "t", "t", k) for k, r in enumerate(rels, 1)))

    assert sketch.alignment(path("P84", "P19")) == pytest.approx(1.0)
    assert sketch.alignment(path("P84", "P551")) == pytest.approx(0.5)   # residence matches no phrase
    assert sketch.alignment(path("P84", "P84")) == pytest.approx(0.5)    # one phrase serves one edge
    # coverage: the path that covers both named relations outranks the one a relation short, which
    # the mean cannot tell apart (1.0 each); an edge that matches nothing adds nothing and costs 0.01
    assert sketch.alignment(path("P84")) == pytest.approx(sketch.alignment(path("P84", "P19")))
    assert sketch.coverage(path("P84", "P19"), min_cos=0.9) == pytest.approx(2.0 - 0.02)
    assert sketch.coverage(path("P84"), min_cos=0.9) == pytest.approx(1.0 - 0.01)
    assert sketch.coverage(path("P84", "P551"), min_cos=0.9) == pytest.approx(1.0 - 0.02)
    # an edge costs coverage_edge_cost: a match weaker than the cost does not pay for its hop
    assert sketch.coverage(path("P84", "P19"), min_cos=0.9, edge_cost=0.3) == pytest.approx(2.0 - 0.6)
    assert sketch.coverage(path("P84", "P551"), min_cos=0.9, edge_cost=0.3) < sketch.coverage(
        path("P84"), min_cos=0.9, edge_cost=0.3)


def test_reverse_reading_breaks_alignment_ties_toward_the_last_hop_named_first():
    from kgqa.core.result import Step

    vp, g, _ = make(intent_fallback="relations", sketch_min_cos=0.9, chain_score="sketch")
    g.aliases = {"P19": ["born"]}
    q = "Where was the architect of the Paris Tower born?"        # architect (3) … born (8)
    sketch = vp.scorer.relation_sketch(q)

    def path(*rels):
        return ReasoningPath("T", "Kamar Tower", tuple(Step("h", "h", r, g.relations[r], "t", "t", k) for k, r in enumerate(rels, 1)))

    fwd, rev = path("P84", "P19"), path("P19", "P84")
    assert sketch.alignment(fwd) == pytest.approx(sketch.alignment(rev))   # unordered: a tie
    assert sketch.reverse_reading(rev) == 1.0 and sketch.reverse_reading(fwd) == 0.0
    assert sketch.reverse_reading(path("P84")) == 0.5                     # one edge: no order
    # in σ the order only breaks the tie; a better alignment still wins whatever its order
    ranked = vp.scorer.chain_scores([fwd, rev, path("P84", "P551")], q, [], sketch.intent, relation_sketch=sketch)
    assert [[e.relation_id for e in p.edges] for p in ranked] == [["P19", "P84"], ["P84", "P19"], ["P84", "P551"]]



def test_a_noun_that_types_a_named_entity_is_left_out_with_it():
    from kgqa.core.question import mention_tokens

    # "the novel Notre-Dame de Paris": "novel" types the named topic, like "this fish": not a hop (it matched
    # "notable work"), not a type of an entity on the way (it rewarded Les Misérables three hops away)
    q = "Who wrote the novel Notre-Dame de Paris?"
    ex, typ = mention_tokens(q, has_image=False)
    assert "novel" in words(q, ex) and not typ and "wrote" not in words(q, ex | typ)
    q = "Where was the architect of the Eiffel Tower born?"      # "of the" between: a relation, not a type
    assert not mention_tokens(q, has_image=False)[1]


@pytest.mark.parametrize("question, typed", [
    ("Which country has as its capital the city twinned with the capital of Germany?", {"city"}),
    ("Who painted the portrait held in the Louvre?", {"portrait"}),
    ("In which year was the novel written by Victor Hugo published?", {"novel"}),
    ("Who is the architect of the tower built for the 1889 fair?", {"tower"}),
    ("What is the capital of the country of Berlin?", set()),            # "of": a relation, not a type
])
def test_a_noun_heading_a_reduced_relative_clause_types_an_entity_on_the_way(question, typed):
    from kgqa.core.question import type_nouns

    answer, along = type_nouns(question, has_image=False)
    assert set(along) == typed


def test_llm_steps_auto_asks_every_step_of_a_served_llm_and_the_measured_set_of_the_bundled_one():
    from types import SimpleNamespace

    from kgqa.core.config import Settings
    from kgqa.methods.vispath.options import CPU_LLM_STEPS, resolve_llm_steps
    from kgqa.models.local_chat import LocalChat
    from kgqa.models.openai_backend import OpenAIChat

    bundled = LocalChat(Settings(local_llm_gguf=None))                    # loads nothing
    assert resolve_llm_steps("auto", bundled) == CPU_LLM_STEPS
    assert resolve_llm_steps("auto", LocalChat(Settings(local_llm_runtime="transformers"))) == CPU_LLM_STEPS
    assert resolve_llm_steps("auto", OpenAIChat(Settings(chat_backend="vllm"))) == "all"
    # a GGUF the user brings was not measured: the paper's every step
    assert resolve_llm_steps("auto", LocalChat(Settings(local_llm_gguf="/models/big.gguf"))) == "all"
    assert resolve_llm_steps("auto", SimpleNamespace()) == "all"             # any other ChatModel
    assert resolve_llm_steps("ranking,final", bundled) == "ranking,final"    # an explicit choice stands
    assert VisPathOptions().llm_steps == "auto"


def test_type_nouns_split_the_answer_type_from_types_on_the_way():
    from kgqa.core.question import type_nouns

    assert type_nouns("In which city was the astronaut in this photo born?", True) == (["city"], [])
    assert type_nouns("What is the capital of the state where the astronaut in this photo was born?", True) == (
        [], ["state"])
    assert type_nouns("In which city is the museum that holds the Mona Lisa?", False) == (["city"], ["museum"])
    assert type_nouns("What is the currency of the country whose flag is shown?", True) == ([], [])


@pytest.mark.parametrize("question,typed", [
    # the answer's type: the endpoint's description must have it ("Dijon, city in …" is no country)
    ("In which country was the architect of the Paris Tower born?", "C"),
    ("In which city was the architect of the Paris Tower born?", "B"),
])
def test_answer_typing_prefers_paths_whose_entities_have_the_named_types(question, typed):
    # typing_weight=0: typed paths first, before depth and σ (the default weighs typing against σ instead)
    def answer(**opts):
        vp, g, _ = make(**{**DEFAULTS, "typing_weight": 0, **opts})
        g.descriptions = {"B": "Dijon, city in Burgundy", "C": "France, country in Western Europe",
                          "A": "French civil engineer"}
        return vp.run(question, entity_id="T").answer_id

    assert answer() == typed
    if typed == "C":     # with the sketch's depth range and mean alignment, only typing takes the country hop
        assert answer(answer_typing=False, depth_fallback="sketch", chain_alignment="mean") != "C"


def test_description_words_imply_a_few_types_and_do_not_stem():
    from kgqa.core.question import description_words

    assert "city" in description_words("Rome, capital of Italy.")           # a capital is a city
    assert "town" in description_words("Colmar, commune in Alsace, France.")
    assert "state" not in description_words("Elmira, city in New York, United States.")
