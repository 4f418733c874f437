"""VisPath logic (Algorithm 1) with scripted fakes: no Neo4j, no model weights.

The fakes are small and explicit: an in-memory graph that answers the vispath_*
queries by name, a bag-of-words encoder (cosine = word overlap), and chat/vision
models that return scripted JSON per schema (or raise BadModelReply, as a real
backend does after its bounded retries).
"""

from __future__ import annotations

import pytest

from kgqa.methods.vispath import prompts as P
from kgqa.core.errors import InvalidInput
from tests.conftest import make_vispath
from tests.fakes.vispath import (ENTITIES, FACTS, IMAGE, Q2HOP, RELATIONS, BagOfWordsEncoder, FakeGraph,
                                 ScriptedModel, base_scripts, make)


# --------------------------------------------------------------------------- IV-A
def test_two_hop_question_follows_architect_then_birthplace_and_stops_at_hop_two():
    vp, g, m = make()
    run = vp.run(Q2HOP, IMAGE)
    assert run.start.id == "Q1"
    assert run.object_name == "Government Museum, Chandigarh"
    assert ("recognize", "building") in m.prompts            # Eq. 1 sees HEAD only
    assert run.depth_hat == 2
    assert run.answer == "La Chaux-de-Fonds" and run.answer_id == "Q5"
    assert [e.relation_id for e in run.selected_paths[0].edges] == ["P84", "P19"]
    assert len(run.hops) == 2 and run.hops[0].answerable is False and run.hops[1].answerable is True
    assert run.stop_reason.startswith("stop rule at hop 2")
    assert run.sufficient is True


def _validation(compat, order=("Q9", "Q1", "Q2", "Q3", "Q4"), **opts):
    from kgqa.methods.vispath.records import StartCandidate, VisPathRun

    opts.setdefault("delta", 0.05)          # Eq. 3's mechanics at δ = 0.05 (the default, 0.2, is tested below)
    vp, g, _ = make(**opts)
    g.compat_override = compat
    cands = [StartCandidate(i, ENTITIES[i]) for i in order]
    start, replaced = vp.graph_aware_validation("q", cands, VisPathRun("q"))
    return start, replaced, cands


def test_graph_aware_validation_replaces_top_candidate_only_beyond_delta():
    # rank 2 beats rank 1 by 0.06 > δ = 0.05 → replaced, and moved to the front of the list
    start, replaced, cands = _validation({"Q9": 0.30, "Q1": 0.36, "Q2": 0.1, "Q3": 0.1, "Q4": 0.1})
    assert replaced and start.id == "Q1" and cands[0].id == "Q1" and cands[1].id == "Q9"
    # by 0.04 ≤ δ → kept
    start, replaced, _ = _validation({"Q9": 0.30, "Q1": 0.34, "Q2": 0.1, "Q3": 0.1, "Q4": 0.1})
    assert not replaced and start.id == "Q9"


def test_graph_aware_validation_threshold_grows_by_rank():
    # the challenger sits at rank 4: δ_4 = 0.05 + 2·0.01 = 0.07
    start, replaced, _ = _validation({"Q9": 0.30, "Q1": 0.1, "Q2": 0.1, "Q3": 0.365, "Q4": 0.1})
    assert not replaced and start.id == "Q9"          # 0.065 ≤ 0.07
    start, replaced, _ = _validation({"Q9": 0.30, "Q1": 0.1, "Q2": 0.1, "Q3": 0.375, "Q4": 0.1})
    assert replaced and start.id == "Q3"              # 0.075 > 0.07


def test_a_question_naming_its_entity_keeps_the_label_match_unless_another_label_match_fits_better():
    from kgqa.methods.vispath.records import StartCandidate, VisPathRun

    def validate(labels, has_image=False, **opts):
        vp, g, _ = make(delta=0.05, **opts)
        g.compat_override = {"Q9": 0.10, "Q1": 0.40, "Q2": 0.30}
        cands = [StartCandidate(i, ENTITIES[i], label=i in labels) for i in ("Q9", "Q1", "Q2")]
        return vp.graph_aware_validation("q", cands, VisPathRun("q"), has_image=has_image)[0].id

    assert validate({"Q9"}) == "Q9"                          # Q1 fits better but is only a vector neighbour
    assert validate({"Q9", "Q2"}) == "Q2"                    # another label match may replace it (Eq. 3)
    assert validate({"Q9"}, has_image=True) == "Q1"          # a recognised image: Eq. 3 as in the paper
    assert validate({"Q9"}, keep_label_match=False) == "Q1"  # the paper's reading
    assert validate(set()) == "Q1"                           # no label match: Eq. 3 as in the paper


