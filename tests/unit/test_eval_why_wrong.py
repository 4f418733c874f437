"""kgqa eval says why each wrong answer was wrong, and how often the retained gold path was chosen.

A scripted stand-in pipeline returns hand-built Answers (no services): the logic under test is the
runner's classification of what a method returned, not any method.
"""

from __future__ import annotations

import json

from kgqa.app.eval.metrics import gold_path_selected, why_wrong
from kgqa.app.eval.questions import load_questions
from kgqa.app.eval.report import render_tables
from kgqa.app.eval.runner import evaluate
from kgqa.core.result import Answer, PathEvidence, Step
from tests.unit.test_eval_runner import KeywordEncoder, ScriptedPipeline

GOLD = [["Q142", "P36", "Q90"], ["Q90", "P190", "Q220"]]


def _q(i, answer="Rome", aliases=("Roma",)):
    return {"id": f"q{i}", "question": f"Question {i}: which city is twinned with the capital of France?",
            "answer": answer, "aliases": list(aliases), "hops": 2, "topic": {"id": "Q142", "label": "France"},
            "path": GOLD}


def _path(*triples):
    names = {"Q142": "France", "Q90": "Paris", "Q220": "Rome", "Q64": "Berlin", "Q1": "Lyon"}
    return PathEvidence(steps=[Step(h, names[h], r, r, t, names[t], k) for k, (h, r, t) in enumerate(triples, 1)])


GOLD_PATH = _path(*GOLD)
OTHER = _path(("Q142", "P36", "Q90"), ("Q90", "P190", "Q64"))


def _ans(q, answer, answer_id, start, paths):
    return Answer(question=q["question"], answer=answer, method="vispath", answer_id=answer_id,
                  start_entity_id=start, evidence=list(paths))


def test_each_wrong_answer_gets_its_first_cause(tmp_path):
    qs_rows = [_q(1), _q(2), _q(3), _q(4), _q(5, answer="Rome (city)", aliases=()), _q(6)]
    f = tmp_path / "qs.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in qs_rows) + "\n", encoding="utf-8")
    qs, _ = load_questions(f)
    script = {
        qs_rows[0]["question"]: _ans(qs_rows[0], "Rome", "Q220", "Q142", [OTHER, GOLD_PATH]),  # right
        qs_rows[1]["question"]: _ans(qs_rows[1], "Lyon", "Q1", "Q1", []),                    # wrong start
        qs_rows[2]["question"]: _ans(qs_rows[2], "Berlin", "Q64", "Q142", [OTHER]),          # gold not kept
        qs_rows[3]["question"]: _ans(qs_rows[3], "Berlin", "Q64", "Q142", [OTHER, GOLD_PATH]),  # kept, not chosen
        qs_rows[4]["question"]: _ans(qs_rows[4], "Rome", "Q220", "Q142", [GOLD_PATH]),       # chosen, string differs
        qs_rows[5]["question"]: RuntimeError("boom"),
    }
    rep = evaluate(qs, ScriptedPipeline(script), KeywordEncoder(), questions_file="qs.jsonl", method="vispath")
    got = {q["id"]: (q["why_wrong"], q["selected"]) for q in rep["questions"]}
    assert got == {"q1": (None, True), "q2": ("start_wrong", None), "q3": ("gold_path_not_retained", None),
                   "q4": ("retained_not_selected", False), "q5": ("selected_answer_differs", True),
                   "q6": ("failed", None)}
    o = rep["overall"]
    # selection given retained: q1, q4, q5 kept the gold path; q1 and q5 chose it
    assert o["selected"] == {"correct": 2, "n": 3, "accuracy": 2 / 3}
    assert o["why_wrong"] == {"start_wrong": 1, "gold_path_not_retained": 1, "retained_not_selected": 1,
                              "selected_answer_differs": 1, "failed": 1}
    assert rep["by_hops"]["2"]["selected"]["n"] == 3
    json.loads(json.dumps(rep))   # --json carries it as plain JSON

    from rich.console import Console

    con = Console(record=True, width=220)
    render_tables(rep, con)
    text = con.export_text()
    header = next(ln for ln in text.splitlines() if "SBERT@0.3" in ln)
    assert header.split().index("selected") == header.split().index("path") + 1
    row = next(ln for ln in text.splitlines() if ln.strip().startswith("2-hop"))
    assert "66.7" in row                                    # the selected column
    assert "retained but not selected 1" in text
    assert "wrong q4: retained but not selected (answered 'Berlin', gold 'Rome')" in text


def test_selected_needs_the_gold_path_kept_and_its_end_as_the_answer():
    gold = [tuple(t) for t in GOLD]
    assert gold_path_selected(gold, "Q220", [OTHER, GOLD_PATH])
    assert not gold_path_selected(gold, "Q64", [OTHER, GOLD_PATH])      # kept, another path's end answered
    assert not gold_path_selected(gold, "Q220", [OTHER])                 # not kept: not selected either
    # a method that names no answer entity: the gold path must be its first retained path
    assert gold_path_selected(gold, None, [GOLD_PATH, OTHER])
    assert not gold_path_selected(gold, None, [OTHER, GOLD_PATH])


