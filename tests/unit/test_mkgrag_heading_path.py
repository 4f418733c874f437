"""mKG-RAG reads where a chunk stands (issue 59): a section of a multi-topic guide that says "the tower" lies under
"Eiffel Tower" in its heading path; the learned reader's names check accepts the name there, a span naming the
topic is not an answer, and the citation names the topic and section. The shipped span reader, no services."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa.models.heads import span_reader as S

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "reader" / S.CHECKPOINT_NAME
needs_checkpoint = pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped span-reader checkpoint")
GUIDE = "Towers of the world"


def design(topic: str, who: str, k: int, path: bool = True):
    from kgqa.methods.mkgrag.records import Chunk

    return Chunk(f"towers#c{k}", "towers", GUIDE, sections=["Design and construction"],
                 text=f"Design and construction\nThe tower was designed by {who}. It was completed after two years.",
                 heading_path=[GUIDE, topic, "Design and construction"] if path else [GUIDE])


def learned_read(model, question, chunks):
    from kgqa.methods.mkgrag.learned_reader import LearnedReader
    from kgqa.methods.mkgrag.reading import ReadRequest
    from kgqa.methods.mkgrag.records import Document

    return LearnedReader(model).read(ReadRequest(question, list(chunks), [], [Document("towers", GUIDE, 0.0)]))


@pytest.fixture(scope="module")
def reader():
    import torch

    torch.set_num_threads(1)
    return S.load_span_reader(SHIPPED)


@needs_checkpoint
def test_the_name_the_question_gives_is_found_in_the_heading_path(reader):
    chunks = [design("Tokyo Tower", "the architect Tachu Naito", 1),
              design("Eiffel Tower", "the engineers Maurice Koechlin and Emile Nouguier", 3)]
    r = learned_read(reader, "Who designed the Eiffel Tower?", chunks)
    assert r.answer and "Koechlin" in r.answer and r.candidate.chunk_id == "towers#c3"
    flat = [design("Eiffel Tower", "the engineers Maurice Koechlin and Emile Nouguier", 3, path=False)]
    r = learned_read(reader, "Who designed the Eiffel Tower?", flat)
    assert r.answer is None and "is not where the best span was read" in r.reason       # as before issue 59


def test_the_citation_and_the_context_name_the_topic_and_section():
    from dataclasses import replace

    from kgqa.methods.mkgrag.evidence import cited_under
    from kgqa.methods.mkgrag.records import Chunk

    c = design("Eiffel Tower", "the engineers", 3)
    assert cited_under(c, "Design and construction") == "Eiffel Tower \u203a Design and construction"
    assert cited_under(replace(c, heading_path=[GUIDE, "Eiffel Tower"]), "Design") == "Eiffel Tower \u203a Design"
    old = Chunk.from_row({"id": "f#c1", "doc_id": "f", "title": "Falcon 9", "heading_path": None})   # loaded before
    assert cited_under(old, "History") == "History" and old.label == "Falcon 9"                      # issue 59
    assert c.label == f"{GUIDE} \u203a Eiffel Tower \u203a Design and construction"
