"""OCR of a PDF's scanned pages and of the text inside its figures (kgqa.loaders.documents.ocr), with the real
engine (Debian's tesseract-ocr, which `.ci/run` installs) on PDFs typeset in the test; and without it, found
absent by PATH or switched off, the pages reported and the rest parsed. No services."""

from __future__ import annotations

import shutil

import pytest

from kgqa.loaders.documents.ocr import after_caption, page_ocr
from kgqa.loaders.documents.options import DocOptions
from kgqa.loaders.documents.pdf import parse_pdf
from kgqa.loaders.documents.segment import segment
from kgqa.loaders.rejects import Rejects
from tests.pdfs import make_orca_scan, make_pdf, text_figure

needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None,
                                     reason="tesseract-ocr is not installed (apt-get install tesseract-ocr)")


def parse(path, reader):
    return parse_pdf(path, path.stem, DocOptions(ocr_reader=reader), Rejects(True))


@needs_tesseract
def test_an_image_only_page_is_read_and_keeps_its_page(tmp_path):
    pdf = make_orca_scan(tmp_path / "orca.pdf")
    ocr = page_ocr(True, tmp_path / "cache")
    doc = parse(pdf, ocr)
    assert doc.no_text_pages == [] and ocr.pages == 1 and doc.ocr.startswith("ocr:tesseract")
    (two,) = [s for s in doc.sections if s.page == 2]
    assert "relief valve of the Orca pump opens at 12 bar" in two.text
    assert "12 bar" not in " ".join(s.text for s in doc.sections if s.page != 2)
    assert two.images == []                     # the scan read whole is the page, not a figure of it
    # a reload reads the page from the cache: the same text, the engine not run again
    again = page_ocr(True, tmp_path / "cache")
    assert [s.text for s in parse(pdf, again).sections] == [s.text for s in doc.sections]
    assert again.pages == 1 and again.engine_pages == 0


@needs_tesseract
def test_an_ocr_page_is_chunked_as_a_text_page_is(tmp_path):
    # a scan kept as a figure made the page one chunk however long (a figure's section is kept whole), its text
    # mostly beyond the encoder's window: an OCR'd page is cut at sentence ends like any other, each piece on it
    doc = parse(make_orca_scan(tmp_path / "orca.pdf"), page_ocr(True, tmp_path / "cache"))
    chunks = segment(doc, lambda t: len(t.split()), 12)
    on_two = [c for c in chunks if c.page_span == (2, 2)]
    assert len(on_two) >= 2 and not any(c.images for c in on_two)
    assert "relief valve of the Orca pump opens at 12 bar" in " ".join(" ".join(c.text.split()) for c in on_two)


@needs_tesseract
def test_the_text_inside_a_figure_is_a_paragraph_of_its_page(tmp_path):
    fig = text_figure(tmp_path / "diagram.png", ["inlet port P1", "outlet port P2"])
    pdf = make_pdf(tmp_path / "ports.pdf", "Ports", [("Ports", ["The ports are shown below."],
                                                      [(fig, "Figure 1: The ports")])])
    ocr = page_ocr(True, None)
    doc = parse(pdf, ocr)
    text = "\n".join(s.text for s in doc.sections)
    assert "inlet port P1" in text and "outlet port P2" in text and ocr.figures == 1


def test_without_the_engine_the_page_is_reported_and_the_rest_parses(tmp_path, monkeypatch):
    pdf = make_orca_scan(tmp_path / "orca.pdf")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))          # no tesseract on PATH
    absent = page_ocr(True, None)
    assert absent.engine is None and absent.skipped == ["tesseract is not installed: apt-get install tesseract-ocr"]
    off = page_ocr(False, None)
    assert off.skipped == ["off: KGQA_OCR=false or --no-ocr"]
    for reader in (absent, off):
        doc = parse(pdf, reader)
        assert doc.no_text_pages == [2] and doc.ocr == ""
        (two,) = [s for s in doc.sections if s.page == 2]
        assert two.text == "" and len(two.images) == 1                 # the scan itself, as a figure
        assert "2,000 hours" in doc.sections[-1].text


#: a page of a pump manual: its figure (a diagram's labels, read by OCR) printed between paragraphs of text
PORTS = [" ".join(f"The pump housing holds part {i} of the drive." for i in range(k * 6, k * 6 + 6)) for k in range(4)]


def _ports_pdf(tmp_path):
    from reportlab.lib.pagesizes import A4

    fig = text_figure(tmp_path / "diagram.png", ["inlet port P1", "outlet port P2"])
    return make_pdf(tmp_path / "ports.pdf", "Ports", [("Ports", PORTS, [(fig, "Figure 1: The ports of the pump")])],
                    page_size=A4)


@needs_tesseract
def test_a_figure_page_is_cut_as_a_text_page_and_the_figure_keeps_its_caption_and_words(tmp_path):
    # a page's part with a figure was one chunk however long (2,000-3,200 characters on issue 59's yardstick, beyond
    # the ranker's and the reader's window): cut at sentence ends like a text page, the figure in the piece that holds
    # its caption, and the words OCR read in it beside that caption rather than after the page's last line
    doc = parse(_ports_pdf(tmp_path), page_ocr(True, None))
    chunks = segment(doc, lambda t: len(t.split()), 40)
    assert len(chunks) >= 4 and all(c.tokens <= 40 for c in chunks)
    (home,) = [c for c in chunks if c.images]
    flat = " ".join(home.text.split())
    assert "The ports of the pump" in flat and "inlet port P1" in flat
    joined = " ".join(" ".join(c.text.split()) for c in chunks)
    for i in range(24):                                        # nothing dropped
        assert f"holds part {i} of the drive." in joined


def test_without_ocr_a_long_figure_page_is_cut_too_and_its_figure_goes_with_its_caption(tmp_path):
    doc = parse(_ports_pdf(tmp_path), page_ocr(False, None))
    chunks = segment(doc, lambda t: len(t.split()), 40)
    (home,) = [c for c in chunks if c.images]
    assert len(chunks) >= 4 and "The ports of the pump" in " ".join(home.text.split())


def test_a_short_figure_section_stays_one_chunk_with_its_figure(tmp_path):
    fig = text_figure(tmp_path / "diagram.png", ["inlet port P1"])
    pdf = make_pdf(tmp_path / "short.pdf", "Ports", [("Ports", ["The ports are shown above."],
                                                       [(fig, "Figure 1: The ports")])])
    doc = parse(pdf, page_ocr(False, None))
    (chunk,) = segment(doc, lambda t: len(t.split()), 40)
    assert chunk.images and "The ports are shown above." in chunk.text


def test_a_figures_words_follow_its_caption_paragraph():
    text = "First paragraph.\n\nFigure 2: The\nvalve diagram\n\nLast paragraph."
    assert after_caption(text, "The valve diagram", "V1 open") == \
        "First paragraph.\n\nFigure 2: The\nvalve diagram\n\nV1 open\n\nLast paragraph."
    assert after_caption("Only text.", "absent caption", "V1 open") == "Only text.\n\nV1 open"
    assert after_caption("Only text.", "", "V1 open") == "Only text.\n\nV1 open"
