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
class RelationSketch:
    """The non-LLM sketch of one question (``Scorer.relation_sketch``): what the question's phrases name."""

    intent: str = ""                      # the relations matched greedily, joined ("" when none matched)
    scores: dict[str, float] = field(default_factory=dict)   # relation id → best cos over the phrases
    depth: tuple[int, int] | None = None  # (lo, hi) hops: one per matched relation, type nouns optional
    phrases: list[tuple[int, int, str]] = field(default_factory=list)
    columns: dict[str, int] = field(default_factory=dict)    # relation id → column of ``sims``
    sims: np.ndarray | None = None        # phrases × relations cosines, a type noun's row halved
    # phrases of the answer's type noun ("In which *city* …"): it describes the answer, so it can name only
    # the relation of a path's last edge, the one that reaches the answer
    last_only: set[int] = field(default_factory=set)
    # the pairing of each relation chain met so far (it depends on the path's relations only; a hop's candidates
    # at a hub share a few chains among hundreds of paths)
    _paired: dict[tuple[str, ...], list[tuple[int, int, float]]] = field(default_factory=dict, repr=False,
                                                                        compare=False)

    def pairs(self, path: "ReasoningPath") -> list[tuple[int, int, float]]:
        """(edge index, phrase index, cos) pairs, edges and question phrases paired one to one (best pair
        first, a phrase's tokens used once; a type noun's match counts half, see ``mention_tokens``; the
        answer's type noun pairs only with the last edge, ``last_only``). Read only: one list per chain."""
        chain = tuple(e.relation_id for e in path.edges)
        if chain not in self._paired:
            self._paired[chain] = self._pair(path)
        return self._paired[chain]

    def _pair(self, path: "ReasoningPath") -> list[tuple[int, int, float]]:
        order = sorted(((float(self.sims[a, self.columns[e.relation_id]]), k, a) for k, e in enumerate(path.edges)
                        if e.relation_id in self.columns for a in range(len(self.phrases))),
                       key=lambda x: (-x[0], x[1], x[2]))
        used_edges: set[int] = set()
        used_tokens: set[int] = set()
        out = []
        last = len(path.edges) - 1
        for sim, k, a in order:
            span = set(range(self.phrases[a][0], self.phrases[a][1]))
            if k in used_edges or span & used_tokens or (a in self.last_only and k != last):
                continue
            used_edges.add(k)
            used_tokens |= span
            out.append((k, a, sim))
        return out

    def alignment(self, path: "ReasoningPath", pairs: list[tuple[int, int, float]] | None = None) -> float:
        """Mean over the path's edges of cos(relation, phrase) under ``pairs`` (computed when not given);
        an edge left without a phrase counts 0."""
        pairs = self.pairs(path) if pairs is None else pairs
        return sum(max(sim, 0.0) for _, _, sim in pairs) / max(1, len(path.edges))

    def coverage(self, path: "ReasoningPath", pairs: list[tuple[int, int, float]] | None = None,
                 min_cos: float = 0.0, edge_cost: float = 0.01) -> float:
        """How much of what the question names the path covers: the sum over the path's edges of
        cos(relation, phrase) under ``pairs`` where it reaches ``min_cos`` (a type noun's counts half), less
        ``edge_cost`` per edge, so that of two paths covering as much the shorter ranks first, and an edge
        whose phrase match is weaker than ``edge_cost`` does not pay for its hop. Unlike ``alignment``
        (a mean), a path that stops a relation short of the question scores below the one that covers it
        ("the continent of the country where …": country → continent over country alone)."""
        pairs = self.pairs(path) if pairs is None else pairs
        return sum(sim for _, _, sim in pairs if sim >= min_cos) - edge_cost * len(path.edges)

    def reverse_reading(self, path: "ReasoningPath", pairs: list[tuple[int, int, float]] | None = None) -> float:
        """The share of consecutive paired edges whose phrase comes earlier in the question than the previous
        edge's: English names the last hop first ("the *capital* of the *state* where … was *born*",
        "which city is *twinned* with the *capital* of …"). 0.5 with fewer than two paired edges. Used only
        to break ties of ``alignment`` (an unordered pairing cannot tell capital → twinned from
        twinned → capital). ``pairs`` as for ``alignment``."""
        pos = [self.phrases[a][0] for _, a, _ in sorted(self.pairs(path) if pairs is None else pairs)]
        if len(pos) < 2:
            return 0.5
        return sum(b < a for a, b in zip(pos, pos[1:])) / (len(pos) - 1)


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
