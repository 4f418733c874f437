"""What a method returns for one question: the answer, its typed evidence, fallbacks, cost.

Shared by every method (VisPath, mKG-RAG, GraSP), ``kgqa ask``, ``kgqa compare``,
``kgqa eval`` and the trace writer. Evidence items point at real graph nodes by label
and id, so one trace writer can link any method's evidence in Neo4j:

* ``PathEvidence``     a chain of KG steps, head -[relation]-> tail (VisPath's paths,
                       GraSP's selected paths)
* ``ChunkEvidence``    a document chunk put in the context (mKG-RAG)
* ``SubgraphEvidence`` nodes and edges with weights (GraSP's subgraph, mKG-RAG's
                       query-specific graph)

Labels a trace may link to are ``TRACE_LABELS``; anything else is refused.

``Answer.details`` is the method's own, except the keys of ``Details``, which the app reads
(``kgqa ask`` prints ``grounding``; ``kgqa eval`` scores the other four); a method sets those it has.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal, TypedDict, Union

#: Node labels evidence may point at (the trace writer links only these, by id).
TRACE_LABELS = ("Entity", "DocEntity", "Chunk", "Document", "Image")


@dataclass
class Step:
    """One edge of a reasoning path, head -[relation]-> tail, with the method's score for it."""

    head_id: str
    head_name: str
    relation_id: str
    relation_name: str
    tail_id: str
    tail_name: str
    hop: int
    score: float | None = None        # the method's edge score (VisPath: Eq. 5)
    note: str | None = None           # why it was taken (VisPath: the hop intent q_i)
    head_label: str = "Entity"
    tail_label: str = "Entity"


@dataclass
class PathEvidence:
    steps: list[Step]
    score: float | None = None        # the method's path score (VisPath: σ, Eq. 8)
    rank: int = 0
    kind: Literal["path"] = "path"

    @property
    def end_id(self) -> str | None:
        return self.steps[-1].tail_id if self.steps else None

    def verbalize(self) -> str:
        if not self.steps:
            return ""
        parts = [self.steps[0].head_name]
        for s in self.steps:
            parts += [s.relation_name, s.tail_name]
        return " → ".join(parts)

    def one_line(self) -> str:
        if not self.steps:
            return ""
        chain = self.steps[0].head_name
        for s in self.steps:
            chain += f" -[{s.relation_name}]-> {s.tail_name}"
        return chain


@dataclass
class ChunkEvidence:
    chunk_id: str
    document_id: str
    text: str
    score: float | None = None
    rank: int = 0
    title: str | None = None          # the document's or section's title, for display
    sentence: str | None = None       # the sentence of this chunk the answer is read from (its citation)
    source: str | None = None         # the document's file name (or url)
    page: int | None = None           # PDF: the page of the supporting sentence, else the chunk's first page
    pages: list[int] | None = None    # PDF: the chunk's page span [first, last]
    citation: str | None = None       # "falcon_9.pdf p. 2 · History" (core/citation.cite)
    kind: Literal["chunk"] = "chunk"

    def one_line(self) -> str:
        head = f"{self.title}: " if self.title else ""
        t = " ".join(self.text.split())
        where = f" ({self.citation})" if self.citation else ""
        cite = f" · supports the answer: \u201c{self.sentence}\u201d" if self.sentence else ""
        return f"[{self.chunk_id}]{where} {head}{t[:80]}{'…' if len(t) > 80 else ''}{cite}"


@dataclass
class NodeRef:
    label: str                        # one of TRACE_LABELS
    id: str
    name: str = ""
    weight: float | None = None


@dataclass
class EdgeRef:
    head_label: str
    head_id: str
    relation: str                     # relation id (P-id) or a document relation's summary
    tail_label: str
    tail_id: str
    weight: float | None = None
    name: str | None = None           # relation name, for display


@dataclass
class SubgraphEvidence:
    nodes: list[NodeRef]
    edges: list[EdgeRef] = field(default_factory=list)
    rank: int = 0
    note: str | None = None
    score: float | None = None      # GraSP's subgraph has no score of its own; the field keeps Evidence uniform
    kind: Literal["subgraph"] = "subgraph"

    def one_line(self) -> str:
        return f"subgraph of {len(self.nodes)} nodes, {len(self.edges)} edges" + (f" ({self.note})" if self.note else "")


Evidence = Union[PathEvidence, ChunkEvidence, SubgraphEvidence]


