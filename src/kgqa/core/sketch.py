"""The non-LLM relation sketch of a question: the relations its phrases name, and how many facts it walks.

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843) asks the model for a sketch S_Q and a predicted depth D̂. Without a model (ours): each
content-word phrase of the question (``kgqa.core.question``) is matched to the catalogue relation whose name
(or alias) reads most like it; the relations matched greedily are the sketch, their number the depth D̂, the
answer's type noun ("which *city*") an optional last hop, so D̂ is a range (lo, hi). VisPath's rules read it
(σ's alignment and coverage, the terminal ranking's depth); GraSP's chain ranking without a reader reads its
depth. Graph access is ``kgqa.core.kg.KG`` (relation catalogue, aliases, the shared encoder).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np

from kgqa.core.question import (PHRASE_STOP, answer_noun_tokens, greedy_relation_matches, mention_tokens,
                                question_phrases)


class PathLike(Protocol):
    """A path as the sketch reads it: its edges, each with a ``relation_id`` (``kgqa.core.result.Step``)."""

    edges: Sequence


@dataclass
class RelationSketch:
    """The non-LLM sketch of one question (``relation_sketch``): what the question's phrases name."""

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

    def pairs(self, path: "PathLike") -> list[tuple[int, int, float]]:
        """(edge index, phrase index, cos) pairs, edges and question phrases paired one to one (best pair
        first, a phrase's tokens used once; a type noun's match counts half, see ``mention_tokens``; the
        answer's type noun pairs only with the last edge, ``last_only``). Read only: one list per chain."""
        chain = tuple(e.relation_id for e in path.edges)
        if chain not in self._paired:
            self._paired[chain] = self._pair(path)
        return self._paired[chain]

    def _pair(self, path: "PathLike") -> list[tuple[int, int, float]]:
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

    def alignment(self, path: "PathLike", pairs: list[tuple[int, int, float]] | None = None) -> float:
        """Mean over the path's edges of cos(relation, phrase) under ``pairs`` (computed when not given);
        an edge left without a phrase counts 0."""
        pairs = self.pairs(path) if pairs is None else pairs
        return sum(max(sim, 0.0) for _, _, sim in pairs) / max(1, len(path.edges))

    def coverage(self, path: "PathLike", pairs: list[tuple[int, int, float]] | None = None,
                 min_cos: float = 0.0, edge_cost: float = 0.01) -> float:
        """How much of what the question names the path covers: the sum over the path's edges of
        cos(relation, phrase) under ``pairs`` where it reaches ``min_cos`` (a type noun's counts half), less
        ``edge_cost`` per edge, so that of two paths covering as much the shorter ranks first, and an edge
        whose phrase match is weaker than ``edge_cost`` does not pay for its hop. Unlike ``alignment``
        (a mean), a path that stops a relation short of the question scores below the one that covers it
        ("the continent of the country where …": country → continent over country alone)."""
        pairs = self.pairs(path) if pairs is None else pairs
        return sum(sim for _, _, sim in pairs if sim >= min_cos) - edge_cost * len(path.edges)

    def reverse_reading(self, path: "PathLike", pairs: list[tuple[int, int, float]] | None = None) -> float:
        """The share of consecutive paired edges whose phrase comes earlier in the question than the previous
        edge's: English names the last hop first ("the *capital* of the *state* where … was *born*",
        "which city is *twinned* with the *capital* of …"). 0.5 with fewer than two paired edges. Used only
        to break ties of ``alignment`` (an unordered pairing cannot tell capital → twinned from
        twinned → capital). ``pairs`` as for ``alignment``."""
        pos = [self.phrases[a][0] for _, a, _ in sorted(self.pairs(path) if pairs is None else pairs)]
        if len(pos) < 2:
            return 0.5
        return sum(b < a for a, b in zip(pos, pos[1:])) / (len(pos) - 1)


def relation_alias_forms(kg, ids: list[str]) -> tuple[list[int], np.ndarray]:
    """The relations' aliases as (column in ``ids`` per alias, alias vectors): a relation is named by its label
    or any of its aliases longer than two letters that are not stop words."""
    aliases = kg.relation_aliases()
    forms = [(k, a) for k, r in enumerate(ids) for a in aliases.get(r, [])
             if len(a) > 2 and a.lower() not in PHRASE_STOP]
    vecs = kg.embed([a for _, a in forms]) if forms else np.zeros((0, 0), dtype=np.float32)
    return [k for k, _ in forms], vecs


def relation_sketch(kg, question: str, has_image: bool = False, *, min_cos: float, max_matches: int,
                    skip_mentions: bool = True, alias_forms=None) -> RelationSketch:
    """Non-LLM sketch: the relations the question's phrases name. ``intent`` joins the relations matched
    greedily (best pair first, each phrase span and each relation used once, cos ≥ ``min_cos``, at most
    ``max_matches``); ``scores``: relation id → best cos(SBERT(r), SBERT(phrase)) over the phrases; ``depth``:
    (lo, hi) hops, one per matched relation, a type noun ("which N") an optional one. Empty when nothing
    matches.

    With ``skip_mentions``, entity names and the words that point at the image are not phrases
    (``mention_tokens``); ``alias_forms`` (``relation_alias_forms`` of the catalogue's ids with a vector, or a
    callable taking those ids and returning them), when given: a relation's aliases name it as well as its label."""
    rel = kg.relations()
    ids = [rid for rid, (_, vec) in rel.items() if vec is not None]
    excluded, answer_type = mention_tokens(question, has_image)
    if not skip_mentions:
        excluded = set()
    phrases = question_phrases(question, exclude=excluded)
    if not ids or not phrases:
        return RelationSketch()
    pv = kg.embed([p[2] for p in phrases])
    sims = pv @ np.stack([rel[r][1] for r in ids]).T
    if alias_forms is not None:       # a relation is named by its label or any of its aliases
        cols, avecs = alias_forms(ids) if callable(alias_forms) else alias_forms
        if cols:
            asims = pv @ avecs.T
            for j, k in enumerate(cols):
                sims[:, k] = np.maximum(sims[:, k], asims[:, j])
    is_type = [set(range(a, b)) <= answer_type for a, b, _ in phrases]
    weight = np.array([0.5 if t else 1.0 for t in is_type], dtype=np.float32)
    wh = answer_noun_tokens(question, excluded)
    sketch = RelationSketch(phrases=phrases, columns={r: k for k, r in enumerate(ids)},
                            sims=sims * weight[:, None],
                            last_only={k for k, (a, b, _) in enumerate(phrases) if set(range(a, b)) <= wh})
    picked = greedy_relation_matches(phrases, sims, min_cos, max_matches)
    if not picked:
        return sketch
    core = len(picked) - sum(1 for a, _, _ in picked if is_type[a])
    sketch.depth = (max(1, core), max(1, core, len(picked)))
    sketch.intent = "; ".join(rel[ids[b]][0] for _, b, _ in picked)
    sketch.scores = {r: float(v) for r, v in zip(ids, sims.max(axis=0))}
    return sketch


__all__ = ["PathLike", "RelationSketch", "relation_alias_forms", "relation_sketch"]