def test_candidate_without_outgoing_relations_scores_lowest_and_is_replaced():
    start, replaced, cands = _validation({"Q1": 0.2}, order=("Q9", "Q1"))
    assert cands[1].s_Q == pytest.approx(-1.0) or cands[0].s_Q == pytest.approx(-1.0)
    assert replaced and start.id == "Q1"


def test_ablation_no_graph_validation_keeps_the_visual_top_candidate():
    start, replaced, _ = _validation({"Q9": 0.0, "Q1": 0.9}, order=("Q9", "Q1"), no_graph_validation=True)
    assert not replaced and start.id == "Q9"


def test_look_alike_ranked_first_is_corrected_by_graph_validation_end_to_end():
    s = base_scripts(CandidateRanking={"ranked": ["Government Museum", "Government Museum, Chandigarh"]})
    vp, _, _ = make(s, delta=0.05)
    run = vp.run(Q2HOP, IMAGE)
    assert run.start_candidates[0].id == "Q1" and run.start_replaced
    assert run.answer_id == "Q5"


def test_default_margin_keeps_the_first_ranked_start_unless_another_fits_by_more_than_0_2():
    start, replaced, _ = _validation({"Q9": 0.30, "Q1": 0.45, "Q2": 0.1, "Q3": 0.1, "Q4": 0.1}, delta=0.2)
    assert not replaced and start.id == "Q9"          # 0.15 ≤ δ = 0.2: kept (at 0.05 it was replaced)
    start, replaced, _ = _validation({"Q9": 0.30, "Q1": 0.55, "Q2": 0.1, "Q3": 0.1, "Q4": 0.1}, delta=0.2)
    assert replaced and start.id == "Q1"              # 0.25 > 0.2
    from kgqa.methods.vispath.options import VisPathOptions

    assert VisPathOptions().delta == 0.2


def test_grounding_margin_keeps_a_firmly_grounded_start_against_a_better_fitting_weakly_grounded_rival():
    # the island (recognised at 1.0) against the body of water next to it (0.4), which has the relation the
    # question asks at its second hop: s_Q beats the island's by 0.3 > δ = 0.2, so the paper's Eq. 3 moves
    # the start; with delta_grounding = 1 the rival must also make up its 0.6 grounding gap, and does not
    from kgqa.methods.vispath.records import StartCandidate, VisPathRun

    def validate(rival_retrieval, **opts):
        vp, g, _ = make(delta=0.2, **opts)
        g.compat_override = {"Q9": 0.30, "Q1": 0.60}
        cands = [StartCandidate("Q9", ENTITIES["Q9"], retrieval=1.0),
                 StartCandidate("Q1", ENTITIES["Q1"], retrieval=rival_retrieval)]
        return vp.graph_aware_validation("q", cands, VisPathRun("q"), has_image=True)[0].id

    assert validate(0.4, delta_grounding=0.0) == "Q1"      # the paper's Eq. 3
    assert validate(0.4, delta_grounding=1.0) == "Q9"      # 0.3 ≤ 0.2 + 1.0·0.6
    assert validate(0.95, delta_grounding=1.0) == "Q1"     # grounded nearly as firmly: 0.3 > 0.2 + 0.05


def test_candidate_ranking_fallback_is_vector_index_order():
    vp, _, m = make(base_scripts(CandidateRanking={"ranked": ["Paris"]}))  # names nothing retrieved
    run = vp.run(Q2HOP, IMAGE)
    assert any("vector-index order" in f.message for f in run.fallbacks)
    assert run.start.id == "Q1"


def test_text_only_question_takes_the_topic_from_the_question_and_never_calls_vision():
    s = base_scripts(ReferringExpression={"expression": "Le Corbusier", "head": "architect"},
                     CandidateRanking={"ranked": ["Le Corbusier"]},
                     QuestionSketch={"sketch": ["place of birth"], "depth": 1},
                     HopIntent=[{"intent": "place of birth"}],
                     Answerability=[{"answerable": True, "answer": "La Chaux-de-Fonds"}])
    vp, _, m = make(s)
    run = vp.run("Where was Le Corbusier born?", None)
    assert run.start.id == "Q2" and run.answer_id == "Q5"
    assert not any(k == "recognize" for k, _ in m.prompts)


