"""PDFs into sections, pages and figures (kgqa.loaders.documents.pdf), and each bad PDF as one line.

Real PDFs written in the test (reportlab, or by hand for the decompression bomb); no services."""

from __future__ import annotations

import pytest

from kgqa.core.citation import cite, page_at, sentence_page
from kgqa.core.errors import InvalidInput
from kgqa.loaders.documents.discover import discover
from kgqa.loaders.documents.options import DocOptions
from kgqa.loaders.documents.pdf import page_ranges, parse_pdf
from kgqa.loaders.documents.segment import segment
from kgqa.loaders.rejects import Rejects
from tests.pdfs import FALCON, IMAGES, make_bomb_pdf, make_pdf, make_scanned_pdf


def words(text: str) -> int:
    return len(text.split())


def parse(path, strict=True, **opts):
    by_reason: dict[str, int] = {}
    doc = parse_pdf(path, path.stem, DocOptions(**opts), Rejects(strict, by_reason=by_reason))
    return doc, by_reason


def test_outline_sections_pages_and_figure_with_caption(tmp_path):
    pdf = make_pdf(tmp_path / "falcon_9.pdf", "Falcon 9", FALCON, page_break_before={"Notable launches"})
    doc, _ = parse(pdf)
    assert doc.title == "Falcon 9" and doc.format == "pdf" and doc.pages == 2
    assert [(s.heading, s.page) for s in doc.sections] == [("Overview", 1), ("History", 1), ("Notable launches", 2)]
    assert "Falcon 9 first flew on 4 June 2010." in doc.sections[1].text
    assert not doc.sections[0].text.startswith("Falcon 9\n")          # the title line is the title, not text
    (fig,) = doc.images                                                 # the figure, in the section it is under
    assert doc.sections[0].images == [fig] and fig.page == 1
    assert fig.alt == "A Falcon 9 rocket lifting off"                   # its caption, "Figure 1:" dropped
    assert fig.mime == "image/jpeg" and (fig.width, fig.height) == (512, 342)


def test_chunks_record_their_pages_and_a_sentence_is_cited_on_its_page(tmp_path):
    paras = [f"Sentence number {i} of the long section says the valve {i} opens at {i * 3} bar." for i in range(60)]
    pdf = make_pdf(tmp_path / "valves.pdf", "Valves", [("Pressures", paras, [])])
    doc, _ = parse(pdf)
    assert doc.pages >= 3 and {s.heading for s in doc.sections} == {"Pressures"}
    assert [s.cont for s in doc.sections] == [False] + [True] * (len(doc.sections) - 1)
    chunks = segment(doc, words, chunk_tokens=4000)                     # one chunk over every page
    (c,) = chunks
    assert c.page_span == (1, doc.pages) and c.text.count("Pressures") == 1   # the heading printed once
    row = {"text": c.text, "page_start": c.page_span[0], "page_end": c.page_span[1],
           "page_offsets": [o for o, _ in c.pages], "page_numbers": [p for _, p in c.pages]}
    for s in doc.sections:                                              # every sentence cited on its own page
        first = s.text.split(". ")[0]
        assert sentence_page(row, first) == s.page
    small = segment(doc, words, chunk_tokens=120)
    assert all(ch.pages for ch in small) and small[-1].page_span[1] == doc.pages


def test_without_an_outline_font_size_headings_are_sections(tmp_path):
    pdf = make_pdf(tmp_path / "plain.pdf", "Plain", FALCON, outline=False)
    doc, _ = parse(pdf)
    assert [s.heading for s in doc.sections] == ["Overview", "History", "Notable launches"]


def test_scanned_pages_are_reported_and_their_figures_still_load(tmp_path):
    pdf = make_scanned_pdf(tmp_path / "scan.pdf", text_pages=2, image_pages=5)
    doc, _ = parse(pdf)
    assert doc.no_text_pages == [3, 4, 5, 6, 7]
    assert page_ranges(doc.no_text_pages) == "pages 3\u20137"
    assert [im.page for im in doc.images] == [3, 4, 5, 6, 7]          # each page's figure
    assert len({im.sha256 for im in doc.images}) == 1                # the same scan: one Image node, by sha256
    assert "40 degrees" in doc.sections[0].text


def test_a_pdf_with_no_text_and_no_figure_is_refused(tmp_path):
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(tmp_path / "blank.pdf"))
    c.showPage()
    c.showPage()
    c.save()
    with pytest.raises(InvalidInput, match=r"blank\.pdf: no text and no figures: pages 1\u20132 have no text "
                                           r"\(scanned\?\); no OCR asked"):
        parse(tmp_path / "blank.pdf")


@pytest.mark.parametrize("case", ["encrypted", "truncated", "corrupt", "not_pdf", "too_large", "too_many_pages",
                                  "bomb"])