@dataclass
class Fallback:
    """A documented fallback a method took, with a code ``kgqa eval`` counts by.

    Codes in use: ``schema`` (no valid JSON after retries), ``declined`` (the vision model
    recognised nothing), ``graph_only`` (KGQA_CHAT_BACKEND=none), ``empty`` (the model's
    valid reply selected nothing usable), ``graph`` (the graph offered nothing to take), ``reader``
    (mKG-RAG's learned reader could not be loaded; the rule reader answered), ``ranker`` (mKG-RAG's passage
    ranker could not be loaded; the chunks kept the retrieval order).
    """

    code: str
    message: str


@dataclass
class RoleCost:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class Grounding(TypedDict, total=False):
    """How well the start entity was grounded (``Details.grounding``; ``kgqa ask`` prints it)."""

    score: float | None           # the weaker of the parts below (None: not measured)
    recognition: float | None     # the image's match to the start entity's reference image
    link: float | None            # the start entity's name cosine to the question's mention
    abstain_below: float          # the method abstains when ``score`` is below this (0: never)


class ChunkSections(TypedDict):
    """One chunk of the context with the document sections it covers (``Details.chunk_sections``)."""

    id: str
    doc_id: str
    sections: list[str]


class Details(TypedDict, total=False):
    """The keys of ``Answer.details`` that the app reads; a method sets the ones it has, in this shape."""

    #: hop-by-hop methods: per hop i (0-based), the paths kept at that hop, each a list of
    #: [head id, relation id, tail id] (``kgqa eval``'s gold-path retention and the hop it was lost at)
    retained_by_hop: list[list[list[list[str]]]]
    #: document methods: tokens of the retrieved context (``kgqa eval``'s context-size column)
    context_tokens: int
    #: document methods: the ids of the documents recalled (``kgqa eval``'s document recall)
    document_ids: list[str]
    #: document methods: the context's chunks and their sections (``kgqa eval``'s evidence recall)
    chunk_sections: list[ChunkSections]
    #: methods that ground a start entity: how well (``kgqa ask``'s grounding line)
    grounding: Grounding | None
    #: methods that rank candidate answers: the other candidates whose score equals the answer's, each
    #: {"id", "name"} (``kgqa eval``'s "a tie with the gold answer")
    tied_with: list[dict[str, str]]


#: The ``Details`` keys, for code that reads them out of ``Answer.details``.
RETAINED_BY_HOP = "retained_by_hop"
CONTEXT_TOKENS = "context_tokens"
DOCUMENT_IDS = "document_ids"
CHUNK_SECTIONS = "chunk_sections"
GROUNDING = "grounding"
TIED_WITH = "tied_with"
DETAIL_KEYS = (RETAINED_BY_HOP, CONTEXT_TOKENS, DOCUMENT_IDS, CHUNK_SECTIONS, GROUNDING, TIED_WITH)


@dataclass
class Answer:
    question: str
    answer: str | None                 # None = abstained
    method: str
    answer_id: str | None = None       # KG entity id when the answer is one
    start_entity_id: str | None = None   # the topic entity the method started from, when it has one
    start_entity_name: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    sufficient: bool | None = None     # evidence judged sufficient by the method (None: not judged)
    stop_reason: str = ""              # why the method stopped, in words
    hops: int = 0
    fallbacks: list[Fallback] = field(default_factory=list)
    seconds: float = 0.0
    cost: dict[str, RoleCost] = field(default_factory=dict)  # per model role
    trace_id: str | None = None
    browser_cypher: str | None = None  # paste into Neo4j Browser to see the trace
    details: dict = field(default_factory=dict)   # method-specific, rendered by the method itself; the app
    #                                               reads only the keys of ``Details`` (use ``detail``)

    @property
    def paths(self) -> list[PathEvidence]:
        return [e for e in self.evidence if isinstance(e, PathEvidence)]

    def detail(self, key: str):
        """One of the ``Details`` keys the app reads, or None when the method did not set it."""
        if key not in DETAIL_KEYS:
            raise KeyError(f"{key!r} is not a Details key (the app reads only {', '.join(DETAIL_KEYS)})")
        return (self.details or {}).get(key)

    def evidence_line(self) -> str:
        """The evidence in one line (kgqa compare)."""
        if not self.evidence:
            return "-"
        first = self.evidence[0].one_line()
        more = len(self.evidence) - 1
        return first + (f" (+{more} more)" if more > 0 else "")

    def as_dict(self) -> dict:
        return asdict(self)