def test_topic_mention_heuristic():
    from kgqa.core.question import topic_mention_heuristic

    assert topic_mention_heuristic("Where was Le Corbusier born?") == "Le Corbusier"
    assert topic_mention_heuristic("Which city is twinned with La Chaux-de-Fonds?") == "La Chaux-de-Fonds"
    # a comma joins a place to its region, but an apposition is not part of the name
    assert topic_mention_heuristic("What is the capital of Albany, New York?") == "Albany, New York"
    assert topic_mention_heuristic("Where was Michael Collins, the Apollo 11 astronaut, born?") == "Michael Collins"


def test_label_keys_ignore_case_punctuation_and_mark_a_dropped_qualifier():
    from kgqa.core.kg import QUALIFIED, label_key, label_keys

    assert label_key("Notre-Dame de Paris") == label_key("notre dame  de PARIS!") == "notre dame de paris"
    assert label_key("Maria Skłodowska-Curie") == "maria skłodowska curie"
    assert label_keys("The Hunchback of Notre-Dame", ["Notre-Dame de Paris (novel)", "the hunchback of notre-dame"]) == [
        "the hunchback of notre dame", "notre dame de paris novel", QUALIFIED + "notre dame de paris"]
    assert label_keys("(1)", ["", "--"]) == ["1"]         # a label of no words yields no key
    # what reaches Lucene is words, spaces and the marker only: no query syntax survives
    assert label_key('x" OR *:* \\') == "x or"


def test_given_entity_skips_grounding_and_unknown_entity_is_one_clear_error():
    vp, _, m = make()
    run = vp.run(Q2HOP, IMAGE, entity_id="Q1")
    assert run.start.id == "Q1" and not run.start_candidates
    assert not any(k in ("recognize", "ReferringExpression") for k, _ in m.prompts)
    with pytest.raises(InvalidInput, match="Q999"):
        vp.run(Q2HOP, IMAGE, entity_id="Q999")


# --------------------------------------------------------------------------- IV-B
def test_edges_per_frontier_entity_are_capped_at_M1():
    facts = FACTS + [("Q1", "P31", f"X{i}") for i in range(40)]
    ents = {**ENTITIES, **{f"X{i}": f"thing {i}" for i in range(40)}}
    from kgqa.methods.vispath.options import VisPathOptions

    enc = BagOfWordsEncoder()
    g = FakeGraph(ents, RELATIONS, facts, encoder=enc)
    vp = make_vispath(g, enc, ScriptedModel(base_scripts()), ScriptedModel(base_scripts()), VisPathOptions(M1=5))
    kept = vp.scorer.score_edges(["Q1"], enc.encode(["architect"])[0])
    assert len(kept["Q1"]) == 5
    assert kept["Q1"][0].relation_id == "P84"                   # Eq. 5 ranks the matching edge first
    assert all(a.score >= b.score for a, b in zip(kept["Q1"], kept["Q1"][1:]))


def test_first_cut_and_exact_expansion_agree_on_a_small_graph():
    vp, _, _ = make()
    q = vp.scorer.embed(["place of birth"])[0]
    a = vp.scorer.score_edges(["Q2"], q, expansion="exact")
    b = vp.scorer.score_edges(["Q2"], q, expansion="firstcut")
    assert [e.tail_id for e in a["Q2"]] == [e.tail_id for e in b["Q2"]]


def test_paths_do_not_revisit_entities():
    facts = FACTS + [("Q2", "P84", "Q1")]                       # a cycle back to the start
    vp, _, _ = make(facts=facts)
    from kgqa.methods.vispath.records import ReasoningPath

    p0 = ReasoningPath("Q1", ENTITIES["Q1"])
    p1 = vp.scorer.expand_frontier([p0], "architect", vp.scorer.embed(["architect"])[0], 1)
    p2 = vp.scorer.expand_frontier([p for p in p1 if p.end_id == "Q2"], "architect", vp.scorer.embed(["architect"])[0], 2)
    assert all(p.end_id != "Q1" for p in p2)


def test_ablation_no_visual_intent_matches_edges_against_the_question():
    vp, _, m = make(no_visual_intent=True)
    run = vp.run(Q2HOP, IMAGE)
    assert all(h.intent == Q2HOP for h in run.hops)
    assert not any(k == "HopIntent" for k, _ in m.prompts)


