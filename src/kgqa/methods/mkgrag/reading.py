"""What reads mKG-RAG's answer from the retrieved context: one ``Reader`` interface, three readers behind it.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA", Section 3.2.2, last paragraph: the retrieved graph elements and their source chunks go to an MLLM with the
image and the question. Here a ``Reader`` does that step; ``MKGRAG`` picks one by the ``reader`` option:

* ``llm_reader.LLMReader``: the paper's generation (the vision model with an image, the chat model without);
* ``learned_reader.LearnedReader``: the learned span reader over the same context (CPU, the default without a
  chat server);
* ``rule_reader.RuleReader``: word-cosine rules over the same context (CPU; ``reader=rules``, and the fallback
  when the learned reader's checkpoint cannot load).

Each takes one ``ReadRequest`` (the question and what stages 1 and 2 retrieved for it) and returns a
``records.Reading``; what a reader needs beyond the question (a model, its thresholds) it is built with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from kgqa.methods.mkgrag.records import Chunk, Document, Element, Reading, Retrieval


@dataclass(frozen=True)
class ReadRequest:
    """One question and its retrieved context, as every reader reads it."""

    question: str
    chunks: list[Chunk]                       # the context's chunks, best first
    elements: list[Element]                   # G_r (empty for chunks-only), best first
    documents: list[Document]                 # stage 1's documents, best first
    context: str = ""                         # the context as the LLM reads it (graph lines, then sources)
    image: Any = None                         # the question's image (core.images), or None
    image_note: str | None = None             # what the image shows (VisionModel.recognize)
    rank_scores: dict[str, float] = field(default_factory=dict)   # chunk id -> passage ranker's score

    @classmethod
    def of(cls, question: str, r: Retrieval, image=None) -> "ReadRequest":
        return cls(question, r.chunks, r.elements, r.documents, r.context, image, r.image_note, r.rank_scores)

    @property
    def subject_titles(self) -> dict[str, str]:
        """The top document's title by id: its subject is not an answer."""
        return {d.id: d.title for d in self.documents[:1]}

    @property
    def doc_titles(self) -> dict[str, str]:
        """Every retrieved document's title by id."""
        return {d.id: d.title for d in self.documents}


class Reader(Protocol):
    """Reads the answer of one question from its retrieved context."""

    def read(self, request: ReadRequest) -> Reading:
        ...
