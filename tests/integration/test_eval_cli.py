"""`kgqa eval` end to end: the bundled demo KG in the real Neo4j, the real pipeline (VisPath
with SBERT, the reference-image grounder and SmolLM2), the real CLI.

The demo KG is loaded with the project's loader and deleted by id afterwards. Model replies
come through a copy of the replay cache recorded for the demo (data/demo/replay): a prompt
found there is replayed, any other goes to the real model (slower, still correct), so the
assertions hold whatever the small LLM answers: they check the report, the metrics that
follow from the gold data, and the runner's contract.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, run_kgqa

pytestmark = pytest.mark.integration

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


QUESTIONS = {json.loads(ln)["id"]: ln for ln in (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines()}


@pytest.fixture()
def small_set(tmp_path):
    """Three demo questions (1-hop image, 2-hop image, 2-hop text) plus their query images."""
    (tmp_path / "queries").mkdir()
    lines = []
    for qid in ("q04", "q07", "q17"):
        row = json.loads(QUESTIONS[qid])
        if "image" in row:
            shutil.copy(DEMO / row["image"], tmp_path / row["image"])
        lines.append(json.dumps(row, ensure_ascii=False))
    p = tmp_path / "small.jsonl"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cache = tmp_path / "replay"
    if (DEMO / "replay").is_dir():
        shutil.copytree(DEMO / "replay", cache)
    else:
        cache.mkdir()
    return p, cache


def test_eval_runs_a_small_set_and_reports_every_metric(demo_kg, small_set, tmp_path):
    qfile, cache = small_set
    out = tmp_path / "report.json"
    proc = run_kgqa("eval", str(qfile), "--replay-cache", str(cache), "--out", str(out), "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(proc.stdout)
    assert json.loads(out.read_text(encoding="utf-8")) == rep
    o = rep["overall"]
    assert o["n"] == 3 and o["failed"] == 0, rep["questions"]
    assert list(rep["by_hops"]) == ["1", "2"]
    assert rep["by_hops"]["1"]["n"] == 1 and rep["by_hops"]["2"]["n"] == 2
    for key in ("sbert@0.3", "exact_match", "hits@1", "start_entity", "gold_path"):
        assert o[key]["n"] == 3, key                 # every demo question has every gold field
        assert 0 <= o[key]["correct"] <= 3
    by_id = {q["id"]: q for q in rep["questions"]}
    for q in by_id.values():
        # each metric is consistent with what the method returned
        if q["abstained"]:
            assert q["sbert"] is False and q["exact_match"] is False
        else:
            assert q["sbert"] == (q["sbert_cosine"] >= 0.3)
        assert q["hits1"] == (q["prediction_id"] == json.loads(QUESTIONS[q["id"]])["answer_id"])
        assert q["start_entity"] == (q["start_entity_id"] == json.loads(QUESTIONS[q["id"]])["topic"]["id"])
        assert q["seconds"] > 0
        assert q["cost"].get("encoder", {}).get("calls", 0) >= 1   # SBERT is used for every question
    assert o["latency_s"]["p50"] > 0 and o["latency_s"]["p95"] >= o["latency_s"]["p50"]
    assert rep["options"]["sbert_model"]


def test_eval_report_folder_holds_the_json_and_a_page_with_every_wrong_question(demo_kg, small_set, tmp_path):
    qfile, _ = small_set
    base = tmp_path / "base.json"
    first = run_kgqa("eval", str(qfile), "--method", "grasp", "--out", str(base), "--quiet", env=GRAPH_ONLY)
    assert first.returncode == 0, first.stderr[-3000:]
    folder = tmp_path / "rep"
    proc = run_kgqa("eval", str(qfile), "--report", str(folder), "--baseline", str(base), "--traces", "--quiet",
                    env=GRAPH_ONLY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert "baseline: grasp" in page and "vispath · " in page
    for q in rep["questions"]:
        if q["exact_match"] is False:        # listed, with the Browser link of its trace
            assert f">{q['id']}<" in page and q["trace_id"] and f">{q['trace_id']}</a>" in page
    assert_one_line_error(run_kgqa("eval", str(qfile), "--report", str(folder), "--baseline", str(qfile)),
                          "--baseline", code=2)


def test_eval_gold_start_gives_every_question_its_topic_entity(demo_kg, small_set):
    qfile, cache = small_set
    proc = run_kgqa("eval", str(qfile), "--replay-cache", str(cache), "--gold-start", "--limit", "1",
                    "--json", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(proc.stdout)
    assert rep["overall"]["n"] == 1
    assert rep["overall"]["start_entity"] == {"correct": 1, "n": 1, "accuracy": 1.0}


def test_eval_table_and_lenient_count(demo_kg, small_set):
    qfile, cache = small_set
    with open(qfile, "a", encoding="utf-8") as fh:
        fh.write('{"id": "broken", "question": "no answer field"}\n')
    strict = run_kgqa("eval", str(qfile), "--replay-cache", str(cache))
    assert_one_line_error(strict, f"{qfile}:4:", "answer", code=2)
    proc = run_kgqa("eval", str(qfile), "--replay-cache", str(cache), "--lenient", "--limit", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "overall" in proc.stdout and "SBERT@0.3" in proc.stdout
    assert "skipped 1 bad line(s)" in proc.stdout and "line 4" in proc.stdout


def test_eval_unknown_ablation_is_one_line_exit_2(demo_kg, small_set):
    qfile, _ = small_set
    proc = run_kgqa("eval", str(qfile), "--ablate", "no_such_thing")
    assert_one_line_error(proc, "no_such_thing", code=2)


# --------------------------------------------------------------------------- the method seam
DEAD = {"KGQA_CHAT_BACKEND": "openai", "KGQA_CHAT_BASE_URL": "http://127.0.0.1:9/v1", "KGQA_MODEL_TIMEOUT_S": "5"}
GRAPH_ONLY = {"KGQA_CHAT_BACKEND": "none"}


def test_ask_with_an_unreachable_chat_server_is_exit_4_naming_role_and_url(demo_kg):
    """A model server that cannot be reached is an error, never a silent fallback answer."""
    proc = run_kgqa("ask", str(DEMO / "queries" / "flag_france.jpg"), "Which city is the capital of this country?",
                    env=DEAD)
    assert_one_line_error(proc, "chat backend http://127.0.0.1:9/v1", "cannot connect", code=4)
    assert "answer:" not in proc.stdout


def test_eval_records_unreachable_server_questions_as_failed(demo_kg, small_set):
    qfile, _ = small_set
    proc = run_kgqa("eval", str(qfile), "--json", "--quiet", env=DEAD)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(proc.stdout)
    assert rep["overall"]["failed"] == 3 and rep["overall"]["exact_match"]["correct"] == 0
    assert all("cannot connect" in q["error"] for q in rep["questions"])


def test_graph_only_setting_takes_every_fallback_on_purpose_and_says_so(demo_kg, small_set):
    qfile, _ = small_set
    proc = run_kgqa("eval", str(qfile), "--json", "--quiet", env=GRAPH_ONLY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(proc.stdout)
    o = rep["overall"]
    assert "graph-only" in rep["options"]["chat"]
    assert o["failed"] == 0 and o["questions_with_fallbacks"] == 3
    assert o["fallbacks"].get("graph_only", 0) >= 3 * 3          # several LLM steps per question
    assert "chat" not in o["cost_per_question"]                  # no chat model ran
    table = run_kgqa("eval", str(qfile), "--quiet", "--limit", "1", env=GRAPH_ONLY)
    assert table.returncode == 0 and "chat: graph-only" in table.stdout and "graph_only" in table.stdout


def test_compare_answers_one_question_with_every_method_side_by_side(demo_kg, settings):
    img = str(DEMO / "queries" / "falcon9_dscovr_launch.jpg")
    q = "Who founded the company that builds the rocket shown in this photo?"
    # no -o: GraSP's nodes head finds the shipped demo checkpoint; the shared test graph holds other modules'
    # relations beside the demo's, which the head accepts (it needs the relations it was trained on)
    proc = run_kgqa("compare", img, q, "--json", env=GRAPH_ONLY)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout)
    from kgqa.methods.registry import method_classes

    assert [r["method"] for r in rows] == list(method_classes())
    for r in rows:
        assert r["error"] is None and r["answer"]["trace_id"] and r["answer"]["method"] == r["method"]
        for ev in r["answer"]["evidence"]:
            assert ev["kind"] in ("path", "chunk", "subgraph")
    vp = next(r["answer"] for r in rows if r["method"] == "vispath")
    assert vp["start_entity_id"] == "Q219913"                   # Falcon 9, recognised by the grounder
    table = run_kgqa("compare", img, q, "--methods", "vispath", env=GRAPH_ONLY)
    assert table.returncode == 0, table.stderr[-2000:]
    assert "vispath" in table.stdout and f"vispath: http://127.0.0.1:{settings.neo4j_http_port}/browser/?" in table.stdout
    # a method that cannot be built (GraSP without its trained encoder) shows its error in its row;
    # the others still answer, and the exit code says something failed
    broken = run_kgqa("compare", q, "--json", "--methods", "vispath,grasp", "-o", "grasp.checkpoint=/nonexistent.st",
                      env=GRAPH_ONLY)
    assert broken.returncode == 2, broken.stderr[-2000:]
    by = {r["method"]: r for r in json.loads(broken.stdout)}
    assert by["vispath"]["error"] is None and by["vispath"]["answer"]["answer"]
    assert by["grasp"]["answer"] is None and "nonexistent.st" in by["grasp"]["error"]
    assert_one_line_error(run_kgqa("compare", q, "--methods", "vispath,nope"), "nope", code=2)
    assert_one_line_error(run_kgqa("compare", q, "-o", "nope.M1=3"), "nope", code=2)


def test_methods_lists_every_method_with_options_and_paper():
    proc = run_kgqa("methods", "--json")
    assert proc.returncode == 0, proc.stderr
    methods = {m["name"]: m for m in json.loads(proc.stdout)}
    vp = methods["vispath"]
    assert vp["arxiv"] == "2609.20843" and "VisPath" in vp["title"]
    assert {"M1", "Dmax", "selection"} <= {o["name"] for o in vp["options"]}
    assert "no_visual_intent" in vp["ablations"]
    text = run_kgqa("methods")
    assert text.returncode == 0 and "-o M1=30" in text.stdout


# --------------------------------------------------------------------------- what kgqa ask prints
@pytest.mark.parametrize("env", [{}, GRAPH_ONLY], ids=["default", "graph-only"])
def test_ask_says_once_that_no_llm_step_was_asked_and_prints_the_browser_link(demo_kg, settings, env):
    """The default CPU run asks the bundled 135M model nothing (llm_steps=auto: none, code off) and
    KGQA_CHAT_BACKEND=none has no model: both are graph-only by design, said in one line, not as a
    list of fallbacks (kgqa eval still counts them by code); the trace is handed off as a link."""
    proc = run_kgqa("ask", "--entity", "Q219913", "Who founded the company that builds the Falcon 9 rocket?", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.strip().splitlines()
    assert lines.count("graph-only (no LLM step asked)") == 1, proc.stdout
    assert not any(ln.startswith("fallbacks taken") for ln in lines), proc.stdout
    trace = next(ln.removeprefix("trace: ") for ln in lines if ln.startswith("trace: "))
    assert lines[-1].startswith(f"browser: http://127.0.0.1:{settings.neo4j_http_port}/browser/?") and trace in lines[-1]
    assert not any(ln.startswith("MATCH ") for ln in lines)
    opened = run_kgqa("trace", "open", trace)
    assert opened.returncode == 0 and opened.stdout.strip() == lines[-1].removeprefix("browser: "), opened.stderr
    shown = run_kgqa("trace", "show", trace)
    assert shown.returncode == 0 and shown.stdout.strip().splitlines()[-1] == lines[-1], shown.stderr
    assert_one_line_error(run_kgqa("trace", "open", "0123456789abcdef"), "no such trace", code=2)