def test_intent_fallback_uses_question_and_sketch_step():
    vp, _, _ = make(base_scripts(HopIntent=None), intent_fallback="question")
    run = vp.run(Q2HOP, IMAGE)
    assert run.hops[0].intent.startswith("architect ") and run.hops[1].intent.startswith("place of birth ")
    assert run.answer_id == "Q5"


# --------------------------------------------------------------------------- IV-C
def test_chain_scores_follow_eq8_and_llm_selection_is_capped_at_M3_in_sigma_order():
    vp, _, _ = make(base_scripts(ChainSelection={"selected": [3, 1, 2, 99]}), M3=2)
    from kgqa.methods.vispath.records import HopRecord, ReasoningPath, VisPathRun

    p0 = ReasoningPath("Q1", ENTITIES["Q1"])
    cand = vp.scorer.expand_frontier([p0], "architect", vp.scorer.embed(["architect"])[0], 1)
    chain = vp.scorer.chain_scores(cand, Q2HOP, ["architect", "place of birth"], "architect")
    assert chain[0].edges[-1].relation_id == "P84"
    assert all(a.sigma >= b.sigma for a, b in zip(chain, chain[1:]))
    kept = vp.examine_chains(Q2HOP, ["architect"], chain, HopRecord(1, "architect"), VisPathRun(Q2HOP))
    assert kept == chain[:2]                                    # 99 ignored, ≤ M3, by σ


def test_chain_examination_fallback_keeps_M3_fallback_paths_when_no_llm_examined_them():
    from kgqa.methods.vispath.records import HopRecord, ReasoningPath, VisPathRun

    for opts, kept_n in (({"M3": 1, "M3_fallback": 0}, 1), ({"M3": 1, "M3_fallback": 3}, 3)):
        vp, _, _ = make(base_scripts(ChainSelection={"selected": []}), **opts)
        p0 = ReasoningPath("Q1", ENTITIES["Q1"])
        cand = vp.scorer.expand_frontier([p0], "architect", vp.scorer.embed(["architect"])[0], 1)
        chain = vp.scorer.chain_scores(cand, Q2HOP, ["architect"], "architect")
        assert len(chain) >= 3
        run = VisPathRun(Q2HOP)
        kept = vp.examine_chains(Q2HOP, ["architect"], chain, HopRecord(1, "architect"), run)
        assert kept == chain[:kept_n] and any("top chain scores" in f.message for f in run.fallbacks)
    # an LLM that does select keeps at most M3, whatever M3_fallback says
    vp, _, _ = make(base_scripts(ChainSelection={"selected": [1, 2, 3]}), M3=1, M3_fallback=3)
    kept = vp.examine_chains(Q2HOP, ["architect"], chain, HopRecord(1, "architect"), VisPathRun(Q2HOP))
    assert kept == chain[:1]


def test_empty_llm_chain_selection_falls_back_to_top_chain_scores():
    vp, _, _ = make(base_scripts(ChainSelection={"selected": []}))
    run = vp.run(Q2HOP, IMAGE)
    assert any("top chain scores" in f.message for f in run.fallbacks)
    assert run.hops[0].retained[0].edges[-1].relation_id == "P84"
    assert len(run.hops[0].retained) <= 3


def test_ablation_no_chain_pruning_keeps_paths_by_edge_score_and_skips_the_llm():
    vp, _, m = make(no_chain_pruning=True)
    run = vp.run(Q2HOP, IMAGE)
    assert not any(k == "ChainSelection" for k, _ in m.prompts)
    assert run.answer_id == "Q5"


# --------------------------------------------------------------------------- IV-D stop rule and fallbacks
def test_answerable_before_predicted_depth_does_not_stop_the_search():
    s = base_scripts(Answerability=[{"answerable": True, "answer": "Le Corbusier"},
                                    {"answerable": True, "answer": "La Chaux-de-Fonds"}])
    vp, _, _ = make(s)
    run = vp.run(Q2HOP, IMAGE)
    assert len(run.hops) == 2 and run.stop_reason.startswith("stop rule at hop 2")


def test_earlier_answerable_hop_is_kept_as_fallback():
    s = base_scripts(QuestionSketch={"sketch": ["a", "b", "c"], "depth": 3},
                     Answerability=[{"answerable": False, "answer": ""},
                                    {"answerable": True, "answer": "La Chaux-de-Fonds"},
                                    {"answerable": False, "answer": ""}],
                     FinalAnswer=None)
    vp, _, _ = make(s)
    run = vp.run(Q2HOP, IMAGE)
    assert len(run.hops) == 3                                   # searched on after hop 2 (i < D̂)
    assert run.stop_reason.startswith("fallback: answerable at hop 2")
    assert run.answer == "La Chaux-de-Fonds" and run.answer_id == "Q5"   # A_2 when the final call fails
    assert run.selected_paths == run.hops[1].retained