def test_each_bad_pdf_is_one_line_naming_the_file(tmp_path, case):
    opts = {}
    if case == "encrypted":
        pdf = make_pdf(tmp_path / "x.pdf", "Secret", FALCON, encrypt="s3cret")
        msg = "x.pdf: encrypted PDF: it needs a password"
    elif case == "truncated":
        good = make_pdf(tmp_path / "good.pdf", "Falcon 9", FALCON).read_bytes()
        pdf = tmp_path / "x.pdf"
        pdf.write_bytes(good[: len(good) * 2 // 3])
        msg = "x.pdf: truncated PDF (no %%EOF at its end"
    elif case == "corrupt":
        pdf = tmp_path / "x.pdf"
        pdf.write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 40 + b"\n%%EOF\n")
        msg = "x.pdf: damaged PDF: PDFium cannot open it"
    elif case == "not_pdf":
        pdf = tmp_path / "x.pdf"
        pdf.write_text("just text with a .pdf name")
        msg = "x.pdf: not a PDF (no %PDF- header)"
    elif case == "too_large":
        pdf = make_pdf(tmp_path / "x.pdf", "Falcon 9", FALCON)
        opts = {"pdf_max_bytes": 1000}
        msg = f"x.pdf: PDF is {pdf.stat().st_size / 2**20:.2f} MB, over the 0.00 MB limit (KGQA_PDF_MAX_MB)"
    elif case == "too_many_pages":
        pdf = make_pdf(tmp_path / "x.pdf", "Falcon 9", FALCON, page_break_before={"History", "Notable launches"})
        opts = {"pdf_max_pages": 2}
        msg = "x.pdf: PDF has 3 pages, over the 2-page limit (KGQA_PDF_MAX_PAGES)"
    else:
        pdf = make_bomb_pdf(tmp_path / "x.pdf")
        msg = "x.pdf p. 1: figure 1 is 20000x20000 pixels, over the 64,000,000-pixel limit (a decompression bomb?)"
    with pytest.raises(InvalidInput) as e:
        parse(pdf, **opts)
    line = str(e.value)
    assert msg in line and "\n" not in line
    # lenient: skipped and counted by reason; the bomb's page still loads without its figure
    doc, by_reason = parse(pdf, strict=False, **opts)
    assert sum(by_reason.values()) == 1
    if case == "bomb":
        assert doc is not None and not doc.images and "harmless" in doc.sections[0].text
    else:
        assert doc is None


def test_discover_reads_pdfs_beside_markdown(tmp_path):
    make_pdf(tmp_path / "falcon_9.pdf", "Falcon 9", FALCON)
    (tmp_path / "note.md").write_text("# Note\n\n## Body\n\nA note.\n")
    docs = discover(tmp_path, DocOptions(), Rejects(True))
    assert {(d.id, d.format) for d in docs} == {("falcon_9", "pdf"), ("note", "markdown")}


def test_citation_lines():
    assert cite("/data/manuals/pump.pdf", 12, "Maintenance") == "pump.pdf p. 12 \u00b7 Maintenance"
    assert cite("/d/pump.pdf", None, "Intro", pages=(3, 4)) == "pump.pdf pp. 3\u20134 \u00b7 Intro"
    assert cite("/d/note.md", None, "Body") == "note.md \u00b7 Body"
    assert page_at([0, 120, 400], [3, 4, 5], 399) == 4 and page_at([0, 120], [3, 4], 0) == 3
    assert IMAGES.is_dir()


# --------------------------------------------------------------------------- a document's structure (issue 59)
def test_outline_entries_keep_their_level_and_each_section_its_whole_path(tmp_path):
    from tests.pdfs import TOWERS, make_guide_pdf

    doc, _ = parse(make_guide_pdf(tmp_path / "towers.pdf", "Towers of the world", TOWERS))
    assert doc.title == "Towers of the world"
    assert [s.path for s in doc.sections] == [("Eiffel Tower", "Overview"), ("Eiffel Tower", "Design and construction"),
                                              ("Tokyo Tower", "Overview"), ("Tokyo Tower", "Design and construction")]


@pytest.mark.parametrize("numbered", [False, True])
def test_without_an_outline_heading_levels_are_learnt_from_the_type_sizes(tmp_path, numbered):
    from tests.pdfs import TOWERS, make_guide_pdf

    pdf = make_guide_pdf(tmp_path / "towers.pdf", "Towers of the world", TOWERS, outline=False, numbered=numbered)
    doc, _ = parse(pdf)
    n = (lambda k, h: f"{k} {h}") if numbered else (lambda k, h: h)
    assert [s.path for s in doc.sections] == [(n(1, "Eiffel Tower"), n("1.1", "Overview")),
                                              (n(1, "Eiffel Tower"), n("1.2", "Design and construction")),
                                              (n(2, "Tokyo Tower"), n("2.1", "Overview")),
                                              (n(2, "Tokyo Tower"), n("2.2", "Design and construction"))]


def test_heading_levels_order_sizes_then_numbering():
    from kgqa.loaders.documents.pdf import heading_levels

    styles = [(18.0, True, 0), (14.0, True, 1), (12.0, True, 2), (12.0, True, 3), (14.0, True, 0), (10.0, True, 0)]
    assert heading_levels(styles) == {(18.0, True, 0): 1, (14.0, True, 1): 2, (14.0, True, 0): 2,
                                      (12.0, True, 2): 3, (12.0, True, 3): 4, (10.0, True, 0): 5}


@pytest.mark.parametrize("outline", [True, False])
def test_a_chunk_never_crosses_a_topic_and_carries_the_heading_path(tmp_path, outline):
    from tests.pdfs import TOWERS, make_guide_pdf

    doc, _ = parse(make_guide_pdf(tmp_path / "towers.pdf", "Towers of the world", TOWERS, outline=outline))
    chunks = segment(doc, words, chunk_tokens=4000)                 # room for the whole guide in one chunk
    assert [c.heading_path for c in chunks] == [["Towers of the world", "Eiffel Tower"],
                                                ["Towers of the world", "Tokyo Tower"]]
    assert "Tokyo" not in chunks[0].text and "Eiffel" not in chunks[1].text
    small = segment(doc, words, chunk_tokens=12)                     # one section a chunk: its whole path
    assert ["Towers of the world", "Eiffel Tower", "Design and construction"] in [c.heading_path for c in small]
