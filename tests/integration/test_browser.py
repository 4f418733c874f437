"""The inspection path a user takes: the Cypher line `kgqa ask` printed, run in Neo4j Browser in a real
headless Chromium (scripts/browser_check.py, Playwright driving the system Chromium), with the
result frame showing the Question, its Path and the Entity nodes.

CI installs Debian's chromium (.ci/run); on a machine without a Chromium this test is skipped with
the reason (everything else about traces is tested without a browser).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.conftest import REPO, run_kgqa

pytestmark = [pytest.mark.integration, pytest.mark.slow]

_spec = importlib.util.spec_from_file_location("browser_check", REPO / "scripts" / "browser_check.py")
browser_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser_check)


@pytest.fixture(scope="module")
def chromium():
    path = browser_check.find_chromium()
    if path is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium; CI installs it)")
    pytest.importorskip("playwright.sync_api", reason="Playwright for Python (the dev extra)")
    return path


def test_the_ask_trace_line_draws_question_path_and_entities_in_neo4j_browser(kg, settings, chromium,
                                                                               tmp_path):
    p = run_kgqa("ask", "--entity", "Q741925", "Who manufactures the Falcon 9 rocket?",
                 env={"KGQA_CHAT_BACKEND": "none"}, timeout=900)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    trace = next(ln.removeprefix("trace: ") for ln in lines if ln.startswith("trace: "))
    cypher = lines[-1]
    assert cypher.startswith("MATCH (q:Question {id: '") and trace in cypher

    out = tmp_path / "browser-trace.png"
    res = browser_check.check(cypher, out, http_url=f"http://127.0.0.1:{settings.neo4j_http_port}",
                              bolt_url=settings.neo4j_uri, user=settings.neo4j_username,
                              password=settings.neo4j_password, chromium=chromium, timeout_s=180)
    assert res["errors"] == []
    assert {"Question", "Path", "Entity"} <= set(res["labels"]), res
    assert res["labels"]["Question"] == 1
    assert res["nodes_on_canvas"] >= 3 and res["relationships_on_canvas"] >= 2
    assert "Falcon 9" in " ".join(res["captions"])  # the start entity is drawn with its name
    assert out.stat().st_size > 10_000 and Path(out).read_bytes()[:4] == b"\x89PNG"