def test_predicted_depth_is_capped_by_Dmax():
    s = base_scripts(QuestionSketch={"sketch": ["a"], "depth": 7})
    vp, _, _ = make(s, Dmax=2)
    run = vp.run(Q2HOP, IMAGE)
    assert run.depth_hat == 2 and len(run.hops) <= 2


def test_answerable_with_empty_answer_counts_as_not_answerable():
    s = base_scripts(Answerability=[{"answerable": True, "answer": ""}] * 3, FinalAnswer=None)
    vp, _, _ = make(s)
    run = vp.run(Q2HOP, IMAGE)
    assert all(h.answerable is False for h in run.hops)
    assert run.stop_reason.startswith("terminal selection")


def test_ablation_no_evidence_check_runs_the_full_depth_budget():
    vp, _, m = make(no_evidence_check=True)
    run = vp.run(Q2HOP, IMAGE)
    assert len(run.hops) == 3 and not any(k == "Answerability" for k, _ in m.prompts)


def test_terminal_selection_prefers_predicted_depth_and_demotes_inconsistent_candidates():
    # no hop is ever judged answerable; the LLM gives no valid JSON for anything after the sketch
    s = base_scripts(Answerability=None, FinalAnswer=None, EvidenceStatement=None, ChainSelection=None,
                     CandidateCheck=None)
    vp, _, _ = make(s)
    run = vp.run(Q2HOP, IMAGE)
    assert run.stop_reason.startswith("terminal selection") and run.sufficient is False
    assert run.answer_id == "Q5"                               # 2-hop endpoint along architect → birthplace
    # now the image check says La Chaux-de-Fonds is inconsistent: it is demoted below verified candidates
    s["CandidateCheck"] = lambda prompt: {"consistent": "La Chaux-de-Fonds" not in prompt}
    vp, _, _ = make(s, images={"Q5": ["/x/q5.jpg"], "Q6": ["/x/q6.jpg"], "Q10": ["/x/q10.jpg"]})
    run = vp.run(Q2HOP, IMAGE)
    assert run.answer_id != "Q5"


def test_no_start_entity_answers_from_the_image_as_last_resort():
    from kgqa.methods.vispath.options import VisPathOptions

    enc = BagOfWordsEncoder()
    g = FakeGraph({}, RELATIONS, [], encoder=enc)
    m = ScriptedModel(base_scripts(FinalAnswer={"answer": "a rocket"}))
    # with abstention on (the default) an empty graph abstains; the paper's behaviour (abstain_below=0)
    # answers from the image as a last resort
    run = make_vispath(g, enc, m, m, VisPathOptions()).run("What is shown?", IMAGE)
    assert run.start is None and run.answer is None
    assert run.stop_reason == "abstained: no start entity in the graph"
    run = make_vispath(g, enc, m, m, VisPathOptions(abstain_below=0)).run("What is shown?", IMAGE)
    assert run.start is None and run.answer == "a rocket"
    assert run.stop_reason == "answered from the image alone"


def test_every_model_failing_still_yields_a_graph_answer():
    vp, _, _ = make({})                                         # every JSON call raises BadModelReply
    run = vp.run(Q2HOP, IMAGE)
    assert run.start is not None and run.answer is not None
    assert run.fallbacks and run.sufficient is False


def test_incomplete_kg_answer_reachable_another_way():
    # the direct fact "architect" is missing; the birthplace is still reached via another relation
    # The beam of M3 = 3 chains keeps the weaker "relative" edge alive at hop 1.
    facts = [f for f in FACTS if f != ("Q1", "P84", "Q2")] + [("Q1", "P1038", "Q2")]
    vp, _, _ = make(base_scripts(ChainSelection={"selected": [1, 2, 3]}), facts=facts)
    run = vp.run(Q2HOP, IMAGE)
    assert run.answer_id == "Q5"
    assert [e.relation_id for e in run.selected_paths[0].edges] == ["P1038", "P19"]


# --------------------------------------------------------------------------- options and prompts
@pytest.mark.parametrize("bad", [{"M1": 0}, {"M3": -1}, {"Dmax": 0}, {"Dmax": 9}, {"delta": -0.1},
                                 {"expansion": "fast"}, {"M1": "many"}])
