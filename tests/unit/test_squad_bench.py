"""The open-setting bench's per-question measure (bench/squad.py): which sentence is the answer's evidence,
whether a chunk that reaches the reader holds it (whole paragraph, paragraph inside a larger chunk, paragraph
split over chunks), and the per-stage table. Texts are invented."""

from __future__ import annotations

from bench import squad as B
from kgqa.training.squad import QA

PARA = ("The Glass Bridge crosses the river Lune. It was designed by Skidmore, Owings and Merrill in 1998. "
        "It is painted white.")


def qa(answer: str) -> QA:
    return QA("q1", "Who designed the Glass Bridge?", PARA, [(answer, PARA.index(answer))], "Glass_Bridge")


def test_the_answer_sentence_is_the_one_holding_the_answer():
    assert B.answer_sentence(qa("Skidmore, Owings and Merrill")) == \
        "It was designed by Skidmore, Owings and Merrill in 1998."
    assert B.answer_sentence(qa("Lune")) == "The Glass Bridge crosses the river Lune."
    assert B.answer_sentence(qa("white")) == "It is painted white."


def test_chunk_recall_matches_whole_inside_and_split_paragraphs():
    q = qa("Skidmore, Owings and Merrill")
    assert B.chunk_recalled(q, [PARA])
    assert B.chunk_recalled(q, ["Another paragraph.\n\n" + PARA.replace(" It was", "\nIt  was")])
    halves = PARA.split("It is painted")
    assert B.chunk_recalled(q, ["Unrelated.", halves[0]])             # the answer's half of a split paragraph
    assert not B.chunk_recalled(q, ["It is painted" + halves[1], "The Glass Bridge crosses the river Lune."])
    assert not B.chunk_recalled(q, [])


def test_the_stage_table_counts_each_stage_over_the_one_before():
    rows = [{"doc": True, "chunk": True, "em": 1.0, "abstained": False},
            {"doc": True, "chunk": True, "em": 0.0, "abstained": True},
            {"doc": True, "chunk": False, "em": 0.0, "abstained": False},
            {"doc": False, "chunk": False, "em": 1.0, "abstained": False}]
    t = dict(B.stage_table(rows))
    assert t["document recall@Kd"].split()[1] == "(3/4)"
    assert t["chunk recall (answer's sentence read)"].split()[1] == "(2/4)"
    assert t["chunk recall | document recalled"].split()[1] == "(2/3)"
    assert t["EM | chunk recalled"].split()[1] == "(1/2)"
    assert t["abstained | chunk recalled"].split()[1] == "(1/2)"
    assert t["EM | chunk not recalled"].split()[1] == "(1/2)"
    assert t["EM (all)"].split()[0] == "50.0"
