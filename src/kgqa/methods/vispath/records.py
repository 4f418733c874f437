"""The records of one VisPath question: paths, start candidates, hops, the non-LLM relation sketch, the run.

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843). Everything one question needs lives in its ``VisPathRun`` (including the facts
``--drop-edges`` hides and the relation sketch once computed), so one ``VisPath`` may answer several
questions at once. A path's edges are ``kgqa.core.result.Step``: ``score`` is c_r,q_i of Eq. 5, ``hop``
the hop that took the edge, ``note`` the intent q_i that selected it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kgqa.core.result import Fallback, Step
from kgqa.core.sketch import RelationSketch


@dataclass
class ReasoningPath:
    start_id: str
    start_name: str
    edges: tuple[Step, ...] = ()   # each: score c_r,q_i (Eq. 5), hop, note q_i
    sigma: float | None = None   # σ_p,i (Eq. 8) at the hop it was retained
    reader_score: float | None = None   # the chain reader's logit, when it scored the path (ours)
    rules_sigma: float | None = None    # the rules' Eq. 8 σ beside it

    @property
    def end_id(self) -> str:
        return self.edges[-1].tail_id if self.edges else self.start_id

    @property
    def end_name(self) -> str:
        return self.edges[-1].tail_name if self.edges else self.start_name

    @property
    def entity_ids(self) -> set[str]:
        return {self.start_id, *(e.tail_id for e in self.edges)}

    def extend(self, edge: Step) -> "ReasoningPath":  # p ⊕ (end(p), r, e_t)
        return ReasoningPath(self.start_id, self.start_name, self.edges + (edge,))

    def relation_chain(self) -> str:  # the relations of p only
        return " → ".join(e.relation_name for e in self.edges)

    def verbalize(self) -> str:  # Verbalize(p)
        parts = [self.start_name]
        for e in self.edges:
            parts += [e.relation_name, e.tail_name]
        return " → ".join(parts)


@dataclass
class StartCandidate:
    id: str
    name: str
    retrieval: float = 0.0               # entity-name vector similarity to SBERT(o) (1.0 for a label match)
    label: bool = False                  # its name or an alias equals o (KG.label_matches)
    s_Q: float | None = None             # Eq. 2
    best_relation: str | None = None     # argmax r of Eq. 2


@dataclass
class HopRecord:
    hop: int
    intent: str
    candidates: int = 0                  # |P_cand(i)|
    chain_kept: int = 0                  # |P_chain(i)|
    retained: list[ReasoningPath] = field(default_factory=list)  # P(i)
    llm_selected: list[int] = field(default_factory=list)
    evidence: str = ""                   # z_i
    answerable: bool | None = None       # η_i (None: not checked)
    candidate_answer: str = ""           # A_i


@dataclass
class VisPathRun:
    question: str
    answer: str | None = None
    answer_id: str | None = None
    start: StartCandidate | None = None
    start_candidates: list[StartCandidate] = field(default_factory=list)
    start_replaced: bool = False         # Eq. 3 fired
    expression: str = ""
    head: str = ""
    object_name: str = ""                # o (Eq. 1)
    sketch: list[str] = field(default_factory=list)   # S_Q
    depth_hat: int = 0                   # D̂ after min(D̂, Dmax)
    depth_predicted: bool = False        # D̂ came from the LLM (not the Dmax fallback)
    depth_range: tuple[int, int] | None = None   # depth_fallback="sketch": (lo, hi) from the relation sketch
    hops: list[HopRecord] = field(default_factory=list)
    selected_paths: list[ReasoningPath] = field(default_factory=list)
    sufficient: bool | None = None      # η at the hop whose evidence produced the answer
    stop_reason: str = ""
    fallbacks: list[Fallback] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    hidden: list[str] = field(default_factory=list)   # --drop-edges: the start's facts hidden from every expansion
    # the non-LLM sketch of the question (VisPath.sketch_of), computed when a fallback first needs it
    relation_sketch: RelationSketch | None = None
    # how firmly the start entity is grounded (abstain.measure_grounding; abstain_below compares with it):
    # the weakest of the image's recognition score and the start entity's link cosine to o
    grounding: float | None = None
    grounding_parts: dict[str, float] = field(default_factory=dict)
    # path_scorer=learned took the place of the rules (no LLM intent, the checkpoint loaded)
    learned: bool = False
    # the chain reader scored the chains (path_scorer=reader|auto, checkpoint usable, no LLM chain examination)
    reader: bool = False
    # terminal selection under the reader: the weights learned on this KG (kgqa train terminal), else None (the
    # fixed sum); and the candidates' features, end ids and log k (the ends their chain reaches), kept for
    # fitting those weights
    terminal_weights: np.ndarray | None = None
    terminal_candidates: tuple[np.ndarray, list[str], np.ndarray] | None = None
    # terminal selection under the reader: end entity id → the reader's score of Q against the end's kind
    kind_scores: dict[str, float] = field(default_factory=dict)
    # terminal selection: other endpoints whose best path ranks exactly as the answer's (id, name); the answer
    # is the first of them in the retained order, not a choice the scores made
    tied_with: list[tuple[str, str]] = field(default_factory=list)
    dmax: int = 3                        # the search depth of this question (Dmax, or its default for the scorer)

    def fell_back(self, message: str, code: str = "empty") -> None:
        """Record a documented fallback (``code``: why; see kgqa.core.result.Fallback)."""
        self.fallbacks.append(Fallback(code, message))