def test_bad_options_are_refused_with_the_option_named(bad):
    from kgqa.methods.vispath.algorithm import VisPath
    from kgqa.core.method import parse_options

    with pytest.raises(InvalidInput, match=f"vispath option {list(bad)[0]}=") as e:
        parse_options(VisPath, bad)
    assert "\n" not in str(e.value)


def test_options_from_the_command_line_are_converted_and_unknown_keys_listed():
    from kgqa.methods.vispath.algorithm import VisPath
    from kgqa.core.method import parse_kv, parse_options

    opts = parse_options(VisPath, parse_kv(["M1=12", "no_visual_intent=true", "expansion=exact"]))
    assert (opts.M1, opts.no_visual_intent, opts.expansion) == (12, True, "exact")
    with pytest.raises(InvalidInput, match=r"vispath option\(s\) M4 unknown \(known: .*M1.*\)"):
        parse_options(VisPath, {"M4": "3"})
    with pytest.raises(InvalidInput, match="expected KEY=VALUE"):
        parse_kv(["M1"])


def test_every_prompt_asks_for_json_of_its_schema():
    cases = [
        (P.build_referring_expression("q?", has_image=True), P.ReferringExpression),
        (P.build_referring_expression("q?", has_image=False), P.ReferringExpression),
        (P.build_candidate_ranking("q", "e", "o", ["a", "b"]), P.CandidateRanking),
        (P.build_question_analysis("q"), P.QuestionSketch),
        (P.build_hop_intent("q", 1, ["a → r → b"]), P.HopIntent),
        (P.build_chain_examination("q", ["r"], ["a → r → b"], 3), P.ChainSelection),
        (P.build_evidence_statement("q", ["a → r → b"]), P.EvidenceStatement),
        (P.build_answerability("q", "z"), P.Answerability),
        (P.build_final_answer("q", "z"), P.FinalAnswer),
        (P.build_candidate_check("q", "c", "p"), P.CandidateCheck),
        (P.build_image_answer("q"), P.FinalAnswer),
    ]
    for text, schema in cases:
        assert "Reply with JSON" in text
        for f in schema.model_fields:
            assert f'"{f}"' in text, (schema.__name__, f)


def test_pipeline_refuses_unknown_method_and_options():
    from kgqa.core.config import Settings
    from kgqa.app.pipeline import Pipeline

    with pytest.raises(InvalidInput, match="unknown"):
        Pipeline(Settings(), method="nope")
    with pytest.raises(InvalidInput, match="M4"):
        Pipeline(Settings(), graph=object(), models=object(), M4=3)
    with pytest.raises(InvalidInput, match="no_magic"):
        Pipeline(Settings(), graph=object(), models=object(), ablations=["no_magic"])


def test_browser_cypher_is_one_line_with_the_id_written_in():
    from kgqa.core.trace import browser_cypher

    line = browser_cypher("0123456789abcdef")
    assert "\n" not in line and "'0123456789abcdef'" in line and "$id" not in line
    with pytest.raises(InvalidInput):
        browser_cypher("x' OR 1=1")


# --------------------------------------------------------------------------- weak-model guards
@pytest.mark.parametrize("echo", ["<entity name>", "...", "  ", "<relation>", "none"])
def test_template_placeholder_echoes_are_refused_by_the_schemas(echo):
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        P.FinalAnswer(answer=echo)
    with pytest.raises(ValidationError):
        P.QuestionSketch(sketch=["architect", echo], depth=2)
    assert P.Answerability(answerable=True, answer=echo).candidate == ""
    assert P.Answerability(answerable=True, answer="yes").candidate == ""
    assert P.FinalAnswer(answer=" Le Corbusier ").answer == "Le Corbusier"


class ChoosingModel(ScriptedModel):
    def __init__(self, scripts, prefer):
        super().__init__(scripts)
        self.prefer = prefer
        self.choices: list[list[str]] = []

    def choose(self, prompt, options):
        self.choices.append(list(options))
        return [0.0 if self.prefer in o else -5.0 for o in options]


