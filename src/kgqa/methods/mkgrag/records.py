"""The records of one mKG-RAG question: the graph elements of G_r and the retrieval (stages 1 and 2, the context).

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA", Section 3.2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgqa.core.result import Fallback


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
    query_text: str
    image_note: str | None
    documents: list[dict] = field(default_factory=list)       # {id, title, cos}
    elements: list[Element] = field(default_factory=list)
    chunks: list[dict] = field(default_factory=list)          # in the context, best first
    context: str = ""
    context_tokens: int = 0
    fallbacks: list[Fallback] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    scope: list[str] = field(default_factory=list)             # the --doc/--docs scope, when given
    rank_scores: dict[str, float] = field(default_factory=dict)  # chunk id -> passage ranker's score (those ranked)


@dataclass
class Candidate:
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
    answer: str | None
    answer_type: str
    type_noun: str | None
    candidate: Candidate | None
    candidates: int
    reason: str
    debug: list | None = None          # every candidate, best first (``debug=True``)
    cpu_reader: str = "rules"          # rules (this module) | learned (learned.py)
