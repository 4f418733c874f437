"""PDFs as a user has them, on the real Neo4j with the real encoder: ``kgqa load documents`` of a folder of
PDFs, ``kgqa ask --method mkgrag`` citing the file and page (text, ``--json``, the trace, ``kgqa serve``), a
question scoped to chosen documents (``--doc``, ``--docs``, the HTTP API, the Python API), and each bad PDF
refused with one line before anything is written. The PDFs are written in the test (reportlab)."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.conftest import assert_one_line_error, run_kgqa
from tests.pdfs import FALCON, IMAGES, make_bomb_pdf, make_pdf, make_scanned_pdf

pytestmark = [pytest.mark.integration]

PUMPS = {
    "acme_pump": ("Acme pump manual", [("Operating limits", ["The Acme pump runs on 230 volts. The maximum operating "
                                                             "temperature of the Acme pump is 40 degrees."], [])]),
    "zeta_pump": ("Zeta pump manual", [("Operating limits", ["The Zeta pump runs on 110 volts. The maximum operating "
                                                             "temperature of the Zeta pump is 65 degrees."], [])]),
}
ENV = {"KGQA_CHAT_BACKEND": "none", "KGQA_DOC_EXTRACTOR": "cpu"}


@pytest.fixture(scope="module")
def pdfs(demo_kg, tmp_path_factory):
    """A folder of PDFs loaded with ``kgqa load documents`` (removed with the demo KG at the end)."""
    d = tmp_path_factory.mktemp("pdfs")
    make_pdf(d / "falcon_9.pdf", "Falcon 9", FALCON, page_break_before={"Notable launches"})
    for name, (title, sections) in PUMPS.items():
        make_pdf(d / f"{name}.pdf", title, sections)
    p = run_kgqa("load", "documents", str(d), "--json", env=ENV)
    assert p.returncode == 0, p.stderr
    return demo_kg, d, json.loads(p.stdout)


def ask(*args):
    p = run_kgqa("ask", *args, "--method", "mkgrag", env=ENV)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_load_reports_pages_and_saves_the_figure_where_its_image_node_points(pdfs, settings):
    graph, _, report = pdfs
    assert report["written"] == 3 and report["pages"] == 4 and report["figures"] == 1
    (row,) = graph.read("docs_show", id="falcon_9")
    assert row["document"]["format"] == "pdf" and row["document"]["pages"] == 2
    chunks = sorted(row["chunks"], key=lambda c: c["order"])
    assert all(c["page_start"] >= 1 and c["page_end"] >= c["page_start"] for c in chunks)
    assert chunks[-1]["page_end"] == 2
    rows = graph.read("trace_resolve", refs=[{"label": "Chunk", "id": "falcon_9#c0"}])
    assert rows
    # the figure: an Image node whose file exists under <data dir>/figures, its caption as the link's alt text
    from kgqa.core.graph import Graph

    with Graph(settings) as g, g.session() as s:
        rec = s.run("MATCH (:Chunk {doc_id: 'falcon_9'})-[h:HAS_IMAGE]->(i:Image) RETURN i.path AS path, "
                    "i.sha256 AS sha256, h.alt AS alt, h.page AS page").single()
    from pathlib import Path

    assert (rec["alt"], rec["page"]) == ("A Falcon 9 rocket lifting off", 1)
    # the figure is the JPEG the PDF embeds, byte for byte: saved under <data dir>/figures by its sha256, and
    # one Image node with the demo KG's picture of Falcon 9 (the node keeps the path it was first stored with)
    jpeg = (IMAGES / "falcon9_dscovr_launch.jpg").read_bytes()
    sha = hashlib.sha256(jpeg).hexdigest()
    assert (settings.figures_dir / f"{sha}.jpg").read_bytes() == jpeg
    assert rec["sha256"] == sha and Path(rec["path"]).read_bytes() == jpeg


def test_ask_cites_the_file_and_page_in_text_json_and_trace(pdfs):
    out = ask("Which observatory did Falcon 9 launch in February 2015?")
    assert "answer: Deep Space Climate Observatory" in out
    assert "source: falcon_9.pdf p. 2 \u00b7 Notable launches" in out
    p = run_kgqa("ask", "Which observatory did Falcon 9 launch in February 2015?", "--method", "mkgrag", "--json",
                 env=ENV)
    a = json.loads(p.stdout)
    sup = a["details"]["support"]
    assert (sup["file"], sup["page"], sup["citation"]) == ("falcon_9.pdf", 2, "falcon_9.pdf p. 2 \u00b7 Notable launches")
    cited = [e for e in a["evidence"] if e["kind"] == "chunk" and e["sentence"]]
    assert cited and cited[0]["page"] == 2 and cited[0]["source"] == "falcon_9.pdf"
    t = run_kgqa("trace", "show", a["trace_id"])
    assert "cited:    falcon_9.pdf p. 2 \u00b7 Notable launches" in t.stdout
    assert "falcon_9.pdf p. 2 \u00b7 Notable launches \u00b7 supporting sentence" in t.stdout


def test_an_answer_read_under_a_figure_lists_the_figure(pdfs):
    out = ask("How many engines power the first stage of Falcon 9?")
    assert "source: falcon_9.pdf p. 1 \u00b7 Overview" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("figure: "))
    assert line.startswith("figure: A Falcon 9 rocket lifting off (falcon_9.pdf p. 1): /")


def test_doc_scope_answers_from_the_chosen_document(pdfs, settings):
    q = "What is the maximum operating temperature of the pump?"
    unscoped = ask(q)                                            # both manuals give one; unscoped, Acme's
    assert "answer: 40 degrees" in unscoped and "source: acme_pump.pdf p. 1" in unscoped
    scoped = ask(q, "--doc", "zeta_pump")
    assert "answer: 65 degrees" in scoped and "scope: 1 documents: zeta_pump" in scoped
    assert "source: zeta_pump.pdf p. 1 \u00b7 Operating limits" in scoped
    assert "answer: 65 degrees" in ask(q, "--docs", "zeta_*.pdf")
    assert_one_line_error(run_kgqa("ask", q, "--method", "mkgrag", "--doc", "no_such_doc", env=ENV),
                          "--doc no_such_doc: no such document loaded", code=2)
    assert_one_line_error(run_kgqa("ask", q, "--method", "mkgrag", "--docs", "*.docx", env=ENV),
                          "--docs '*.docx': matches no loaded document", code=2)
    # the Python API
    from kgqa.app.pipeline import Pipeline

    s = settings.model_copy(update={"chat_backend": "none"})
    with Pipeline(s, method="mkgrag", write_trace=False) as pipe:
        assert pipe.answer(q, docs=["zeta_pump"]).answer == "65 degrees"
        assert pipe.answer(q, docs_glob="acme*").answer == "40 degrees"


def test_serve_returns_the_page_and_honours_the_scope(pdfs, settings, tmp_path):
    from fastapi.testclient import TestClient

    from kgqa.app import serve

    s = settings.model_copy(update={"chat_backend": "none", "api_token": None})
    q = "What is the maximum operating temperature of the pump?"
    with TestClient(serve.create_app(s)) as c:
        r = c.post("/ask", json={"question": q, "method": "mkgrag", "docs": ["zeta_pump"]})
        assert r.status_code == 200, r.text
        a = r.json()
        assert a["answer"] == "65 degrees" and a["details"]["support"]["citation"].startswith("zeta_pump.pdf p. 1")
        r = c.post("/ask", json={"question": q, "method": "mkgrag", "docs_glob": "nothing*"})
        assert r.status_code == 400 and "matches no loaded document" in r.text
        # the figure of the chunk the answer is read from: a link that fetches the image
        r = c.post("/ask", json={"question": "How many engines power the first stage of Falcon 9?",
                                 "method": "mkgrag", "docs": ["falcon_9"]})
        (fig,) = r.json()["details"]["figures"]
        assert fig["page"] == 1 and fig["caption"] == "A Falcon 9 rocket lifting off"
        img = c.get(fig["url"])
        assert img.status_code == 200 and img.content == (IMAGES / "falcon9_dscovr_launch.jpg").read_bytes()
        assert c.get("/images/" + "0" * 64).status_code == 404 and c.get("/images/x").status_code == 400


@pytest.mark.parametrize("case", ["encrypted", "truncated", "bomb", "too_many_pages"])
def test_a_bad_pdf_is_one_line_and_nothing_of_the_folder_is_written(demo_kg, tmp_path, case):
    good = make_pdf(tmp_path / "a_good.pdf", "Falcon 9", FALCON)
    env = dict(ENV)
    if case == "encrypted":
        make_pdf(tmp_path / "bad.pdf", "Secret", FALCON, encrypt="s3cret")
        want = "bad.pdf: encrypted PDF"
    elif case == "truncated":
        raw = good.read_bytes()
        (tmp_path / "bad.pdf").write_bytes(raw[: len(raw) // 2])
        want = "bad.pdf: truncated PDF"
    elif case == "bomb":
        make_bomb_pdf(tmp_path / "bad.pdf")
        want = "bad.pdf p. 1: figure 1 is 20000x20000 pixels"
    else:
        make_pdf(tmp_path / "bad.pdf", "Long", FALCON, page_break_before={"History", "Notable launches"})
        env["KGQA_PDF_MAX_PAGES"] = "2"
        want = "bad.pdf: PDF has 3 pages, over the 2-page limit"
    p = run_kgqa("load", "documents", str(tmp_path), env=env)
    assert_one_line_error(p, want, code=2)
    assert not demo_kg.read("docs_document_status", ids=["a_good", "bad"])     # nothing half-written


def test_scanned_pages_are_a_warning_and_the_figures_still_load(demo_kg, tmp_path):
    make_scanned_pdf(tmp_path / "scan.pdf", text_pages=2, image_pages=5)
    p = run_kgqa("load", "documents", str(tmp_path), "--no-ocr", env=ENV)
    assert p.returncode == 0, p.stderr
    assert ("OCR skipped (off: KGQA_OCR=false or --no-ocr): scan.pdf pages 3\u20137 (no text layer) and the text "
            "inside figures are not read") in p.stdout
    (row,) = demo_kg.read("docs_show", id="scan")
    assert row["document"]["n_images"] == 5


def test_docs_rm_removes_a_figure_file_only_with_its_last_image_node(demo_kg, settings, tmp_path):
    """A PDF's own figure goes with the document; a figure the demo KG also shows (its Image node stays,
    depicting an entity) keeps its file."""
    from PIL import Image

    own = tmp_path / "own.png"
    Image.new("RGB", (120, 80), (201, 17, 93)).save(own)
    d = tmp_path / "docs"
    d.mkdir()
    make_pdf(d / "red_panel.pdf", "Red panel", [("Panel", ["The red panel was painted in 1931."],
                                                  [(own, "The red panel")])])
    make_pdf(d / "launch_note.pdf", "Launch note", [("Launch", ["Falcon 9 flew again in 2016."],
                                                     [(IMAGES / "falcon9_dscovr_launch.jpg", "A launch")])])
    p = run_kgqa("load", "documents", str(d), env=ENV)
    assert p.returncode == 0, p.stderr
    shas = {}
    for doc in ("red_panel", "launch_note"):
        rows = demo_kg.read("docs_show", id=doc)
        assert rows
        with demo_kg.session() as s:
            shas[doc] = s.run("MATCH (:Chunk {doc_id: $d})-[:HAS_IMAGE]->(i:Image) RETURN i.sha256 AS sha",
                              {"d": doc}).single()["sha"]
    own_file = next(settings.figures_dir.glob(f"{shas['red_panel']}.*"))
    shared_file = next(settings.figures_dir.glob(f"{shas['launch_note']}.*"))
    r = run_kgqa("docs", "rm", "red_panel", env=ENV)
    assert r.returncode == 0, r.stderr
    assert "1 figure file" in r.stdout and not own_file.exists()
    r = run_kgqa("docs", "rm", "launch_note", env=ENV)
    assert r.returncode == 0, r.stderr
    assert "figure file" not in r.stdout and shared_file.exists()        # the demo KG's Image node still uses it