def test_free_text_final_answer_off_the_paths_falls_back_to_a_retained_endpoint():
    from kgqa.methods.vispath.options import VisPathOptions

    s = base_scripts(FinalAnswer={"answer": "Sounds like a reasonable answer!"},
                     Answerability=[{"answerable": False, "answer": ""}, {"answerable": True, "answer": "his home town"}],
                     ChainSelection={"selected": [1, 2, 3]})
    enc = BagOfWordsEncoder()
    g = FakeGraph(ENTITIES, RELATIONS, FACTS, encoder=enc)
    m = ChoosingModel(s, prefer="La Chaux-de-Fonds")
    run = make_vispath(g, enc, m, m, VisPathOptions()).run(Q2HOP, IMAGE)
    assert run.answer == "La Chaux-de-Fonds" and run.answer_id == "Q5"
    assert m.choices and all(len(c) >= 2 for c in m.choices)             # chose among retained endpoints
    assert any("likeliest retained endpoint" in f.message for f in run.fallbacks)


def test_final_answer_naming_a_path_entity_is_kept():
    vp, _, _ = make(base_scripts(FinalAnswer={"answer": "la chaux-de-fonds"}))
    run = vp.run(Q2HOP, IMAGE)
    assert run.answer == "la chaux-de-fonds" and run.answer_id == "Q5"
    assert not any("final answer" in f.message for f in run.fallbacks)


def test_copied_sketch_example_is_refused_and_depth_preference_dropped():
    s = base_scripts(QuestionSketch={"sketch": ["architect", "place of birth"], "depth": 2},
                     Answerability=None, FinalAnswer=None)
    vp, _, _ = make(s, depth_fallback="dmax")
    run = vp.run("Which country is the museum shown in the image in?", IMAGE)
    assert run.sketch == ["Which country is the museum shown in the image in?"] and run.depth_hat == 3
    assert not run.depth_predicted and any("example was copied" in f.message for f in run.fallbacks)
    # the example is a real sketch for the question it was written for
    vp, _, _ = make(base_scripts(QuestionSketch={"sketch": ["architect", "place of birth"], "depth": 2}))
    run = vp.run(Q2HOP, IMAGE)
    assert run.depth_predicted and run.depth_hat == 2


def test_terminal_selection_ranks_each_endpoint_by_its_best_path():
    """An endpoint first met on a 1-hop path still wins when a D̂-long path reaches it with a higher σ."""
    from kgqa.core.result import Step
    from kgqa.methods.vispath.records import HopRecord, ReasoningPath, StartCandidate, VisPathRun

    vp, _, _ = make()
    start = ReasoningPath("Q1", ENTITIES["Q1"])

    def path(*hops, sigma):
        p = start
        for h, r, t in hops:
            p = p.extend(Step(h, ENTITIES[h], r, RELATIONS.get(r, r), t, ENTITIES[t], len(p.edges) + 1))
        p.sigma = sigma
        return p

    run = VisPathRun(question=Q2HOP, start=StartCandidate("Q1", ENTITIES["Q1"]), depth_hat=2)
    run.depth_predicted = True
    run.hops = [
        HopRecord(1, "", retained=[path(("Q1", "P131", "Q5"), sigma=0.9), path(("Q1", "P84", "Q2"), sigma=0.5)]),
        HopRecord(2, "", retained=[path(("Q1", "P84", "Q2"), ("Q2", "P27", "Q6"), sigma=0.80),
                                   path(("Q1", "P84", "Q2"), ("Q2", "P19", "Q5"), sigma=0.85)]),
    ]
    vp.terminal_selection(Q2HOP, None, run)
    assert run.answer_id == "Q5"
    assert [e.relation_id for e in run.selected_paths[0].edges] == ["P84", "P19"]



