"""The graph-side scores of VisPath's Algorithm 1: what needs the graph and SBERT but no model.

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843):

    s_Q,k = max_r cos(SBERT(r), SBERT(Q))                          (Eq. 2)   Scorer.compatibility
    c_r,q_i = cos(SBERT(r ‖ e_t), SBERT(q_i)), top M1               (Eq. 5)   Scorer.score_edges
    P_cand(i) = ∪ p ⊕ (end(p), r, e_t)                              (Eq. 6–7) Scorer.expand_frontier
    σ_p,i = cos(SBERT(Verbalize(p)), SBERT(Q ‖ S_Q ‖ q_i))          (Eq. 8)   Scorer.chain_scores

and our additions where the paper is silent: the non-LLM relation sketch (the relations the question's
phrases name, ``Scorer.relation_sketch``) and answer typing (``Scorer.path_typing``).

A ``Scorer`` holds no state of a question: what one question needs (the relation sketch, the facts
``--drop-edges`` hides) is passed in, from that question's ``VisPathRun``. Graph access goes through
``kgqa.core.kg`` (relation catalogue, embeddings) and ``cypher/vispath_*.cypher``.

Interpretations where the paper is silent (each also noted where it happens):
* Neo4j's ``vector.similarity.cosine`` returns (1 + cos)/2; we convert back to cos.
* A path does not revisit an entity it already passed through.
* Path search at scale (options with the paper's reading one ``-o`` away; bench/scale.py measures them
  on the demo KG and on the same KG buried in 200,000 distractors): ``edge_relation_weight`` (how
  relation and tail are weighed inside Eq. 5's r ‖ e_t, and in the Cypher first cut),
  ``chain_relation_weight`` (σ of Eq. 8 on the relation chain vs. the path with entity names; with the
  relations fallback q_i is the same at every hop, so σ of paths of different lengths compare under one
  target in terminal selection), ``M1_per_relation`` (at most this many of one relation's edges among an
  entity's M1, in the first cut and in exact Eq. 5).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from kgqa.core.kg import KG, cos_from_neo4j
from kgqa.core.result import Step
from kgqa.methods.vispath.terminal import chain_ends, feature_rows, fixed_weights, split_offset
from kgqa.methods.vispath.options import VisPathOptions
from kgqa.core.question import type_nouns
from kgqa.core.sketch import RelationSketch, relation_alias_forms, relation_sketch
from kgqa.methods.vispath.records import ReasoningPath, VisPathRun


def cap_per_key(ranked: list, key, per_key: int, limit: int) -> list:
    """The first ``limit`` items of ``ranked`` (best first) with at most ``per_key`` of each ``key(item)``;
    per_key = 0: no cap (the plain top ``limit``)."""
    if per_key <= 0:
        return ranked[:limit]
    seen: dict = {}
    out = []
    for x in ranked:
        k = key(x)
        if seen.get(k, 0) < per_key:
            seen[k] = seen.get(k, 0) + 1
            out.append(x)
            if len(out) >= limit:
                break
    return out


def edge_scores(relation: np.ndarray, concat: np.ndarray, weight: float) -> np.ndarray:
    """Eq. 5 with the relation weighed in: w·cos(SBERT(r), q_i) + (1−w)·cos(SBERT(r ‖ e_t), q_i)."""
    return weight * relation + (1.0 - weight) * concat


def first_cut_relation_scores(rel_scores: dict[str, float], weight: float) -> dict[str, float]:
    """The ``$relation_scores`` for cypher/vispath_frontier_edges, whose cut ranks (rs + es) / 2 (rs: relation,
    es: stored tail-name cosine). Scaling rs by (1 + w)/(1 − w) makes that order the one of
    w·rs + (1 − w)·(rs + es)/2, so the cut weighs the relation as Eq. 5 does; w = 1 → the tail only breaks ties."""
    k = (1.0 + weight) / (1.0 - weight) if weight < 1.0 else 1000.0
    return {rid: k * s for rid, s in rel_scores.items()}


class Scorer:
    """Eq. 2, 5–8, the relation sketch and answer typing over one graph (``kgqa.core.kg.KG``)."""

    def __init__(self, kg: KG, graph, opt: VisPathOptions):
        self.kg = kg
        self.graph = graph
        self.opt = opt
        # (relation column, alias vectors), filled on first use. Idempotent, so safe to share between
        # questions answered at once: the catalogue is read once per process and its aliases embed the same
        # way every time, so two threads filling it compute the same value and either assignment is right.
        self._alias_forms: tuple[list[int], np.ndarray] | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """SBERT through the shared, cached encoder (kgqa.core.kg.KG.embed)."""
        return self.kg.embed(texts)

    def relations(self):
        """The relation catalogue: id → (name, stored SBERT embedding), read once (kgqa.core.kg.KG)."""
        return self.kg.relations()

    # ========================================================================= Eq. 2
    def compatibility(self, question: str, ids: list[str],
                      relation_sketch: RelationSketch | None = None) -> dict[str, tuple[float, str]]:
        """s_Q of Eq. 2 per candidate id, with its argmax relation's name; a candidate without outgoing
        relations is absent. With a relation sketch that names relations (compat_score="sketch"), the best
        cosine between one of the candidate's relations and a relation phrase of Q instead."""
        if relation_sketch is not None and relation_sketch.intent:
            # our reading: a relation the question names (by phrase) is what makes a candidate fit
            rows = self.graph.read("vispath_relation_compatibility_scored", ids=ids,
                                   relation_scores=relation_sketch.scores)
            return {r["id"]: (float(r["score"]), r["relation_name"]) for r in rows}
        q_vec = self.embed([question])[0]
        rows = self.graph.read("vispath_relation_compatibility", ids=ids, question_vector=q_vec.tolist())
        return {r["id"]: (cos_from_neo4j(r["similarity"]), r["relation_name"]) for r in rows}

    # ========================================================================= the non-LLM sketch
    def relation_sketch(self, question: str, has_image: bool = False) -> RelationSketch:
        """Non-LLM sketch: the relations the question's phrases name (``kgqa.core.sketch.relation_sketch``, at
        most Dmax + 1, cos ≥ sketch_min_cos). With sketch_skip_mentions, entity names and the words that point at
        the image are not phrases; with sketch_aliases, a relation's aliases name it as well as its label."""
        return relation_sketch(self.kg, question, has_image, min_cos=self.opt.sketch_min_cos,
                               max_matches=(self.opt.Dmax or 3) + 1, skip_mentions=self.opt.sketch_skip_mentions,
                               alias_forms=self.alias_forms if self.opt.sketch_aliases else None)

    def alias_forms(self, ids: list[str]) -> tuple[list[int], np.ndarray]:
        """The relations' aliases as (column in ``ids`` per alias, alias SBERT vectors), built once: the
        catalogue is read once per process (kgqa.core.kg.KG), so its aliases are embedded once too."""
        if self._alias_forms is None:
            self._alias_forms = relation_alias_forms(self.kg, ids)
        return self._alias_forms

    # ========================================================================= Eq. 5–7
    def expand_frontier(self, paths: list[ReasoningPath], q_i: str, q_vec: np.ndarray, hop: int, *,
                        relation_sketch: RelationSketch | None = None,
                        hidden: Sequence[str] = (), learned: dict | None = None) -> list[ReasoningPath]:
        """Eq. 5–7: top-M1 outgoing edges per frontier entity by c_r,q_i, then P_cand(i) (``relation_sketch``,
        ``hidden``, ``learned``: as for ``score_edges``)."""
        frontier = list(dict.fromkeys(p.end_id for p in paths))
        kept = self.score_edges(frontier, q_vec, hop=hop, intent=q_i, relation_sketch=relation_sketch,
                                hidden=hidden, learned=learned)
        cand: list[ReasoningPath] = []
        for p in paths:
            for e in kept.get(p.end_id, []):
                if e.tail_id not in p.entity_ids:                  # no revisits within one path
                    cand.append(p.extend(e))
        return cand                                                # |P_cand(i)| ≤ M1·|P(i−1)| (Eq. 7)

    def score_edges(self, frontier: Sequence[str], q_vec: np.ndarray, *, hop: int = 0, intent: str = "",
                    relation_sketch: RelationSketch | None = None, hidden: Sequence[str] = (),
                    expansion: str | None = None, M1: int | None = None,
                    learned: dict | None = None) -> dict[str, list[Step]]:
        """Eq. 5 exact scores of (first-cut) outgoing edges; top M1 per frontier entity.

        ``relation_sketch``: the question's non-LLM sketch when computed; when ``intent`` is its intent (the
        relations fallback) a relation scores its best phrase match. ``hidden``: the fact keys --drop-edges
        hides (``VisPathRun.hidden``). ``learned``: frontier entity → relation id → the learned path scorer's
        relation score (kgqa.methods.vispath.learned), in place of the cosine with q_i (path_scorer=mixed:
        added to it, weighed by learned_weight)."""
        m1 = M1 or self.opt.M1
        mode = expansion or self.opt.expansion
        w = self.opt.edge_relation_weight
        rel = self.relations()
        if relation_sketch is not None and relation_sketch.intent and intent == relation_sketch.intent:
            rel_scores = relation_sketch.scores          # relations fallback: best phrase match per relation
        else:
            rel_scores = {rid: float(vec @ q_vec) for rid, (_, vec) in rel.items() if vec is not None}
        mixed = self.opt.learned_weight if learned and self.opt.path_scorer == "mixed" else None
        if learned:      # the first cut ranks by the best score any frontier entity gives a relation
            best = {rid: max(m.get(rid, -1.0) for m in learned.values()) for rid in rel}
            if mixed is not None:     # mixed: the rules' score + λ·learned, per frontier entity below
                rule_scores = rel_scores
                learned = {h: {rid: rule_scores.get(rid, -1.0) + mixed * v for rid, v in m.items()}
                           for h, m in learned.items()}
                best = {rid: rule_scores.get(rid, -1.0) + mixed * v for rid, v in best.items()}
            rel_scores = best
        if mode == "exact":
            rows = self.graph.read("vispath_frontier_edges_all", frontier=list(frontier), hidden=list(hidden))
        else:
            rows = self.graph.read("vispath_frontier_edges", frontier=list(frontier),
                                   relation_scores=first_cut_relation_scores(rel_scores, w),
                                   intent=q_vec.tolist(), pre_cap=self.opt.pre_cut,
                                   cap=max(self.opt.first_cut, m1), hidden=list(hidden),
                                   per_relation=4 * self.opt.M1_per_relation)   # exact Eq. 5 picks among 4×
        if not rows:
            return {}
        rnames = [rel.get(r["relation_id"], (r["relation_id"], None))[0] for r in rows]
        rs = np.array([(learned.get(r["head_id"], rel_scores) if learned else rel_scores).get(r["relation_id"], -1.0)
                       for r in rows], dtype=np.float32)
        if w == 1.0 and mode != "exact":
            # relation first: the tail only breaks ties, by the first cut's stored tail-name cosine
            # (approx orders one relation's edges by it), so no "r ‖ e_t" needs encoding at a hub
            concat = np.array([r["approx"] for r in rows], dtype=np.float32)
        else:
            texts = [f"{rn} {r['tail_name'] or r['tail_id']}" for rn, r in zip(rnames, rows)]   # r ‖ e_t
            concat = self.embed(texts) @ q_vec                                                    # Eq. 5
        scores = edge_scores(rs, concat, w)
        by_head: dict[str, list[tuple[Step, float]]] = {}
        for r, rn, s, c in zip(rows, rnames, scores, concat):
            by_head.setdefault(r["head_id"], []).append((
                Step(r["head_id"], r["head_name"] or r["head_id"], r["relation_id"], rn, r["tail_id"],
                     r["tail_name"] or r["tail_id"], hop=hop, score=float(s), note=intent), float(c)))
        # best c first; equal c (w = 1: one relation's edges) → the tail's r ‖ e_t score decides
        return {h: cap_per_key([e for e, _ in sorted(es, key=lambda x: (-x[0].score, -x[1], x[0].relation_id,
                                                                        x[0].tail_id))],
                               lambda e: e.relation_id, self.opt.M1_per_relation, m1)
                for h, es in by_head.items()}

    # ========================================================================= Eq. 8
    def chain_scores(self, cand: list[ReasoningPath], question: str, sketch: list[str], q_i: str, *,
                     relation_sketch: RelationSketch | None = None) -> list[ReasoningPath]:
        """Eq. 8: σ_p,i = cos(SBERT(Verbalize(p)), SBERT(Q ‖ S_Q ‖ q_i)); sorted, best first.

        With chain_relation_weight w > 0, σ = w·cos(SBERT(relation chain), ·) + (1−w)·(the above): the
        paper calls Verbalize(p) "a textual relation chain"; entity names in it let distractor tails that
        share words with Q outrank the right relations (our reading, measured in bench/scale.py).
        ``relation_sketch``: the question's non-LLM sketch when computed (chain_score="sketch" reads it
        when q_i is its intent)."""
        target = self.embed([" ".join([question, " → ".join(sketch), q_i])])[0]
        w = self.opt.chain_relation_weight
        sig = np.zeros(len(cand), dtype=np.float32)
        if w < 1.0:      # at w = 1 the verbalised paths (every distractor tail's name at a hub) need no encoding
            sig += (1.0 - w) * (self.embed([p.verbalize() for p in cand]) @ target)
        if w > 0:
            sig += w * (self.kg.embed_chains([p.relation_chain() for p in cand]) @ target)   # kept across questions
        rs = relation_sketch
        if self.opt.chain_score == "sketch" and rs is not None and rs.intent and q_i == rs.intent:
            # our reading for the graph-only case: the relation phrases of Q, aligned one to one with the
            # path's relations; plus reading_order_weight × the reverse reading order (English names the
            # last hop first), ties broken by Eq. 8's σ
            paired = [rs.pairs(p) for p in cand]              # one pairing per path serves both scores
            if self.opt.chain_alignment == "coverage":
                align = [rs.coverage(p, pr, self.opt.sketch_min_cos, self.opt.coverage_edge_cost)
                         for p, pr in zip(cand, paired)]
            else:
                align = [rs.alignment(p, pr) for p, pr in zip(cand, paired)]
            ro = self.opt.reading_order_weight
            sig = np.array([a + ro * rs.reverse_reading(p, pr) for a, p, pr in zip(align, cand, paired)],
                           dtype=np.float64) + 1e-4 * sig
        for p, s in zip(cand, sig):
            p.sigma = float(s)
        return sorted(cand, key=lambda p: (-p.sigma, p.verbalize()))

    # ========================================================================= terminal selection
    def rank_endpoints(self, question: str, has_image: bool, run: VisPathRun) -> list[ReasoningPath]:
        """Terminal selection's ranking (no hop judged answerable): the endpoint entities of the retained
        paths, each by its best-ranked path, best first; empty when no path left the start."""
        paths = [p for h in run.hops for p in h.retained if p.edges and p.end_id != run.start.id]
        if not paths:
            return []
        # Rank: path length closest to D̂ first, then the chain score σ it was retained with (Eq. 8; with
        # chain pruning ablated, its edge score). Paths of one length come from one hop, scored under one
        # intent; without a predicted D̂, σ of different hops are compared (a known weakness: σ values of
        # different hops were scored under different intents q_i).
        # (The depth preference applies only when D̂ was predicted, not when it fell back to Dmax.)
        # With depth_fallback="sketch", the distance to the sketch's depth range (lo, hi) plays that part.
        def depth_gap(n: int) -> int:
            if run.depth_predicted:
                return abs(n - run.depth_hat)
            if run.depth_range is not None:
                lo, hi = run.depth_range
                return max(lo - n, n - hi, 0)
            return 0

        typing = self.path_typing(question, has_image, paths) if self.opt.answer_typing else {}
        if run.reader:         # the chain reader's σ (every length) decides, the answer's type weighed in
            rs = run.relation_sketch                      # computed by terminal selection (VisPath.sketch_of)
            X = feature_rows(paths, typing, rs.depth if rs is not None else None, self.opt.reader_rules_weight,
                             run.kind_scores)
            log_ends = chain_ends(paths)
            run.terminal_candidates = (X, [p.end_id for p in paths], log_ends)
            learned = run.terminal_weights is not None
            w = run.terminal_weights if learned else fixed_weights(self.opt.reader_typing_weight)
            s = X @ w                                       # learned on this KG, else the fixed sum
            if self.opt.ends_split:                         # a chain's score shared among its k ends
                s = s + split_offset(log_ends, learned)
            # ties: the type match, then the kind the reader reads (two ends of one chain differ by it)
            keys = {id(p): (-float(s[k]), -float(X[k, 2]), -float(X[k, 8])) for k, p in enumerate(paths)}
        elif run.learned and self.opt.path_scorer == "learned":   # its σ (chains of every length) decides
            keys = {id(p): (-(p.sigma if p.sigma is not None else -1.0), -typing.get(id(p), 0.0)) for p in paths}
        elif self.opt.typing_weight > 0:      # typing weighed against σ: a clear σ gap outranks a type match
            w = self.opt.typing_weight
            keys = {id(p): (depth_gap(len(p.edges)), -((p.sigma if p.sigma is not None else -1.0)
                                                       + w * typing.get(id(p), 0.0))) for p in paths}
        else:
            keys = {id(p): (-typing.get(id(p), 0.0), depth_gap(len(p.edges)),
                            -(p.sigma if p.sigma is not None else -1.0)) for p in paths}
        ranked_paths = sorted(paths, key=lambda p: keys[id(p)])     # stable: a tie keeps the retained order
        # One candidate per endpoint entity, reached by its best-ranked path (an endpoint first seen
        # on a short path must still compete with the D̂-long path that reaches it).
        best: dict[str, ReasoningPath] = {}
        for p in ranked_paths:
            best.setdefault(p.end_id, p)
        ends = list(best.values())
        # Endpoints whose best path ranks exactly as the first one's (e.g. one relation chain reaching several
        # entities): the graph cannot tell them apart, so the answer says it was one of them.
        first = keys[id(ends[0])]
        run.tied_with = [(p.end_id, p.end_name) for p in ends[1:] if keys[id(p)] == first]
        return ends

    def path_typing(self, question: str, has_image: bool, paths: list[ReasoningPath]) -> dict[int, float]:
        """Answer typing (ours; the paper has none), from the graph's type evidence (``entity_types``):
        1 when the endpoint has the answer's type noun ("In which *city* …"), plus the share of the other
        type nouns ("the *country* where …") that an entity strictly between the start and the endpoint has.
        An endpoint that has only another type noun of the question (a country for "the currency of the
        country where …") gains nothing. An entity without type evidence (a KG that describes its distractors
        but not every real entity) earns ``typing_unknown`` of a match: 0 ranks it with the mismatches. Keyed by id(path); empty — the ranking unchanged — when the question
        names no type or no candidate entity has type evidence."""
        answer, along = type_nouns(question, has_image)
        along = [t for t in along if t not in answer]
        if not answer and not along:
            return {}
        ids = list(dict.fromkeys(e.tail_id for p in paths for e in p.edges))
        words = self.kg.entity_types(ids)
        if not words:
            return {}
        u = self.opt.typing_unknown
        out = {}
        for p in paths:
            end = words.get(p.end_id)
            score = 0.0
            if answer:
                score = u if end is None else float(all(t in end for t in answer))
            if along:
                inner = [words.get(e.tail_id) for e in p.edges[:-1]]
                seen = set().union(*(w for w in inner if w is not None))
                untyped = any(w is None for w in inner)
                score += sum(1.0 if t in seen else u if untyped else 0.0 for t in along) / len(along)
            out[id(p)] = score
        return out
