"""The chain reader (kgqa.models.heads.chain_reader, kgqa.training.chain_reader, kgqa.core.walk_questions) and how
VisPath and GraSP use it: phrasing, labelling, the checkpoint round trip, and the fallbacks when it is missing
or was made for another KG. The reader here is the real all-MiniLM-L6-v2 cross-encoder, untrained where the
test is about plumbing; the graphs are the fakes of the VisPath and GraSP unit tests."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from kgqa.core.errors import InvalidInput
from kgqa.core.walk_questions import STEP_OPENERS, Phraser, _needs_be, _split_verb
from kgqa.training.chain_reader import PREFIX_LABEL, label_question

torch = pytest.importorskip("torch")


# ----------------------------------------------------------------------------------------- phrasing
def test_verb_forms_are_told_from_noun_forms():
    assert _split_verb("born in") == ("born", "in")
    assert _split_verb("designed by") == ("designed", "by")
    assert _split_verb("place of birth") is None and _split_verb("architect") is None
    assert _needs_be("born") and _needs_be("located") and not _needs_be("shares border")


def test_a_question_names_every_relation_of_its_walk_and_never_a_preposition_twice():
    names = {"P1": "creator", "P2": "place of birth", "P3": "country"}
    aliases = {"P2": ["born in", "birthplace"], "P1": ["painted by"]}
    walk = [{"relation_id": "P1", "tail_id": "Q2"}, {"relation_id": "P2", "tail_id": "Q3"},
            {"relation_id": "P3", "tail_id": "Q4"}]
    forms = {"P1": ("creator", "painted"), "P2": ("place of birth", "born", "birthplace"), "P3": ("country",)}
    for seed in range(40):
        ph = Phraser(random.Random(seed), names, aliases, {"Q2": "painter"})
        topic, is_name = ph.topic("Q1", "Mona Lisa")
        q = ph.question(topic, is_name, walk)
        assert q[0].isupper() and q.rstrip()[-1] in "?."
        for rid, fs in forms.items():
            assert any(f in q for f in fs), (rid, q)
        assert " in of " not in q and " by of " not in q and "  " not in q, q


def test_a_regular_passive_is_also_phrased_in_the_active_voice():
    """"owned by" → "the company that owned X" inside, "Who owned X?" fronted; "born in" never ("that born")."""
    names = {"P1": "owned by", "P2": "owned by", "P3": "place of birth"}
    aliases = {"P3": ["born in"]}
    walk = [{"relation_id": "P1", "tail_id": "Q2"}, {"relation_id": "P2", "tail_id": "Q3"}]
    qs = set()
    for seed in range(80):
        ph = Phraser(random.Random(seed), names, aliases, {"Q2": "company", "Q3": "trust"})
        qs.add(ph.question("this island", False, walk))
        qs.add(ph.question("this island", False, [{"relation_id": "P3", "tail_id": "Q2"}]))
    assert any("that owned this island" in q for q in qs) and any(q.startswith("Who owned ") for q in qs)
    assert any("owned by" in q for q in qs)                         # the passive stays one of the forms
    assert not any("that born" in q or "Who born" in q for q in qs)


def test_held_out_families_are_never_drawn_for_training_and_phrase_every_held_out_question():
    """Training phrasing (the default) never tells a walk step by step nor asks it as a statement with a gap; the
    held-out phrasing always does one of the two, and still names every relation of the walk."""
    names = {"P1": "creator", "P2": "place of birth", "P3": "country"}
    walk = [{"relation_id": "P1", "tail_id": "Q2"}, {"relation_id": "P2", "tail_id": "Q3"},
            {"relation_id": "P3", "tail_id": "Q4"}]
    types = {"Q2": "painter", "Q3": "city", "Q4": "country"}

    openers = {o.split(" ")[0] for o in STEP_OPENERS}

    def held_out_form(q: str) -> bool:           # a step-by-step opener, or a statement with a gap
        return (q.split(" ")[0] in openers or q.endswith((" is what?", " is called what?", " is it?"))
                or " is which " in q)
    for seed in range(60):
        train, held = (Phraser(random.Random(seed), names, {"P2": ["born in"]}, types, held_out=h) for h in (0, 1))
        qt = train.question(*train.topic("Q1", "Mona Lisa"), walk)
        qh = held.question(*held.topic("Q1", "Mona Lisa"), walk)
        assert not held_out_form(qt) and held_out_form(qh), (qt, qh)
        assert all(any(f in qh for f in fs) for fs in (("creator",), ("place of birth", "born"), ("country",))), qh


# ----------------------------------------------------------------------------------------- labels
def test_labels_gold_prefix_extension_and_siblings_and_leave_other_answers_out():
    nb = SimpleNamespace(chains={("A",): {}, ("A", "B"): {}, ("A", "B", "C"): {}, ("A", "D"): {}, ("D",): {},
                                 ("D", "B"): {}})
    lq = label_question("q", ("A", "B"), nb, {("D", "B")}, ["A", "B", "C", "D", "E"], {"B": ["E"]},
                        random.Random(0), negatives=6)
    lab = dict(lq.pairs)
    assert lab[("A", "B")] == 1.0 and lab[("A",)] == PREFIX_LABEL
    assert lab[("A", "B", "C")] == 0.0 and lab[("A", "D")] == 0.0        # extension, last-hop sibling
    assert ("A", "E") in lab and lab[("A", "E")] == 0.0                  # reversed direction (the inverse of B)
    assert ("D", "B") not in lab                                         # reaches the answer too: not wrong
    assert sum(1 for v in lab.values() if v == 0.0) <= 6 and len(lab) == len(lq.pairs)


# ----------------------------------------------------------------------------------------- checkpoint
class FakeKG:
    def __init__(self, names, aliases=None):
        self._rel = {rid: (n, None) for rid, n in names.items()}
        self._aliases = aliases or {}

    def relations(self):
        return self._rel

    def relation_aliases(self):
        return self._aliases


def _save_untrained(path, names):
    from kgqa.models.heads.chain_reader import catalogue_fingerprint, new_cross_encoder, save_chain_reader

    ce = new_cross_encoder(48, seed=0)
    save_chain_reader(ce, path, {"base": "all-MiniLM-L6-v2", "max_length": 48, "relations": sorted(names),
                           "catalogue": catalogue_fingerprint(names)})
    return ce


def test_checkpoint_round_trip_scores_as_saved_and_holds_only_what_training_changes(tmp_path):
    from kgqa.models.heads.chain_reader import ChainReader, load_chain_reader

    names = {"P19": "place of birth", "P17": "country"}
    ce = _save_untrained(tmp_path / "r.safetensors", list(names.values()))
    kg = FakeKG(names, {"P19": ["born in"]})
    r = load_chain_reader(tmp_path / "r.safetensors", kg)
    assert r.chain_text(["P19", "P17"]) == "place of birth (born in) → country"
    chains = [["P19"], ["P19", "P17"], ["P17"]]
    got = r.score("Where was Ada born?", chains)
    ce.model.half().float()                                  # what fp16 storage keeps
    ref = ChainReader(ce, {}, names, kg.relation_aliases()).score("Where was Ada born?", chains)
    assert np.allclose(got, ref, atol=2e-2), (got, ref)
    assert (tmp_path / "r.safetensors").stat().st_size < 30e6       # no word embeddings inside


def test_bi_encoder_round_trip_caches_chains_and_scores_as_saved(tmp_path):
    from kgqa.models.heads.chain_reader import ChainReader, load_chain_reader, new_bi_encoder, save_chain_reader

    names = {"P19": "place of birth", "P17": "country"}
    st = new_bi_encoder(0)
    save_chain_reader(st, tmp_path / "b.safetensors",
                      {"arch": "bi", "scale": 20.0, "relations": sorted(names.values())})
    r = load_chain_reader(tmp_path / "b.safetensors", FakeKG(names))
    chains = [["P19"], ["P19", "P17"]]
    got = r.score("Where was Ada born?", chains)
    st.half().float()
    ref = ChainReader(st, {"arch": "bi", "scale": 20.0}, names, {}).score("Where was Ada born?", chains)
    assert np.allclose(got, ref, atol=5e-2) and got[0] > got[1]      # MiniLM already reads "born"
    assert set(r._vec) == {"Where was Ada born?", "place of birth", "place of birth → country"}


def test_a_reader_made_for_another_kg_or_a_missing_one_is_one_line(tmp_path):
    from kgqa.models.heads.chain_reader import ReaderSlot, load_chain_reader

    _save_untrained(tmp_path / "r.safetensors", ["place of birth", "country", "architect"])
    with pytest.raises(InvalidInput, match=r"trained on another KG .*holds 1 of its 3 relations.*kgqa train paths"):
        load_chain_reader(tmp_path / "r.safetensors", FakeKG({"P1": "country", "P2": "currency"}))
    slot = ReaderSlot(FakeKG({"P1": "country"}), None, str(tmp_path / "none.safetensors"))
    assert slot.get() is None and "no chain-reader checkpoint" in slot.error and "\n" not in slot.error
    (tmp_path / "junk.safetensors").write_bytes(b"junk")
    slot = ReaderSlot(FakeKG({"P1": "country"}), None, str(tmp_path / "junk.safetensors"))
    assert slot.get() is None and "junk.safetensors" in slot.error and "\n" not in slot.error


# ----------------------------------------------------------------------------------------- VisPath
def test_vispath_graph_only_with_a_reader_keeps_its_best_and_the_rules_best_and_searches_4_hops(tmp_path):
    from tests.fakes.vispath import Q2HOP, RELATIONS, make

    _save_untrained(tmp_path / "r.safetensors", list(RELATIONS.values()))
    v, _, _ = make(llm_steps="none", reader_checkpoint=str(tmp_path / "r.safetensors"), reader_beam=2,
                   M3_fallback=1, reader_rules_weight=0)
    run = v.run(Q2HOP, entity_id="Q1")
    assert run.reader and run.dmax == 4 and not [f for f in run.fallbacks if f.code == "checkpoint"]
    reader = v.reader.get()
    assert run.hops[0].retained and run.hops[-1].candidates == 0        # the fake graph ends before hop 4
    for h in run.hops:
        assert len(h.retained) <= 3                          # reader_beam + M3_fallback
        s = reader.score(Q2HOP, [[e.relation_id for e in p.edges] for p in h.retained])
        assert np.allclose([p.sigma for p in h.retained], s, atol=1e-5)
    ends = [p.sigma for h in run.hops for p in h.retained if p.end_id == run.answer_id]
    assert ends and max(ends) == max(p.sigma for h in run.hops for p in h.retained)   # the best σ answers


def test_vispath_with_a_reader_for_another_kg_falls_back_to_the_rules_once(tmp_path):
    from tests.fakes.vispath import Q2HOP, make

    _save_untrained(tmp_path / "r.safetensors", ["currency", "official language", "head of state"])
    v, _, _ = make(llm_steps="none", reader_checkpoint=str(tmp_path / "r.safetensors"))
    rules, _, _ = make(llm_steps="none", path_scorer="rules")
    run, ref = v.run(Q2HOP, entity_id="Q1"), rules.run(Q2HOP, entity_id="Q1")
    fb = [f for f in run.fallbacks if f.code == "checkpoint"]
    assert len(fb) == 1 and "trained on another KG" in fb[0].message and "the rules take over" in fb[0].message
    assert not run.reader and run.dmax == 3 and run.answer == ref.answer


# ----------------------------------------------------------------------------------------- GraSP
def test_grasp_ranks_nodes_by_the_best_forward_chain_reaching_them():
    from kgqa.methods.grasp.reader import forward_chains, reader_ranking
    from kgqa.methods.grasp.subgraph import Fact, Subgraph

    sub = Subgraph("T", {"T": "topic", "A": "a", "B": "b", "C": "c", "D": "d"},
                   [Fact("T", "P1", "A", 1, 0.0), Fact("A", "P2", "B", 2, 0.0), Fact("T", "P3", "C", 1, 0.0),
                    Fact("D", "P1", "T", 1, 0.0)])
    ch = forward_chains(sub)
    assert ch == {"A": [("P1",)], "B": [("P1", "P2")], "C": [("P3",)]}      # D only points at the topic

    class Stub:
        def score(self, q, chains):
            return np.array([{("P1",): -1.0, ("P1", "P2"): 3.0, ("P3",): 0.0}[c] for c in chains])

    ranked = reader_ranking(Stub(), "q", sub, [("D", 0.5), ("A", 0.3), ("C", 0.1), ("B", 0.1)])
    assert [n for n, _ in ranked] == ["B", "C", "A", "D"] and ranked[-1][1] == 0.0

    # with the head weighed in (score = logit + w·ln p), a node the head finds 5× likelier overtakes a
    # 1-logit lead of the reader at w = 1 (ln 5 ≈ 1.6), not at w = 0.25; unreached nodes stay last
    head = [("D", 0.5), ("A", 0.5), ("C", 0.1), ("B", 0.1)]
    assert [n for n, _ in reader_ranking(Stub(), "q", sub, head, head_weight=0.25)] == ["B", "C", "A", "D"]
    assert [n for n, _ in reader_ranking(Stub(), "q", sub, head, head_weight=1.0)] == ["B", "A", "C", "D"]


def test_grasp_with_the_answer_kind_does_not_answer_a_language_for_a_currency():
    """Two nodes one chain reaches alike (the reader's chain score cannot tell them apart) and a head that prefers
    the language: with reader_kind_weight the real reader reads "currency" against each node's class and the
    currency ranks first; without it the language does."""
    from kgqa.core.kg import KG
    from kgqa.methods.grasp.reader import reader_ranking
    from kgqa.methods.grasp.subgraph import Fact, Subgraph
    from kgqa.models.heads.chain_reader import ChainReader, _torch_reader, read_meta
    from tests.fakes.vispath import BagOfWordsEncoder, FakeGraph

    names = {"T": "Freedonia", "L": "Freedonian", "M": "Freedonian mark", "LA": "language", "CU": "currency"}
    rel = {"P9": "related to", "P31": "instance of"}
    g = FakeGraph(names, rel, [("T", "P9", "L"), ("T", "P9", "M"), ("L", "P31", "LA"), ("M", "P31", "CU")],
                  encoder=BagOfWordsEncoder())
    ck = Path(__file__).resolve().parents[2] / "data" / "demo" / "paths" / "chain-reader.safetensors"
    meta = read_meta(ck)
    reader = ChainReader(_torch_reader(ck, meta, True), meta, rel, {})
    sub = Subgraph("T", {k: names[k] for k in ("T", "L", "M")}, [Fact("T", "P9", "L", 1, 0.0), Fact("T", "P9", "M", 1, 0.0)])
    head = [("L", 0.6), ("M", 0.4)]
    q = "What currency is used in this country?"
    assert reader_ranking(reader, q, sub, head)[0][0] == "L"
    assert reader_ranking(reader, q, sub, head, kg=KG(g, BagOfWordsEncoder()), kind_weight=1.0)[0][0] == "M"


def test_grasp_answers_a_class_only_when_the_question_walks_the_type_step():
    """"Which sovereign state borders …": the class *sovereign state* (France -instance of-> it) is no answer when the
    reader reads the chain to it no better than the chain stopped before it, even where another term (here the
    head's probability; on a KG, the kind) lifts it to the top; "What is that neighbour instance of?" (the chain
    with the type step reads better) answers the class."""
    from kgqa.methods.grasp.reader import class_nodes, reader_ranking
    from kgqa.methods.grasp.subgraph import Fact, Subgraph

    sub = Subgraph("T", {"T": "Ireland", "F": "France", "S": "sovereign state", "B": "Belgium"},
                   [Fact("T", "P47", "F", 1, 0.0), Fact("F", "P31", "S", 2, 0.0), Fact("F", "P47", "B", 2, 0.0)])
    assert class_nodes(sub, {"S": ("P47", "P31"), "F": ("P47",), "B": ("P47", "P47")}, {"P31"}) == {"S": ("P47",)}
    head = [("S", 0.9), ("F", 0.05), ("B", 0.05)]

    def reader(logits):
        class Stub:
            def score(self, q, chains):
                return np.array([logits[c] for c in chains])
        return Stub()

    asks_state = reader({("P47",): 3.0, ("P47", "P31"): 2.5, ("P47", "P47"): 1.0})
    asks_class = reader({("P47",): 1.0, ("P47", "P31"): 3.0, ("P47", "P47"): 0.0})
    q = "Which sovereign state borders this one?"
    assert [n for n, _ in reader_ranking(asks_state, q, sub, head, head_weight=1.0)][0] == "S"   # no type relations
    assert [n for n, _ in reader_ranking(asks_state, q, sub, head, head_weight=1.0, type_relations={"P31"})] \
        == ["F", "B", "S"]
    assert [n for n, _ in reader_ranking(asks_class, "What is that neighbour instance of?", sub, head,
                                         head_weight=1.0, type_relations={"P31"})][0] == "S"


def test_grasp_extraction_takes_first_the_facts_that_continue_the_best_chain_from_the_topic():
    """One hop's candidates in the paper's order (relation + name score): the facts walked forward from a node a
    chain reached come first, the chain the reader scores best first; a fact against its direction, or from a
    node no forward chain reached, keeps its place after them."""
    from kgqa.methods.grasp.reader import chain_order
    from kgqa.methods.grasp.subgraph import Fact

    cands = [(Fact("X", "P5", "A", 2, 0.9), "X", "x"),          # walked against its direction: A <-P5- X
             (Fact("A", "P2", "B", 2, 0.8), "B", "b"),
             (Fact("U", "P2", "V", 2, 0.7), "V", "v"),          # U: reached by no forward chain
             (Fact("A", "P3", "C", 2, 0.1), "C", "c")]
    seen = []

    class Stub:
        def score(self, q, chains):
            seen.extend(chains)
            return np.array([{("P1", "P2"): 1.0, ("P1", "P3"): 4.0}[c] for c in chains])

    out = chain_order(Stub(), "q", cands, {"T": (), "A": ("P1",)})
    assert [c[1] for c in out] == ["C", "B", "X", "V"]
    assert sorted(seen) == [("P1", "P2"), ("P1", "P3")]
    assert chain_order(Stub(), "q", cands[:1], {"T": ()}) == cands[:1]        # no chain to read: unchanged


def test_the_kind_weight_fitted_for_a_reader_is_read_only_for_that_reader(tmp_path):
    """`kgqa train terminal` writes weights beside a reader; GraSP's auto kind weight is their kind / reader
    ratio, and nothing when the file is missing, for another reader, or without a positive reader weight."""
    import json

    from kgqa.models.heads.chain_reader import fitted_weight_ratio, terminal_weights_path

    ck = tmp_path / "r.safetensors"
    ck.write_bytes(b"reader bytes")
    assert fitted_weight_ratio(ck, "kind") is None
    sha = hashlib.sha256(b"reader bytes").hexdigest()
    body = {"features": ["reader", "rules", "kind"], "weights": [2.0, 1.0, 0.5], "reader_sha256": sha}
    terminal_weights_path(ck).write_text(json.dumps(body))
    assert fitted_weight_ratio(ck, "kind") == 0.25
    terminal_weights_path(ck).write_text(json.dumps({**body, "reader_sha256": "0" * 64}))
    assert fitted_weight_ratio(ck, "kind") is None
    terminal_weights_path(ck).write_text(json.dumps({**body, "weights": [0.0, 1.0, 0.5]}))
    assert fitted_weight_ratio(ck, "kind") is None
