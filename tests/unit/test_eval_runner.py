"""kgqa.app.eval input handling and runner, with a scripted stand-in pipeline (no services).

The stand-in answers from a dict; it exists to test the runner's logic (independence of
questions, scoring of what a method returns), not any method.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kgqa.core.errors import InvalidInput
from kgqa.app.eval.questions import load_questions
from kgqa.app.eval.report import render_tables
from kgqa.app.eval.runner import evaluate
from kgqa.core.result import Answer, PathEvidence, RoleCost, Step
from tests.conftest import assert_one_line_error, run_kgqa

GOOD = [
    {"id": "q1", "question": "What is the capital of France?", "answer": "Paris", "answer_id": "Q90",
     "aliases": ["City of Light"], "hops": 1, "topic": {"id": "Q142", "label": "France"},
     "path": [["Q142", "P36", "Q90"]]},
    {"id": "q2", "image": "img/flag.png", "question": "Which city is twinned with the capital of the country "
     "whose flag is shown?", "answer": "Rome", "answer_id": "Q220", "aliases": ["Roma"], "hops": 2,
     "topic": {"id": "Q142", "label": "France"}, "path": [["Q142", "P36", "Q90"], ["Q90", "P190", "Q220"]]},
    {"id": "q3", "question": "Who wrote Hamlet?", "answer": "William Shakespeare"},
]


def write(tmp_path: Path, rows, name="qs.jsonl") -> Path:
    (tmp_path / "img").mkdir(exist_ok=True)
    from PIL import Image

    Image.new("RGB", (30, 20), "blue").save(tmp_path / "img" / "flag.png")
    p = tmp_path / name
    p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return p


# --------------------------------------------------------------------------- loading
def test_load_valid_file_resolves_images_relative_to_the_file(tmp_path):
    qs, skipped = load_questions(write(tmp_path, GOOD))
    assert [q.id for q in qs] == ["q1", "q2", "q3"] and skipped == []
    assert qs[1].image_path == tmp_path / "img" / "flag.png"
    assert qs[0].image_path is None
    assert qs[1].path == [("Q142", "P36", "Q90"), ("Q90", "P190", "Q220")]
    assert qs[2].topic is None and qs[2].hops is None and qs[2].aliases == []


BAD = [
    ('{"id": "x", "question": "Q?"', "not valid JSON"),
    ('["id", "x"]', "expected a JSON object"),
    ('{"id": "x", "question": "Q?"}', "answer: Field required"),
    ('{"id": "x", "question": "  ", "answer": "A"}', "question: must not be blank"),
    ('{"id": "x", "question": "Q?", "answer": "A", "hops": 0}', "hops"),
    ('{"id": "x", "question": "Q?", "answer": "A", "hops": 2, "path": [["Q1","P1","Q2"]]}',
     "hops is 2 but path has 1 edges"),
    ('{"id": "x", "question": "Q?", "answer": "A", "path": [["Q1","P1","Q2"], ["Q3","P1","Q4"]]}',
     "edge 1 starts at Q3 but edge 0 ends at Q2"),
    ('{"id": "x", "question": "Q?", "answer": "A", "path": [["Q1","P1"]]}', "path.0"),
    ('{"id": "x", "question": "Q?", "answer": "A", "topic": {"id": "Q9"}, "path": [["Q1","P1","Q2"]]}',
     "topic.id is Q9"),
    ('{"id": "x", "question": "Q?", "answer": "A", "image": "img/missing.jpg"}', "img/missing.jpg not found"),
    ('{"id": "q1", "question": "Q?", "answer": "A"}', "id 'q1' already used on line 1"),
]


@pytest.mark.parametrize("line, why", BAD)
def test_strict_bad_line_names_file_line_and_reason(tmp_path, line, why):
    p = write(tmp_path, [GOOD[0], line])
    with pytest.raises(InvalidInput) as e:
        load_questions(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}:2: "), msg
    assert why in msg, msg
    assert "\n" not in msg


def test_lenient_skips_and_counts_bad_lines(tmp_path):
    p = write(tmp_path, [GOOD[0], BAD[0][0], "", GOOD[1], BAD[2][0], GOOD[2]])
    qs, skipped = load_questions(p, lenient=True)
    assert [q.id for q in qs] == ["q1", "q2", "q3"]
    assert [s.line for s in skipped] == [2, 5]  # blank line 3 is neither a question nor an error
    assert "not valid JSON" in skipped[0].why


def test_non_utf8_line_and_missing_file(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_bytes(json.dumps(GOOD[0]).encode() + b"\n" + b'{"id": "\xff"}\n')
    with pytest.raises(InvalidInput, match=r"bad.jsonl:2: not UTF-8"):
        load_questions(p)
    with pytest.raises(InvalidInput, match="question file not found"):
        load_questions(tmp_path / "nope.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(InvalidInput, match="no questions"):
        load_questions(empty)


def test_cli_bad_line_is_one_line_exit_2(tmp_path):
    p = write(tmp_path, [GOOD[0], '{"id": "x", "question": "Q?"}'])
    proc = run_kgqa("eval", str(p))
    assert_one_line_error(proc, f"{p}:2:", "answer", code=2)


def test_cli_lenient_with_nothing_valid_is_one_line_exit_2(tmp_path):
    p = write(tmp_path, ['{"id": "x"}'])
    proc = run_kgqa("eval", str(p), "--lenient")
    assert_one_line_error(proc, "no valid questions", code=2)


# --------------------------------------------------------------------------- runner
class ScriptedPipeline:
    """Stand-in for kgqa.app.pipeline.Pipeline: returns scripted Answers, raises where told."""

    def __init__(self, script):
        self.script = script
        self.calls = []

    def answer(self, question, image=None, entity_id=None):
        self.calls.append((question, image, entity_id))
        out = self.script[question]
        if isinstance(out, Exception):
            raise out
        return out


class KeywordEncoder:
    """Fixed 2-d embeddings: texts containing 'Rome' or 'Roma' point one way, others another."""

    def encode(self, texts):
        return np.array([[1.0, 0.0] if ("Rom" in t) else [0.0, 1.0] for t in texts], dtype=np.float32)


def _ans(q, answer, answer_id=None, start=None, paths=(), cost=None):
    return Answer(question=q, answer=answer, method="vispath", answer_id=answer_id, start_entity_id=start,
                  evidence=list(paths), cost=cost or {})


def test_runner_scores_each_question_and_survives_a_failure(tmp_path):
    qs, _ = load_questions(write(tmp_path, GOOD))
    gold2 = PathEvidence(steps=[Step("Q142", "France", "P36", "capital", "Q90", "Paris", 1),
                         Step("Q90", "Paris", "P190", "twinned", "Q220", "Rome", 2)])
    wrong = PathEvidence(steps=[Step("Q142", "France", "P36", "capital", "Q90", "Paris", 1)])
    pipe = ScriptedPipeline({
        GOOD[0]["question"]: RuntimeError("neo4j went away\nsecond line"),
        GOOD[1]["question"]: _ans(GOOD[1]["question"], "Roma", "Q220", "Q142", [wrong, gold2],
                                  {"chat": RoleCost(3, 120, 12, 0.5), "vision": RoleCost(2, 0, 8, 1.0)}),
        GOOD[2]["question"]: _ans(GOOD[2]["question"], None),
    })
    seen = []
    rep = evaluate(qs, pipe, KeywordEncoder(), questions_file="qs.jsonl", method="vispath",
                   on_result=lambda r: seen.append(r.id))
    assert seen == ["q1", "q2", "q3"]                       # the failure did not stop the run
    assert pipe.calls[1][1] == tmp_path / "img" / "flag.png"  # image passed as a Path
    assert all(c[2] is None for c in pipe.calls)            # no gold start entity unless asked
    by_id = {q["id"]: q for q in rep["questions"]}
    q1, q2, q3 = by_id["q1"], by_id["q2"], by_id["q3"]
    assert q1["error"] == "RuntimeError: neo4j went away second line"
    assert (q1["sbert"], q1["hits1"], q1["start_entity"], q1["gold_path"]) == (False, False, False, False)
    assert (q2["sbert"], q2["exact_match"], q2["hits1"], q2["start_entity"], q2["gold_path"]) == \
        (True, True, True, True, True)
    assert q2["sbert_cosine"] == pytest.approx(1.0)
    assert q3["abstained"] and q3["sbert"] is False and q3["exact_match"] is False
    assert q3["hits1"] is None and q3["gold_path"] is None   # no answer_id / path in q3's line
    o = rep["overall"]
    assert (o["n"], o["failed"], o["abstained"]) == (3, 1, 1)
    assert o["sbert@0.3"]["correct"] == 1 and o["sbert@0.3"]["n"] == 3
    assert o["hits@1"] == {"correct": 1, "n": 2, "accuracy": 0.5}
    assert o["cost_per_question"]["chat"]["calls"] == pytest.approx(1.5)   # (3 + 0) / 2 questions that ran
    assert list(rep["by_hops"]) == ["1", "2", "unknown"]
    assert rep["by_hops"]["2"]["sbert@0.3"]["accuracy"] == 1.0
    assert rep["by_hops"]["1"]["failed"] == 1
    json.dumps(rep)  # the --json report is plain JSON

    from rich.console import Console

    con = Console(record=True, width=200)
    render_tables(rep, con)
    text = con.export_text()
    assert "2-hop" in text and "overall" in text and "failed q1: RuntimeError" in text
    row2 = next(ln for ln in text.splitlines() if "2-hop" in ln)
    assert "100.0" in row2  # the 2-hop row: SBERT@0.3, EM, Hits@1, start, path all 100 %


def test_gold_start_passes_topic_id(tmp_path):
    qs, _ = load_questions(write(tmp_path, GOOD))
    pipe = ScriptedPipeline({q["question"]: _ans(q["question"], "x") for q in GOOD})
    evaluate(qs, pipe, KeywordEncoder(), questions_file="f", method="vispath", gold_start=True)
    assert [c[2] for c in pipe.calls] == ["Q142", "Q142", None]


def test_start_entity_is_not_scored_for_a_method_that_grounds_none(tmp_path):
    """mKG-RAG retrieves documents, not a start entity: its start metric is skipped, not counted 0."""
    qs, _ = load_questions(write(tmp_path, GOOD))
    q = GOOD[1]["question"]
    doc_answer = Answer(question=q, answer="Roma", method="mkgrag", start_entity_id=None)
    rep = evaluate(qs[1:2], ScriptedPipeline({q: doc_answer}), KeywordEncoder(), questions_file="qs.jsonl",
                   method="mkgrag")
    assert rep["questions"][0]["start_entity"] is None and rep["overall"]["start_entity"]["n"] == 0
    rep = evaluate(qs[1:2], ScriptedPipeline({q: _ans(q, "Roma", start=None)}), KeywordEncoder(),
                   questions_file="qs.jsonl", method="vispath")
    assert rep["questions"][0]["start_entity"] is False          # VisPath found no start entity: wrong
