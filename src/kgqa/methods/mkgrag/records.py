"""The records of one mKG-RAG question: documents, chunks and graph elements retrieved, the retrieval as a whole
(stages 1 and 2, the context), and a reader's answer with the candidate it was read from.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA", Section 3.2. A chunk is a ``Chunk`` from the Cypher row onward (``Chunk.from_row``); everything one
question needs lives in its ``Retrieval``, so one ``MKGRAG`` may answer several questions at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from kgqa.core.result import Fallback


@dataclass
class Document:
    """A document recalled by stage 1 (Eq. 2), with its cosine to the query."""

    id: str
    title: str
    cos: float


@dataclass
class Chunk:
    """A chunk of a loaded document: a row of ``mkgrag_chunks``, ``mkgrag_chunk_search`` or ``mkgrag_chunk_pages``
    (``kgqa.cypher``), and once fitted into the context its cosine to the query (``cos``)."""

    id: str
    doc_id: str | None
    title: str | None = None
    text: str = ""
    sections: list[str] = field(default_factory=list)
    heading_path: list[str] = field(default_factory=list)   # document title › topic › section (loaded before
    #                                                          issue 59: empty)
    order: int | None = None
    tokens: int | None = None
    sim: float | None = None            # Neo4j's (1 + cos) / 2 to the query (absent from mkgrag_chunk_pages)
    cos: float | None = None            # the cosine, set when the chunk is put in the context
    source: str | None = None           # the document's file or url
    format: str | None = None
    page_start: int | None = None       # a PDF chunk's pages (None otherwise)
    page_end: int | None = None
    page_offsets: list[int] | None = None
    page_numbers: list[int] | None = None
    figures: list[dict] = field(default_factory=list)   # the chunk's images: sha256, path, caption, page

    @classmethod
    def from_row(cls, row: dict) -> "Chunk":
        """The chunk of a Cypher row (missing columns keep their defaults; no sections or figures: empty)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in row.items() if k in known}
        values["sections"] = list(row.get("sections") or [])
        values["heading_path"] = list(row.get("heading_path") or [])
        values["figures"] = list(row.get("figures") or [])
        return cls(**values)

    @property
    def label(self) -> str:
        """Where the chunk stands, as the context and the passage ranker give it: its heading path (document title ›
        topic › section), else its document's title."""
        return " \u203a ".join(self.heading_path) or self.title or ""

    def row(self) -> dict:
        """The chunk as the Cypher row it came from (``kgqa.core.citation`` reads rows)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class Element:
    """One graph element of G_r (an entity or a relation) with its cosine to the query."""

    kind: str                         # entity | relation
    id: str
    doc_id: str
    text: str                         # the line put in the context
    sim: float                        # cosine (converted from Neo4j's (1 + cos) / 2)
    chunk_ids: list[str]
    name: str = ""
    head_id: str | None = None
    tail_id: str | None = None
    region: dict | None = None
    hop: int = 0                      # 0 = G_r^0, k = added by expansion hop k
    phrase: str = ""                  # a relation's words that state it, and its relation catalogue name (CPU
    relation_name: str = ""           # extractor; empty from the LLM extractor)


@dataclass
class Retrieval:
    """One question's retrieval: the query, stage 1's documents, stage 2's G_r, the context and what it cost."""

    query_text: str
    image_note: str | None
    documents: list[Document] = field(default_factory=list)   # stage 1, best first
    elements: list[Element] = field(default_factory=list)     # G_r, best first
    chunks: list[Chunk] = field(default_factory=list)         # in the context, best first
    context: str = ""
    context_tokens: int = 0
    fallbacks: list[Fallback] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    scope: list[str] = field(default_factory=list)             # the --doc/--docs scope, when given
    rank_scores: dict[str, float] = field(default_factory=dict)  # chunk id -> passage ranker's score (those ranked)


@dataclass
class Candidate:
    """A CPU reader's candidate answer: a span of a sentence (or a G_r node) with where it was read and its score."""

    text: str
    kind: str
    sentence: str
    heading: str
    chunk_id: str | None
    doc_id: str | None
    start: int = -1                    # the span's offset in the sentence (-1: a graph node)
    from_graph: bool = False
    score: float = 0.0
    sentence_cos: float = 0.0
    span: str = ""                     # the span it was read from when that differs (a date's year)


@dataclass
class Reading:
    """A reader's answer (``reading.Reader``): None when it abstained, ``reason`` says why or how it answered."""

    answer: str | None
    answer_type: str | None            # the CPU readers' type of the question (answer_types; None: the LLM reader)
    type_noun: str | None
    candidate: Candidate | None        # the CPU readers' best candidate, also when they abstained
    candidates: int
    reason: str
    debug: list | None = None          # every candidate, best first (the rule reader's ``debug=True``)
    reader_name: str = "rules"         # rules | learned | llm: which reader read it
    fallback: Fallback | None = None   # the LLM reader's answer fallback, when it took one
