"""GraSP's per-question record: one ``GraSPRun`` per question, a ``Round`` per ANSWER/ENTITY iteration.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting" (GraSP):
everything that belongs to one question lives here, never on the method (one instance answers
concurrent ``kgqa serve`` requests).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kgqa.core.result import Fallback, PathEvidence
from kgqa.methods.grasp.subgraph import Subgraph


@dataclass
class Round:
    """One iteration of the ANSWER/ENTITY loop."""

    topic_id: str
    topic_name: str
    subgraph: Subgraph
    soft_tokens: int = 0
    select_raw: str = ""
    selected: list[str] = field(default_factory=list)      # node ids
    decision: str = ""                                     # ANSWER | ENTITY | fallback
    entity: str = ""                                       # ENTITY's name as written
    next_topic: str | None = None
    scores: list[tuple[str, float]] = field(default_factory=list)   # nodes head: (node id, p), best first
    # nodes head, answer typing: the scored nodes of the question's answer type, best first (None: no typing —
    # the question names no type, no node has type evidence, or none has the answer's type while some have none;
    # []: every node is typed as something else)
    typed: list[str] | None = None
    # node id → the facts of the chain the ranking read for it (chain reader, relation chains): its evidence
    walks: dict[str, list] = field(default_factory=dict)
    ranked_by: str = "node head"     # who ranked the nodes: node head, chain reader, relation chains (head refused)
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class GraSPRun:
    question: str
    topic_id: str | None = None
    topic_name: str | None = None
    topic_how: str = ""
    rounds: list[Round] = field(default_factory=list)
    answer: str | None = None
    answer_id: str | None = None
    evidence_text: str = ""
    stop_reason: str = ""
    hidden_facts: int = 0
    evidence: list[PathEvidence] = field(default_factory=list)   # the selected entities' paths, all rounds
    fallbacks: list[Fallback] = field(default_factory=list)
    best: tuple[str, float, str] | None = None    # nodes head: the top (id, p, name) over the rounds
    has_image: bool = False
    depth: tuple[int, ...] | None = None   # the facts the question walks (lo, hi); () none named; None: not read

    def fell_back(self, message: str, code: str = "empty") -> None:
        self.fallbacks.append(Fallback(code, message))