def test_why_wrong_is_none_for_a_right_answer_or_without_gold_fields():
    assert why_wrong(correct=True, start_entity=False, gold_path=False, selected=None) is None
    assert why_wrong(correct=False, start_entity=None, gold_path=None, selected=None) is None
    # a method that grounds no start entity (mKG-RAG): the path causes still apply
    assert why_wrong(correct=False, start_entity=None, gold_path=False, selected=None) == "gold_path_not_retained"


def test_a_hop_by_hop_method_is_judged_by_what_each_hop_kept_not_only_by_its_evidence(tmp_path):
    # VisPath returns the top M3 endpoint paths as evidence, but retains more at each hop
    # (details["retained_by_hop"]): a gold path kept at its hop and outranked is "retained but not selected",
    # not "not retained"; one dropped at hop 2 says so
    qs_rows = [_q(1), _q(2), _q(3)]
    f = tmp_path / "qs.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in qs_rows) + "\n", encoding="utf-8")
    qs, _ = load_questions(f)
    gold1, other2 = [GOLD[0]], [["Q90", "P190", "Q64"]]
    kept = [[gold1], [GOLD, [GOLD[0]] + other2]]          # hop 1 kept France→Paris; hop 2 kept both 2-hop paths
    dropped = [[gold1], [[GOLD[0]] + other2]]             # hop 2 kept only the other path
    script = {
        qs_rows[0]["question"]: _ans(qs_rows[0], "Berlin", "Q64", "Q142", [OTHER]),
        qs_rows[1]["question"]: _ans(qs_rows[1], "Berlin", "Q64", "Q142", [OTHER]),
        qs_rows[2]["question"]: _ans(qs_rows[2], "Rome", "Q220", "Q142", [OTHER]),
    }
    script[qs_rows[0]["question"]].details["retained_by_hop"] = kept
    script[qs_rows[1]["question"]].details["retained_by_hop"] = dropped
    script[qs_rows[2]["question"]].details["retained_by_hop"] = kept
    qs_rows.append(_q(4))                                  # a wrong start: no hop to blame
    f.write_text("\n".join(json.dumps(r) for r in qs_rows) + "\n", encoding="utf-8")
    qs, _ = load_questions(f)
    script[qs_rows[3]["question"]] = _ans(qs_rows[3], "Lyon", "Q1", "Q1", [])
    script[qs_rows[3]["question"]].details["retained_by_hop"] = [[]]
    rep = evaluate(qs, ScriptedPipeline(script), KeywordEncoder(), questions_file="qs.jsonl", method="vispath")
    got = {q["id"]: (q["gold_path"], q["selected"], q["why_wrong"], q["lost_at_hop"]) for q in rep["questions"]}
    assert got == {"q1": (True, False, "retained_not_selected", None),
                   "q2": (False, None, "gold_path_not_retained", 2),
                   "q3": (True, True, None, None),               # chosen although not among the evidence
                   "q4": (False, None, "start_wrong", None)}
    assert rep["overall"]["lost_at_hop"] == {"2": 1}

    from rich.console import Console

    con = Console(record=True, width=220)
    render_tables(rep, con)
    text = con.export_text()
    assert "gold path not retained 1 (lost at hop 2: 1)" in text
    assert "wrong q2: gold path not retained (lost at hop 2) (answered 'Berlin', gold 'Rome')" in text


def test_a_tie_with_the_gold_answer_is_told_apart_from_a_lost_ranking(tmp_path):
    # VisPath says which other endpoints scored exactly as its answer (details["tied_with"]); when the gold
    # answer is one of them the wrong answer was a draw the scores could not decide, and eval says so
    qs_rows = [_q(1), _q(2)]
    f = tmp_path / "qs.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in qs_rows) + "\n", encoding="utf-8")
    qs, _ = load_questions(f)
    script = {r["question"]: _ans(r, "Berlin", "Q64", "Q142", [OTHER, GOLD_PATH]) for r in qs_rows}
    script[qs_rows[0]["question"]].details["tied_with"] = [{"id": "Q220", "name": "Rome"}]
    script[qs_rows[1]["question"]].details["tied_with"] = [{"id": "Q1", "name": "Lyon"}]   # not the gold one
    rep = evaluate(qs, ScriptedPipeline(script), KeywordEncoder(), questions_file="qs.jsonl", method="vispath")
    got = {q["id"]: (q["why_wrong"], q["tied"]) for q in rep["questions"]}
    assert got == {"q1": ("retained_not_selected", True), "q2": ("retained_not_selected", False)}
    assert rep["overall"]["tied"] == 1

    from rich.console import Console

    con = Console(record=True, width=220)
    render_tables(rep, con)
    text = con.export_text()
    assert "retained but not selected 2 (a tie with the gold answer: 1)" in text
    assert "wrong q1: retained but not selected (a tie: the gold answer scored exactly as the one given)" in text
    assert "wrong q2: retained but not selected (answered 'Berlin', gold 'Rome')" in text
