"""What a method returns for one question: answer, paths, cost, trace id.

Shared by every engine (VisPath, mKG-RAG, GraSP), ``kgqa ask`` and ``kgqa eval``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Step:
    """One edge of a reasoning path, head -[relation]-> tail, with its hop scores."""

    head_id: str
    head_name: str
    relation_id: str
    relation_name: str
    tail_id: str
    tail_name: str
    hop: int
    edge_score: float | None = None   # Eq. 5 for VisPath
    intent: str | None = None         # q_Q^(i) for VisPath


@dataclass
class Path:
    steps: list[Step]
    score: float | None = None        # chain score σ (Eq. 8) for VisPath
    rank: int = 0

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


@dataclass
class RoleCost:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class Answer:
    question: str
    answer: str | None                 # None = abstained
    method: str
    answer_id: str | None = None       # KG entity id when the answer is one
    start_entity_id: str | None = None
    start_entity_name: str | None = None
    paths: list[Path] = field(default_factory=list)
    sufficient: bool | None = None     # evidence judged sufficient (η = 1)
    stop_reason: str = ""              # e.g. "stop rule at hop 2", "fallback", "terminal selection"
    hops: int = 0
    seconds: float = 0.0
    cost: dict[str, RoleCost] = field(default_factory=dict)  # per model role
    trace_id: str | None = None
    browser_cypher: str | None = None  # paste into Neo4j Browser to see the trace
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)