def test_terminal_selection_says_which_answers_tie_with_the_one_given():
    """Two endpoints reached by paths of one score: the first retained is answered, the other is named as
    tied (kgqa ask prints it); a lower-scored endpoint is not; a clear winner has no tie."""
    from kgqa.core.result import Step
    from kgqa.methods.vispath.records import HopRecord, ReasoningPath, StartCandidate, VisPathRun
    from kgqa.methods.vispath.render import ask_lines, to_answer

    vp, _, _ = make()
    start = ReasoningPath("Q1", ENTITIES["Q1"])

    def path(*hops, sigma):
        p = start
        for h, r, t in hops:
            p = p.extend(Step(h, ENTITIES[h], r, RELATIONS.get(r, r), t, ENTITIES[t], len(p.edges) + 1, 0.5))
        p.sigma = sigma
        return p

    def run_with(s5, s6, s2):
        run = VisPathRun(question=Q2HOP, start=StartCandidate("Q1", ENTITIES["Q1"]), depth_hat=2)
        run.depth_predicted = True
        run.hops = [HopRecord(1, "", retained=[path(("Q1", "P84", "Q2"), sigma=s2)]),
                    HopRecord(2, "", retained=[path(("Q1", "P84", "Q2"), ("Q2", "P19", "Q5"), sigma=s5),
                                               path(("Q1", "P84", "Q2"), ("Q2", "P27", "Q6"), sigma=s6)])]
        vp.terminal_selection(Q2HOP, None, run)
        return run

    run = run_with(0.8, 0.8, 0.8)
    assert run.answer_id == "Q5" and run.tied_with == [("Q6", ENTITIES["Q6"])]   # Q2 is one hop short of D̂
    lines = ask_lines(to_answer(run, "vispath"))
    assert any(ln.startswith("tie: 1 other answer(s) score exactly as") and "[Q6]" in ln for ln in lines), lines
    assert to_answer(run, "vispath").details["tied_with"] == [{"id": "Q6", "name": ENTITIES["Q6"]}]
    run = run_with(0.8, 0.79, 0.8)
    assert run.answer_id == "Q5" and run.tied_with == []
    assert not any(ln.startswith("tie:") for ln in ask_lines(to_answer(run, "vispath")))


class LikelihoodModel(ScriptedModel):
    """Scores options by a fixed preference list (earlier = likelier); records what it was asked."""

    def __init__(self, scripts, prefer):
        super().__init__(scripts)
        self.prefer = prefer
        self.asked: list[tuple[str, list[str], bool]] = []

    def choose(self, prompt, options, *, per_token=False):
        self.asked.append((prompt, list(options), per_token))

        def score(o):
            hits = [i for i, w in enumerate(self.prefer) if w in o]
            return -float(hits[0]) if hits else -100.0
        return [score(o) for o in options]


def test_likelihood_selection_ranks_candidates_and_examines_chains_by_option_scores():
    from kgqa.methods.vispath.options import VisPathOptions

    # the JSON selections would pick the look-alike and chain 1 only; likelihood must not use them
    s = base_scripts(CandidateRanking={"ranked": ["Government Museum"]}, ChainSelection={"selected": [1]})
    enc = BagOfWordsEncoder()
    g = FakeGraph(ENTITIES, RELATIONS, FACTS, encoder=enc)
    m = LikelihoodModel(s, prefer=["Government Museum, Chandigarh", "place of birth", "architect"])
    run = make_vispath(g, enc, m, m, VisPathOptions(selection="likelihood", no_graph_validation=True)).run(Q2HOP, IMAGE)
    assert run.start.id == "Q1"                                    # the option scored likeliest
    assert not any(k in ("CandidateRanking", "ChainSelection") for k, _ in m.prompts)
    assert all(per_token for _, _, per_token in m.asked)           # options of different lengths compare
    assert m.asked[0][1][0].startswith(" ") and "Entity:" in m.asked[0][0]
    hop2 = run.hops[1]
    assert len(hop2.retained) <= 3 and hop2.llm_selected
    # P(2) keeps the chains the LLM found likeliest, in σ order
    assert any([e.relation_id for e in p.edges] == ["P84", "P19"] for p in hop2.retained)
    sig = [p.sigma for p in hop2.retained]
    assert sig == sorted(sig, reverse=True)


def test_selection_option_is_validated():
    from kgqa.methods.vispath.options import VisPathOptions
    from kgqa.core.errors import InvalidInput

    from kgqa.methods.vispath.algorithm import VisPath
    from kgqa.core.method import parse_options

    with pytest.raises(InvalidInput, match="selection"):
        parse_options(VisPath, {"selection": "vote"})


def test_a_step_without_an_edge_score_renders_as_none():
    """``to_answer`` rounds each step's score; a step a method left unscored stays None (it raised)."""
    from kgqa.core.result import Step
    from kgqa.methods.vispath.records import ReasoningPath, StartCandidate, VisPathRun
    from kgqa.methods.vispath.render import to_answer

    p = ReasoningPath("Q1", ENTITIES["Q1"]).extend(Step("Q1", ENTITIES["Q1"], "P84", "architect", "Q2",
                                                        ENTITIES["Q2"], 1))
    run = VisPathRun(question=Q2HOP, start=StartCandidate("Q1", ENTITIES["Q1"]), selected_paths=[p])
    assert to_answer(run, "vispath").evidence[0].steps[0].score is None
