"""The inspection path a user takes: the Neo4j Browser link `kgqa ask` printed (and `kgqa trace open`
prints again), opened in a real headless Chromium (scripts/browser_check.py, Playwright driving the
system Chromium): the connect form comes filled in, the editor holds the trace query, and running it
draws the Question, its Paths and the Entity nodes, with the facts between them and the Relation
nodes that name the facts' property ids.

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


def test_the_ask_link_opens_neo4j_browser_on_the_trace_with_its_relations_named(kg, settings, chromium,
                                                                               tmp_path):
    from kgqa.core.trace import browser_cypher

    p = run_kgqa("ask", "--entity", "Q741925", "Who manufactures the Falcon 9 rocket?",
                 env={"KGQA_CHAT_BACKEND": "none"}, timeout=900)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    trace = next(ln.removeprefix("trace: ") for ln in lines if ln.startswith("trace: "))
    url = lines[-1].removeprefix("browser: ")
    assert lines[-1].startswith("browser: ") and " " not in url
    assert url.startswith(f"http://127.0.0.1:{settings.neo4j_http_port}/browser/?") and trace in url
    opened = run_kgqa("trace", "open", trace)
    assert opened.returncode == 0 and opened.stdout.strip() == url, opened.stderr

    out = tmp_path / "browser-trace.png"
    res = browser_check.check(url, out, password=settings.neo4j_password, chromium=chromium, timeout_s=180)
    assert res["errors"] == []
    # the link filled in the connect form (server and user) and the editor (the trace query, run as it is)
    host, port = settings.neo4j_uri.split("://")[1].split(":")
    assert res["connect_form"]["address"] == f"{host}:{port}" and res["connect_form"]["user"] == settings.neo4j_username
    assert res["query"] == browser_cypher(trace)
    assert {"Question", "Path", "Entity"} <= set(res["labels"]), res
    assert res["labels"]["Question"] == 1
    assert res["nodes_on_canvas"] >= 3 and res["relationships_on_canvas"] >= 2
    assert "Falcon 9" in " ".join(res["captions"])  # the start entity is drawn with its name
    # the facts are drawn typed by property id, and every such type has its Relation node with its name
    fact_types = {c for c in res["relationship_captions"] if c[:1] == "P" and c[1:].isdigit()}
    assert "P176" in fact_types, res["relationship_captions"]
    named = dict(res["relations"])
    assert named.get("P176") == "manufacturer" and fact_types <= set(named), res["relations"]
    assert res["labels"]["Relation"] == len(named)
    assert out.stat().st_size > 10_000 and Path(out).read_bytes()[:4] == b"\x89PNG"


def test_a_pdf_answers_trace_shows_its_page_and_its_figure_in_browser(demo_kg, settings, chromium, tmp_path):
    """mKG-RAG over a PDF: the trace Browser draws the chunk the answer was read from with its figure (the
    Image node, linked by HAS_IMAGE), and the Question carries the page citation."""
    from tests.pdfs import FALCON, make_pdf

    env = {"KGQA_CHAT_BACKEND": "none", "KGQA_DOC_EXTRACTOR": "cpu"}
    d = tmp_path / "pdfs"
    d.mkdir()
    make_pdf(d / "falcon_9.pdf", "Falcon 9", FALCON, page_break_before={"Notable launches"})
    p = run_kgqa("load", "documents", str(d), env=env)
    assert p.returncode == 0, p.stderr
    p = run_kgqa("ask", "How many engines power the first stage of Falcon 9?", "--method", "mkgrag", env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert any(ln.startswith("figure: ") for ln in lines), p.stdout
    url = lines[-1].removeprefix("browser: ")
    res = browser_check.check(url, tmp_path / "pdf-trace.png", password=settings.neo4j_password,
                              chromium=chromium, timeout_s=180)
    assert res["errors"] == []
    assert {"Question", "Chunk", "Image"} <= set(res["labels"]), res["labels"]
    assert "HAS_IMAGE" in res["relationship_captions"] and "USED" in res["relationship_captions"]
    assert "falcon_9.pdf p. 1" in res["table"]              # the cited page, on the Question and its USED link
