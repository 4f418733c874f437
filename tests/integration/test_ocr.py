"""OCR as a user meets it, on the real Neo4j with the real encoder and reader: a PDF with a scanned page is
loaded with ``kgqa load documents``, the question whose answer is printed only on the scan is answered and cited
on that page; without the engine (PATH without tesseract) one line says what is not read and the rest loads.
The PDFs are typeset in the test (reportlab) and one page rasterised to an image-only page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kgqa.core.config import Settings
from tests.conftest import run_kgqa
from tests.pdfs import make_orca_scan

pytestmark = [pytest.mark.integration]
ENV = {"KGQA_CHAT_BACKEND": "none", "KGQA_DOC_EXTRACTOR": "cpu"}
QUESTION = "At what pressure does the relief valve of the Orca pump open?"


@pytest.fixture
def orca(demo_kg, tmp_path):
    """The Orca manual with a scanned page, in a folder of its own; its document removed before and after (the
    tests share one graph and one id)."""
    run_kgqa("docs", "rm", "orca", env=ENV)
    shutil.rmtree(Path(Settings().data_dir) / "ocr-cache", ignore_errors=True)     # read, not recalled
    make_orca_scan(tmp_path / "orca.pdf")
    yield tmp_path
    run_kgqa("docs", "rm", "orca", env=ENV)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
def test_a_scanned_page_is_answered_through_ocr_and_cited_with_its_page(orca, tmp_path):
    p = run_kgqa("load", "documents", str(tmp_path), env=ENV)
    assert p.returncode == 0, p.stderr
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("OCR: "))
    assert line.startswith("OCR: 1 pages read (") and "pages/min" in line
    a = run_kgqa("ask", QUESTION, "--method", "mkgrag", "--json", env=ENV)
    assert a.returncode == 0, a.stderr
    ans = json.loads(a.stdout)
    assert ans["answer"] == "12 bar"
    assert ans["details"]["support"]["citation"].startswith("orca.pdf p. 2")


def test_without_the_engine_one_line_says_what_is_not_read_and_the_rest_loads(orca, tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    p = run_kgqa("load", "documents", str(tmp_path), "--json", env={**ENV, "PATH": str(empty)})
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert report["written"] == 1 and report["ocr_pages"] == 0 and report["no_text_pages"] == 1
    assert report["ocr_skipped"] == "tesseract is not installed: apt-get install tesseract-ocr"
    assert report["ocr_unread"] == ["orca.pdf page 2"] and report["warnings"] == []
    p = run_kgqa("load", "documents", str(tmp_path), "--force", env={**ENV, "PATH": str(empty)})
    said = [ln for ln in p.stdout.splitlines() if "OCR" in ln]
    assert said == ["OCR skipped (tesseract is not installed: apt-get install tesseract-ocr): orca.pdf page 2 "
                    "(no text layer) and the text inside figures are not read"]
    a = run_kgqa("ask", "How often are the seals of the Orca pump replaced?", "--method", "mkgrag", "--json",
                 env=ENV)
    assert "2,000 hours" in json.loads(a.stdout)["answer"]          # read from a page with a text layer
