"""The page an mKG-RAG answer cites (issue 59): in a chunk whose text runs over two pages, the page the supporting
sentence is printed on, from the page offsets the chunk keeps. A real PDF (reportlab), the loader's parse and
segmentation, the shipped span reader; no services."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa.models.heads import span_reader as S
from tests.pdfs import make_pdf

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "reader" / S.CHECKPOINT_NAME
FACT = "The relief valve of the Kestrel pump opens at 14 bar."


@pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped span-reader checkpoint")
def test_an_answer_on_the_second_page_of_a_two_page_chunk_cites_that_page(tmp_path):
    import torch

    from kgqa.loaders.documents.options import DocOptions
    from kgqa.loaders.documents.pdf import parse_pdf
    from kgqa.loaders.documents.segment import segment
    from kgqa.loaders.rejects import Rejects
    from kgqa.methods.mkgrag.evidence import chunk_evidence, locate, support_of
    from kgqa.methods.mkgrag.learned_reader import LearnedReader
    from kgqa.methods.mkgrag.reading import ReadRequest
    from kgqa.methods.mkgrag.records import Chunk, Document

    filler = [f"Housing {i} of the pump line is inspected every spring by the maintenance crew." for i in range(12)]
    pdf = make_pdf(tmp_path / "pumps.pdf", "Pump line", [("Maintenance", filler + [FACT], [])])
    doc = parse_pdf(pdf, "pumps", DocOptions(), Rejects(True))
    (seg,) = segment(doc, lambda t: len(t.split()), chunk_tokens=4000)       # one chunk over both pages
    assert seg.page_span == (1, 2) and [s.page for s in doc.sections if "Kestrel" in s.text] == [2]
    chunk = Chunk(seg.id, "pumps", "Pump line", text=seg.text, sections=seg.sections, heading_path=seg.heading_path,
                  source=str(pdf), page_start=1, page_end=2, page_offsets=[o for o, _ in seg.pages],
                  page_numbers=[p for _, p in seg.pages])
    torch.set_num_threads(1)
    reading = LearnedReader(S.load_span_reader(SHIPPED)).read(
        ReadRequest("At what pressure does the relief valve of the Kestrel pump open?", [chunk], [],
                    [Document("pumps", "Pump line", 0.0)]))
    assert reading.answer and "14 bar" in reading.answer
    support = locate(support_of(reading.answer, [chunk], reading), chunk)
    assert support["page"] == 2 and support["citation"] == "pumps.pdf p. 2 \u00b7 Maintenance"
    ev = chunk_evidence(chunk, 1, "Pump line", support["sentence"], support["section"])
    assert ev.page == 2 and ev.pages == [1, 2]
