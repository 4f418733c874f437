"""Which end GraSP answers with (issue 60, item 5): a relation chain's score shared among the nodes it reaches, the
answer's kind breaking a tie between two ends of one chain, an end one hop short of the question not chosen, and
the evidence being the chain GraSP read for its answer. Under the chain reader (the shipped demo reader where the
test is about reading; a stub where it is about the arithmetic) and in the fallback without a reader or head
(``nodes.chain_text_ranking``). The graphs are the fakes of the VisPath and GraSP unit tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgqa.methods.grasp.subgraph import Fact, Subgraph

torch = pytest.importorskip("torch")

SHIPPED_READER = Path(__file__).resolve().parents[2] / "data" / "demo" / "paths" / "chain-reader.safetensors"


def fake_kg(names: dict[str, str], relations: dict[str, str], facts: list[tuple[str, str, str]]):
    from kgqa.core.kg import KG
    from tests.fakes.vispath import BagOfWordsEncoder, FakeGraph

    return KG(FakeGraph(names, relations, facts, encoder=BagOfWordsEncoder()), BagOfWordsEncoder())


def shipped_reader(relations: dict[str, str]):
    from kgqa.models.heads.chain_reader import ChainReader, _torch_reader, read_meta

    meta = read_meta(SHIPPED_READER)
    return ChainReader(_torch_reader(SHIPPED_READER, meta, True), meta, relations, {})


class StubReader:
    """Scores chains from a table; every kind text alike (so the kind decides nothing unless told)."""

    def __init__(self, logits: dict[tuple[str, ...], float], kinds: dict[str, float] | None = None):
        self.logits, self.kinds = logits, kinds or {}

    def score(self, question, chains):
        return np.array([self.logits[tuple(c)] for c in chains])

    def score_texts(self, question, texts, chains=False):
        return np.array([self.kinds.get(t, 0.0) for t in texts])


# Freedonia's one "related to" chain reaches its language and its currency: the chain's score cannot tell them apart
NAMES = {"T": "Freedonia", "L": "Freedonian", "M": "Freedonian mark", "LA": "language", "CU": "currency"}
RELATIONS = {"P9": "related to", "P31": "instance of"}
FACTS = [("T", "P9", "L"), ("T", "P9", "M"), ("L", "P31", "LA"), ("M", "P31", "CU")]
ASKS_CURRENCY = "What currency is used in this country?"


def two_ends() -> Subgraph:
    return Subgraph("T", {k: NAMES[k] for k in ("T", "L", "M")},
                    [Fact("T", "P9", "L", 1, 0.0), Fact("T", "P9", "M", 1, 0.0)])


def test_the_answer_kind_breaks_a_tie_between_two_ends_of_one_chain_under_the_reader():
    """No kind weight fitted (0): the two ends tie on the chain's score, and the head prefers the language; the
    kind the shipped reader reads ("currency" against each end's class) breaks the tie, the head's order only
    after it. Without a KG to read kinds from, the head's order stands (as before)."""
    from kgqa.methods.grasp.reader import reader_ranking

    reader, kg = shipped_reader(RELATIONS), fake_kg(NAMES, RELATIONS, FACTS)
    head = [("L", 0.6), ("M", 0.4)]
    ranked = reader_ranking(reader, ASKS_CURRENCY, two_ends(), head, kg=kg, kind_weight=0.0, ends_split=1.0)
    assert [n for n, _ in ranked] == ["M", "L"]
    assert ranked[0][1] == ranked[1][1]                      # the same chain's score: a tie the kind broke
    assert [n for n, _ in reader_ranking(reader, ASKS_CURRENCY, two_ends(), head)] == ["L", "M"]


def test_the_answer_kind_breaks_a_tie_between_two_ends_of_one_chain_in_the_fallback():
    """No reader, no head for this KG (``chain_text_ranking``, relation names' vectors): the language comes first
    in node order; with ends_split the kind (the end's class, by its cosine with the question) decides."""
    from kgqa.methods.grasp.nodes import chain_text_ranking

    kg = fake_kg(NAMES, RELATIONS, FACTS)
    q = kg.embed([ASKS_CURRENCY])[0]
    assert [n for n, _ in chain_text_ranking(two_ends(), q, kg, {"T"})] == ["L", "M"]
    walks: dict = {}
    ranked = chain_text_ranking(two_ends(), q, kg, {"T"}, ends_split=True, walks=walks)
    assert [n for n, _ in ranked] == ["M", "L"]
    assert [f.key for f in walks["M"]] == ["T|P9|M"]


def test_a_chain_that_reaches_three_nodes_shares_its_score_among_them():
    """Chain P1 reaches three nodes, P2 one, and the reader reads P1 a little better (0.5 logit): split, each of
    P1's ends counts log 3 (× the units) less, so P2's one end answers; without the split one of P1's does."""
    from kgqa.methods.grasp.reader import reader_ranking

    sub = Subgraph("T", {"T": "t", "A": "a", "B": "b", "C": "c", "D": "d"},
                   [Fact("T", "P1", x, 1, 0.0) for x in "ABC"] + [Fact("T", "P2", "D", 1, 0.0)])
    reader = StubReader({("P1",): 3.5, ("P2",): 3.0})
    head = [("A", 0.25), ("B", 0.25), ("C", 0.25), ("D", 0.25)]
    assert reader_ranking(reader, "q", sub, head)[0][0] == "A"
    assert reader_ranking(reader, "q", sub, head, ends_split=1.0)[0][0] == "D"
    assert reader_ranking(reader, "q", sub, head, ends_split=0.4)[0][0] == "A"      # 0.4 × log 3 < 0.5


def test_the_split_is_one_log_unit_of_vispaths_terminal_ranking(tmp_path):
    """With weights fitted for the reader, VisPath ranks by X·w (the reader's feature = logit / 20): a chain
    reaching k ends loses log k there, 20 / w_reader × log k in logits; without weights, log k in logits."""
    import hashlib
    import json

    from kgqa.models.heads.chain_reader import ends_split_units, terminal_weights_path

    ck = tmp_path / "r.safetensors"
    ck.write_bytes(b"reader")
    assert ends_split_units(ck) == 1.0
    body = {"features": ["reader", "kind"], "weights": [2.5, 1.0], "reader_sha256": hashlib.sha256(b"reader").hexdigest()}
    terminal_weights_path(ck).write_text(json.dumps(body))
    assert ends_split_units(ck) == pytest.approx(8.0)
    terminal_weights_path(ck).write_text(json.dumps({**body, "reader_sha256": "0" * 64}))
    assert ends_split_units(ck) == 1.0


def test_an_end_one_hop_short_of_what_the_question_asks_is_not_chosen():
    """"Which school did the engineer who designed this bridge attend?": the engineer is on the way (one hop
    short), the university is the answer; the shipped reader with the kind and the split (GraSP's defaults on
    the demo KG) answers the university, though the head prefers the engineer, and the evidence is the chain
    it read (bridge → engineer → university)."""
    from kgqa.methods.grasp.reader import reader_ranking

    names = {"B": "Forth Bridge", "E": "John Fowler", "U": "University of Leeds", "H": "human",
             "UN": "university", "C": "Edinburgh"}
    rel = {"P84": "architect", "P69": "educated at", "P31": "instance of", "P131": "located in the administrative "
           "territorial entity"}
    facts = [("B", "P84", "E"), ("E", "P69", "U"), ("B", "P131", "C"), ("E", "P31", "H"), ("U", "P31", "UN")]
    sub = Subgraph("B", {k: names[k] for k in ("B", "E", "U", "C")},
                   [Fact("B", "P84", "E", 1, 0.0), Fact("E", "P69", "U", 2, 0.0), Fact("B", "P131", "C", 1, 0.0)])
    head = [("E", 0.7), ("C", 0.2), ("U", 0.1)]
    walks: dict = {}
    ranked = reader_ranking(shipped_reader(rel), "Which school did the engineer who designed this bridge attend?",
                            sub, head, kg=fake_kg(names, rel, facts), kind_weight=0.46, ends_split=9.7, walks=walks)
    assert ranked[0][0] == "U", ranked
    assert [f.key for f in walks["U"]] == ["B|P84|E", "E|P69|U"]
