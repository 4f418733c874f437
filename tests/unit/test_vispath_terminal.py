"""VisPath's terminal weights (kgqa.methods.vispath.terminal): the fit learns which feature finds the answer,
stays at the fixed sum when the data give no reason to move, and a file is used only with its own reader."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from kgqa.core.errors import InvalidInput
from kgqa.methods.vispath.terminal import (FEATURES, TerminalSlot, TerminalWeights, chain_ends, feature_rows, fit,
                                           fixed_weights, load_weights, sha256, split_offset, top1)


def _path(n, reader, rules):
    return SimpleNamespace(edges=[None] * n, reader_score=reader, rules_sigma=rules)


def test_the_fixed_weights_rank_as_the_fixed_sum():
    paths = [_path(1, 10.0, 0.5), _path(2, 4.0, 0.8), _path(3, 18.0, 0.1)]
    typing = {id(paths[1]): 1.0}
    X = feature_rows(paths, typing, (2, 3), 32.0)
    fixed = [p.reader_score + 32.0 * p.rules_sigma + 1.0 * typing.get(id(p), 0.0) for p in paths]
    assert np.allclose(X @ fixed_weights(1.0) * 20.0, fixed)
    assert X[:, 3].tolist() == [1.0, 0.0, 0.0]               # one hop short of the sketch's range 2–3


def _groups(rng, n, informative):
    """n questions of 6 candidates; the gold one leads on feature ``informative`` and trails on the reader."""
    out = []
    for _ in range(n):
        X = rng.normal(0, 0.3, size=(6, len(FEATURES)))
        g = rng.integers(6)
        X[g, informative] += 1.5
        X[g, 0] -= 0.6
        y = np.zeros(6)
        y[g] = 1
        out.append((X, y))
    return out


def test_fit_learns_the_feature_that_finds_the_answer_on_questions_it_did_not_see():
    rng = np.random.default_rng(0)
    train, test = _groups(rng, 120, FEATURES.index("depth_gap")), _groups(rng, 120, FEATURES.index("depth_gap"))
    w, rep = fit(train)
    assert top1(test, w) > top1(test, fixed_weights(1.0)) + 0.3
    assert rep["learned_top1"] > rep["fixed_top1"]


def test_fit_keeps_the_fixed_sum_when_it_already_finds_every_answer():
    rng = np.random.default_rng(1)
    groups = _groups(rng, 60, FEATURES.index("reader"))
    for X, y in groups:                                            # the reader alone already decides
        X[y == 1, 0] += 3.0
    assert top1(groups, fixed_weights(1.0)) == 1.0
    w, rep = fit(groups)
    assert rep["l2"] == 1.0 and top1(groups, w) == 1.0 and np.abs(w - fixed_weights(1.0)).max() < 0.5


def test_fit_needs_enough_questions_that_reached_their_answer():
    with pytest.raises(InvalidInput, match="at least 10"):
        fit([(np.zeros((3, len(FEATURES))), np.zeros(3))] * 50)


def test_weights_are_used_only_with_the_reader_they_were_fitted_for(tmp_path):
    reader = tmp_path / "r.safetensors"
    reader.write_bytes(b"reader one")
    f = TerminalWeights(np.arange(len(FEATURES), dtype=float), sha256(reader), {"questions": 3}).save(
        tmp_path / "r.terminal.json")
    assert load_weights(f, reader).weights.tolist() == list(range(len(FEATURES)))
    reader.write_bytes(b"reader two")
    with pytest.raises(InvalidInput, match="another chain reader"):
        load_weights(f, reader)
    body = json.loads(f.read_text())
    body["weights"] = body["weights"][:3]
    f.write_text(json.dumps(body))
    with pytest.raises(InvalidInput, match=f"{len(FEATURES)} finite numbers"):
        load_weights(f, None)


def test_the_slot_is_silent_without_a_file_and_one_fallback_line_with_a_bad_one(tmp_path):
    falls = []
    run = SimpleNamespace(fell_back=lambda msg, code: falls.append((msg, code)))
    assert TerminalSlot(tmp_path / "r.safetensors").get(run) is None and not falls
    (tmp_path / "bad.json").write_text("{")
    assert TerminalSlot(tmp_path / "r.safetensors", str(tmp_path / "bad.json")).get(run) is None
    assert len(falls) == 1 and "unreadable terminal weights" in falls[0][0] and falls[0][1] == "checkpoint"


def test_terminal_weights_fixed_ignores_weights_fitted_for_the_reader(tmp_path):
    """``-o terminal_weights=fixed`` (``kgqa train paths``' check): the fixed sum even beside fitted weights."""
    ck = tmp_path / "r.safetensors"
    ck.write_bytes(b"reader")
    TerminalWeights(fixed_weights(1.0), sha256(ck)).save(tmp_path / "r.terminal.json")
    falls = []
    run = SimpleNamespace(fell_back=lambda msg, code: falls.append((msg, code)))
    assert TerminalSlot(ck).get(run) is not None
    assert TerminalSlot(ck, "fixed").get(run) is None and not falls


def _chain(relations, end, reader):
    edges = tuple(SimpleNamespace(relation_id=r) for r in relations)
    return SimpleNamespace(edges=edges, end_id=end, reader_score=reader, rules_sigma=0.0)


def test_chain_ends_counts_the_entities_one_relation_chain_reaches():
    paths = [_chain(["P1", "P1"], "Qgold", 16.2)] + [_chain(["P1", "P1", "P361"], f"Qd{k}", 17.9) for k in range(3)]
    paths.append(_chain(["P1"], "Qmid", 14.3))
    assert np.allclose(np.exp(chain_ends(paths)), [1, 3, 3, 3, 1])


def test_the_ends_split_puts_a_one_end_chain_above_an_equally_read_k_way_guess():
    """The reader reads the extension a little better (17.9 against 16.9), but it reaches three entities: shared
    among them, the chain with one end ranks first, under the fixed sum and under learned weights alike."""
    paths = [_chain(["P1", "P1"], "Qgold", 16.9)] + [_chain(["P1", "P1", "P361"], f"Qd{k}", 17.9) for k in range(3)]
    X = feature_rows(paths, {}, None, 0.0)
    for w, learned in ((fixed_weights(1.0), False), (fixed_weights(1.0) * 3.0, True)):
        assert int(np.argmax(X @ w)) != 0                                    # without the split: a guess wins
        assert int(np.argmax(X @ w + split_offset(chain_ends(paths), learned))) == 0
    far = [_chain(["P1", "P1"], "Qgold", 10.0)] + [_chain(["P2"], f"Qd{k}", 30.0) for k in range(3)]
    Xf = feature_rows(far, {}, None, 0.0)                   # a chain read far better still wins when shared
    assert int(np.argmax(Xf @ fixed_weights(1.0) + split_offset(chain_ends(far), False))) != 0


def test_fit_and_top1_add_the_offset_without_fitting_it():
    rng = np.random.default_rng(2)
    groups = []
    for X, y in _groups(rng, 60, FEATURES.index("reader")):
        off = np.zeros(len(y))
        off[y == 1] = 5.0                                    # the offset alone finds every answer
        groups.append((X, y, off))
    assert top1(groups, np.zeros(len(FEATURES))) == 1.0
    assert top1([(X, y) for X, y, _ in groups], np.zeros(len(FEATURES))) < 0.5
    w, rep = fit(groups)
    assert top1(groups, w) == 1.0 and rep["learned_top1"] == 1.0


def test_terminal_selection_answers_from_the_chain_with_one_end_unless_ends_split_is_off():
    """What VisPath answers (Scorer.rank_endpoints, the chain reader scoring, learned weights): a chain read a little
    better that reaches three entities loses to the chain with one end; with ends_split=false it wins, and the
    answer is one of its three tied ends."""
    from kgqa.core.kg import KG
    from kgqa.core.result import Step
    from kgqa.methods.vispath.options import VisPathOptions
    from kgqa.methods.vispath.records import HopRecord, ReasoningPath, StartCandidate, VisPathRun
    from kgqa.methods.vispath.scoring import Scorer
    from tests.fakes.vispath import BagOfWordsEncoder, FakeGraph

    names = {"M": "Mount Tiny", "R1": "Tiny Range", "R2": "Big Cordillera", "D1": "Far Range A",
             "D2": "Far Range B", "D3": "Far Range C"}
    rel = {"P4552": "mountain range", "P361": "part of"}
    facts = [("M", "P4552", "R1"), ("R1", "P4552", "R2")] + [("R2", "P361", d) for d in ("D1", "D2", "D3")]

    def p(*triples, reader):
        edges = tuple(Step(h, names[h], r, rel[r], t, names[t], k, score=0.5) for k, (h, r, t) in enumerate(triples, 1))
        return ReasoningPath("M", names["M"], edges, sigma=0.5, reader_score=reader, rules_sigma=0.0)

    two = p(("M", "P4552", "R1"), ("R1", "P4552", "R2"), reader=16.9)
    three = [p(("M", "P4552", "R1"), ("R1", "P4552", "R2"), ("R2", "P361", d), reader=17.9) for d in ("D1", "D2", "D3")]
    enc = BagOfWordsEncoder()
    g = FakeGraph(names, rel, facts, encoder=enc)

    def answer(**opts):
        sc = Scorer(KG(g, enc), g, VisPathOptions(answer_typing=False, **opts))
        run = VisPathRun(question="What is the range that the range of this mountain is part of?",
                         start=StartCandidate("M", names["M"]))
        run.reader = True
        run.terminal_weights = fixed_weights(1.0) * 3.0
        run.hops = [HopRecord(hop=1, intent="", retained=[]), HopRecord(hop=2, intent="", retained=[two]),
                    HopRecord(hop=3, intent="", retained=three)]
        ends = sc.rank_endpoints(run.question, False, run)
        return ends[0].end_id, run.tied_with

    assert answer() == ("R2", [])
    first, tied = answer(ends_split=False)
    assert first in ("D1", "D2", "D3") and len(tied) == 2


# ----------------------------------------------------------------------------------------- the kind asked for
def _shipped_reader(names: dict[str, str]):
    """The shipped demo chain reader (the real bi-encoder), bound to a small catalogue."""
    pytest.importorskip("torch")
    from pathlib import Path

    from kgqa.models.heads.chain_reader import ChainReader, _torch_reader, read_meta

    ck = Path(__file__).resolve().parents[2] / "data" / "demo" / "paths" / "chain-reader.safetensors"
    meta = read_meta(ck)
    return ChainReader(_torch_reader(ck, meta, True), meta, names, {})


def _kind_world():
    """A bridge designed by an engineer who studied at a university in a city; types by instance of."""
    from kgqa.core.kg import KG
    from tests.fakes.vispath import BagOfWordsEncoder, FakeGraph

    names = {"B": "Tiny Bridge", "E": "Ada Builder", "U": "Polytechnic of Somewhere", "C": "Somewhere",
             "H": "human", "UN": "university", "CI": "city"}
    rel = {"P287": "designed by", "P69": "educated at", "P131": "located in", "P31": "instance of"}
    facts = [("B", "P287", "E"), ("E", "P69", "U"), ("U", "P131", "C"),
             ("E", "P31", "H"), ("U", "P31", "UN"), ("C", "P31", "CI")]
    enc = BagOfWordsEncoder()
    g = FakeGraph(names, rel, facts, encoder=enc)
    return names, rel, KG(g, enc), g


def _rank(kg, g, names, rel, question, hops, weights, reader):
    from kgqa.core.result import Step
    from kgqa.methods.vispath.options import VisPathOptions
    from kgqa.methods.vispath.records import HopRecord, ReasoningPath, StartCandidate, VisPathRun
    from kgqa.methods.vispath.scoring import Scorer
    from kgqa.methods.vispath.terminal import kind_scores

    def p(triples, score):
        edges = tuple(Step(h, names[h], r, rel[r], t, names[t], k, score=0.5) for k, (h, r, t) in enumerate(triples, 1))
        return ReasoningPath("B", names["B"], edges, sigma=0.5, reader_score=score, rules_sigma=0.0)

    run = VisPathRun(question=question, start=StartCandidate("B", names["B"]))
    run.reader, run.terminal_weights = True, weights
    run.hops = [HopRecord(hop=k, intent="", retained=[p(t, s) for t, s in paths]) for k, paths in enumerate(hops, 1)]
    run.kind_scores = kind_scores(reader, kg, question, [x for h in run.hops for x in h.retained])
    ends = Scorer(kg, g, VisPathOptions(answer_typing=False)).rank_endpoints(question, True, run)
    return ends[0].end_id, run


def test_an_end_one_hop_short_of_the_kind_asked_for_is_not_chosen():
    """The reader reads the engineer's chain a little better than the gold one (one hop short: "designed by"
    alone); what kind of thing each end is (human, university) is read against the question, and with a weight
    for it the university is the answer. A weights file without ``kind`` (weight 0) still answers the engineer."""
    names, rel, kg, g = _kind_world()
    reader = _shipped_reader(rel)
    q = "Which university did the engineer who designed this bridge attend?"
    hops = [[([("B", "P287", "E")], 15.0)], [([("B", "P287", "E"), ("E", "P69", "U")], 14.0)]]
    with_kind = fixed_weights(1.0)
    with_kind[FEATURES.index("kind")] = 1.0
    first, run = _rank(kg, g, names, rel, q, hops, with_kind, reader)
    assert run.kind_scores["U"] > run.kind_scores["E"] + 2.0          # university read far above human
    assert first == "U"
    assert _rank(kg, g, names, rel, q, hops, fixed_weights(1.0), reader)[0] == "E"


def test_the_kind_asked_for_breaks_a_tie_between_two_ends_of_one_chain():
    """One relation chain reaching two entities (a university and a city, each "located in" from the bridge): the
    chain's score cannot tell them apart; the kind does, under the fixed sum too (it breaks the tie only)."""
    names, rel, kg, g = _kind_world()
    facts = g.facts
    facts += [("B", "P131", "U"), ("B", "P131", "C")]
    reader = _shipped_reader(rel)
    hops = [[([("B", "P131", "U")], 12.0), ([("B", "P131", "C")], 12.0)]]
    for q, want in (("In which city is this bridge located?", "C"),
                    ("Which university is this bridge located in?", "U")):
        first, run = _rank(kg, g, names, rel, q, hops, None, reader)
        assert first == want and run.tied_with == [], (q, run.kind_scores)


def test_a_weights_file_fitted_before_kind_loads_with_a_zero_weight_for_it(tmp_path):
    reader = tmp_path / "r.safetensors"
    reader.write_bytes(b"reader one")
    f = tmp_path / "r.terminal.json"
    f.write_text(json.dumps({"format": "kgqa-vispath-terminal/1", "features": list(FEATURES[:8]),
                             "weights": [1.0] * 8, "reader_sha256": sha256(reader)}))
    w = load_weights(f, reader).weights
    assert w.shape == (len(FEATURES),) and w[FEATURES.index("kind")] == 0.0 and w[:8].tolist() == [1.0] * 8
