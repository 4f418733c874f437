"""VisPath: visual-intent-guided path reasoning over a multimodal KG (seed 000, Algorithm 1).

Read top to bottom, this module is Algorithm 1:

    IV-A  start entity    o = VLM(I, HEAD)                                    (Eq. 1)
                          SBERT(o) → entity-name vector index → LLM ranks → e_Q,1..K
                          s_Q,k = max_r cos(SBERT(r), SBERT(Q))               (Eq. 2)
                          replace e_Q,1 by e_Q,k* iff s_Q,k* − s_Q,1 > δ_k*    (Eq. 3)
    IV-C  sketch          (S_Q, D̂) = LLM(Q);  D̂ ← min(D̂, Dmax)
    loop  i = 1..Dmax
    IV-B    intent        q_i = VLM(I, Q, P(i−1))                             (Eq. 4)
            edge score    c_r,q_i = cos(SBERT(r ‖ e_t), SBERT(q_i)), top M1   (Eq. 5)
            extension     P_cand(i) = ∪ p ⊕ (end(p), r, e_t)                  (Eq. 6–7)
    IV-C    chain score   σ_p,i = cos(SBERT(Verbalize(p)), SBERT(Q ‖ S_Q ‖ q_i)), top M2  (Eq. 8)
            LLM examines the chains, keeps ≤ M3 (empty → top σ)  → P(i)
    IV-D    evidence      z_i = VLM(I, Q, P(i))                               (Eq. 9)
            (η_i, A_i) = VLM(I, Q, z_i)                                       (Eq. 10)
            stop at the first i with η_i = 1 and i ≥ D̂                        (Eq. 11)
    answer  from (I, Q, z*) when some hop was answerable (the last one is the fallback),
            else terminal selection over visited endpoints with visual verification,
            else from the image alone.

Every model call that must return JSON names a schema from ``kgqa.prompts``; when a
model keeps answering badly (``ModelUnavailable``) the step takes the paper's
fallback and the run records it in ``VisPathRun.fallbacks``. Graph access goes only
through ``cypher/vispath_*.cypher``.

Interpretations where the paper is silent (each also noted where it happens):
* δ grows by 0.01 per rank (V-B): the threshold for a challenger at rank k is
  δ + 0.01·(k − 2), so rank 2 needs δ, rank 3 needs δ + 0.01, …
* Neo4j's ``vector.similarity.cosine`` returns (1 + cos)/2; we convert back to cos.
* A path does not revisit an entity it already passed through.
* Terminal selection ranks endpoints of all retained paths (Algorithm 1: "visited path
  entities"), closest length to D̂ first, then by the chain score σ they were retained with.
* Without an image, the topic mention is taken from the question text and the
  vision-conditioned steps are asked of the text LLM.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from kgqa import prompts as P
from kgqa.errors import InvalidInput, ModelUnavailable

# ----------------------------------------------------------------------------- options


@dataclass
class VisPathOptions:
    """Hyperparameters (V-B defaults) and the four ablations of Table VI."""

    M1: int = 30            # per-hop edge retention per frontier entity (Eq. 5–7)
    M2: int = 30            # chain reranking size (Eq. 8)
    M3: int = 3             # chains kept after LLM examination
    Dmax: int = 3           # maximum search depth
    delta: float = 0.05     # δ of Eq. 3 …
    delta_step: float = 0.01  # … growing by 0.01 per rank
    K: int = 10             # entity-name candidates retrieved for the start entity
    first_cut: int = 200    # edges per frontier entity kept by the Cypher first cut before exact Eq. 5
    pre_cut: int = 2000     # edges per frontier entity ranked by relation score before reading tail embeddings
    expansion: str = "firstcut"  # "firstcut" (Cypher cut, then exact Eq. 5) or "exact" (every edge, exact Eq. 5)
    # How the LLM makes its two selections (IV-A candidate ranking, IV-C chain examination):
    # "generate" = a JSON list, as in the paper; "likelihood" = it scores each allowed option by
    # log-likelihood (ChatModel.choose, per token) and keeps the likeliest — for small local models.
    selection: str = "generate"
    verify_top: int = 3     # terminal selection: candidates verified against images
    no_graph_validation: bool = False
    no_visual_intent: bool = False
    no_chain_pruning: bool = False
    no_evidence_check: bool = False

    def validate(self) -> "VisPathOptions":
        for name in ("M1", "M2", "M3", "Dmax", "K", "first_cut", "pre_cut"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise InvalidInput(f"VisPath option {name} must be a positive integer, got {v!r}")
        if self.Dmax > 8:
            raise InvalidInput(f"VisPath option Dmax must be at most 8, got {self.Dmax}")
        if not (0.0 <= self.delta < 2.0) or not (0.0 <= self.delta_step < 1.0):
            raise InvalidInput(f"VisPath option delta must be in [0, 2), got {self.delta!r}")
        if self.expansion not in ("firstcut", "exact"):
            raise InvalidInput(f"VisPath option expansion must be 'firstcut' or 'exact', got {self.expansion!r}")
        if self.selection not in ("generate", "likelihood"):
            raise InvalidInput(f"VisPath option selection must be 'generate' or 'likelihood', got {self.selection!r}")
        return self


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Edge:
    head_id: str
    head_name: str
    relation_id: str
    relation_name: str
    tail_id: str
    tail_name: str
    score: float = 0.0      # c_r,q_i (Eq. 5)
    hop: int = 0
    intent: str = ""        # q_Q^(i) that selected it


@dataclass
class ReasoningPath:
    start_id: str
    start_name: str
    edges: tuple[Edge, ...] = ()
    sigma: float | None = None   # σ_p,i (Eq. 8) at the hop it was retained

    @property
    def end_id(self) -> str:
        return self.edges[-1].tail_id if self.edges else self.start_id

    @property
    def end_name(self) -> str:
        return self.edges[-1].tail_name if self.edges else self.start_name

    @property
    def entity_ids(self) -> set[str]:
        return {self.start_id, *(e.tail_id for e in self.edges)}

    def extend(self, edge: Edge) -> "ReasoningPath":  # p ⊕ (end(p), r, e_t)
        return ReasoningPath(self.start_id, self.start_name, self.edges + (edge,))

    def verbalize(self) -> str:  # Verbalize(p)
        parts = [self.start_name]
        for e in self.edges:
            parts += [e.relation_name, e.tail_name]
        return " → ".join(parts)


@dataclass
class StartCandidate:
    id: str
    name: str
    retrieval: float = 0.0               # entity-name vector similarity to SBERT(o)
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
    hops: list[HopRecord] = field(default_factory=list)
    selected_paths: list[ReasoningPath] = field(default_factory=list)
    sufficient: bool | None = None      # η at the hop whose evidence produced the answer
    stop_reason: str = ""
    fallbacks: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


# ----------------------------------------------------------------------------- engine


def _cos_from_neo4j(similarity: float) -> float:
    """Neo4j's vector.similarity.cosine is (1 + cos) / 2; the paper's formulas use cos."""
    return 2.0 * float(similarity) - 1.0


_WH = {"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "in", "is", "was", "the", "of"}


def topic_mention_heuristic(question: str) -> str:
    """Fallback topic mention without an LLM: the longest run of capitalised words (not a leading wh-word)."""
    tokens = re.findall(r"[\w'’.-]+|,", question)
    runs, cur = [], []
    for i, tok in enumerate(tokens):
        cap = tok[:1].isupper() and not (i == 0 and tok.lower() in _WH)
        if cap or (cur and tok.lower() in {"of", "de", "la", "the", ","}):
            cur.append(tok)
        else:
            if cur:
                runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    best = max(runs, key=len, default=[])
    while best and (best[-1] in {",", "of", "de", "la", "the"}):
        best.pop()
    return " ".join(best).replace(" ,", ",") or question


class VisPath:
    """Algorithm 1 over a Neo4j Wikidata5M graph.

    ``graph``: kgqa.graph.Graph; ``encoder``: SBERT (Encoder protocol);
    ``chat``: text LLM (ChatModel); ``vision``: VLM (VisionModel).
    """

    def __init__(self, graph, encoder, chat, vision, options: VisPathOptions | None = None):
        self.graph = graph
        self.encoder = encoder
        self.chat = chat
        self.vision = vision
        self.opt = (options or VisPathOptions()).validate()
        self._emb_cache: dict[str, np.ndarray] = {}
        self._relations: dict[str, tuple[str, np.ndarray | None]] | None = None

    # ========================================================================= Algorithm 1
    def run(self, question: str, image=None, entity_id: str | None = None) -> VisPathRun:
        question = (question or "").strip()
        if not question:
            raise InvalidInput("question is empty")
        o = self.opt
        run = VisPathRun(question=question)
        t0 = time.perf_counter()

        # --- IV-A: starting entity e_S (Eq. 1–3) --------------------------------------
        if entity_id:
            run.start = self.given_start(entity_id)
        else:
            cands = self.rank_start_candidates(question, image, run)            # Eq. 1 + LLM ranking
            run.start_candidates = cands
            if cands:
                run.start, run.start_replaced = self.graph_aware_validation(question, cands, run)  # Eq. 2–3
        run.timings["start_entity"] = time.perf_counter() - t0

        # --- line 1: sketch S_Q and predicted depth D̂ ---------------------------------
        run.sketch, d_hat = self.analyze_question(question, run)
        run.depth_hat = min(d_hat, o.Dmax)                                      # D̂ ← min(D̂, Dmax)

        if run.start is None:
            run.fallbacks.append("no start entity found")
            return self._answer_from_image(question, image, run, t0)

        # --- lines 2–9: hop loop --------------------------------------------------------
        paths = [ReasoningPath(run.start.id, run.start.name)]                  # P(0) = {(e_S)}
        z_star: str | None = None                                              # z* ← ⊥
        star_hop: HopRecord | None = None
        for i in range(1, o.Dmax + 1):
            th = time.perf_counter()
            q_i = self.hop_intent(question, image, paths, i, run)              # Eq. 4
            q_vec = self.embed([q_i])[0]
            cand = self.expand_frontier(paths, q_i, q_vec, i)                  # Eq. 5–7
            hop = HopRecord(hop=i, intent=q_i, candidates=len(cand))
            run.hops.append(hop)
            if not cand:
                run.fallbacks.append(f"hop {i}: no outgoing edges to expand")
                run.timings[f"hop_{i}"] = time.perf_counter() - th
                break
            if o.no_chain_pruning:                                             # ablation: hop-level edge scores only
                paths = sorted(cand, key=lambda p: -p.edges[-1].score)[: o.M3]
                for p in paths:
                    p.sigma = p.edges[-1].score
                hop.chain_kept = len(cand)
            else:
                chain = self.chain_scores(cand, question, run.sketch, q_i)[: o.M2]   # Eq. 8, top M2
                hop.chain_kept = len(chain)
                paths = self.examine_chains(question, run.sketch, chain, hop, run)  # ≤ M3 → P(i)
            hop.retained = list(paths)

            z_i = self.evidence_statement(question, image, paths, run)          # Eq. 9
            hop.evidence = z_i
            if o.no_evidence_check:                                            # ablation: run to Dmax
                z_star, star_hop = z_i, hop
                run.timings[f"hop_{i}"] = time.perf_counter() - th
                continue
            eta, a_i = self.answerability(question, image, z_i, run)            # Eq. 10
            hop.answerable, hop.candidate_answer = eta, a_i
            run.timings[f"hop_{i}"] = time.perf_counter() - th
            if eta:
                z_star, star_hop = z_i, hop                                    # z* ← z_i (earlier: fallback)
                if i >= run.depth_hat:                                         # Eq. 11 stop rule
                    run.stop_reason = f"stop rule at hop {i} (answerable, D̂={run.depth_hat})"
                    break

        # --- lines 10–14: answer ------------------------------------------------------
        if z_star is not None and star_hop is not None:
            if not run.stop_reason:
                run.stop_reason = (f"evidence of hop {star_hop.hop} after the full depth budget"
                                   if o.no_evidence_check else
                                   f"fallback: answerable at hop {star_hop.hop} < D̂={run.depth_hat}"
                                   if star_hop.hop < run.depth_hat else
                                   f"answerable at hop {star_hop.hop}")
            run.answer = self.final_answer(question, image, z_star, star_hop, run)
            run.selected_paths = list(star_hop.retained)
            run.sufficient = bool(star_hop.answerable) if star_hop.answerable is not None else None
            run.answer_id = self.ground_answer(run.answer, run)
        else:
            self.terminal_selection(question, image, run)
            if run.answer is None:
                return self._answer_from_image(question, image, run, t0)
        run.timings["total"] = time.perf_counter() - t0
        return run

    # ========================================================================= IV-A
    def given_start(self, entity_id: str) -> StartCandidate:
        rows = self.graph.read("vispath_entity_by_id", id=entity_id)
        if not rows:
            raise InvalidInput(f"--entity {entity_id}: no such entity in the graph")
        return StartCandidate(rows[0]["id"], rows[0]["name"] or rows[0]["id"], retrieval=1.0)

    def rank_start_candidates(self, question: str, image, run: VisPathRun) -> list[StartCandidate]:
        """Visual-aware candidate ranking: HEAD → o = VLM(I, HEAD) (Eq. 1) → SBERT index → LLM ranks."""
        has_image = image is not None
        try:
            ref = self.chat.generate_json(P.build_referring_expression(question, has_image=has_image),
                                          P.ReferringExpression, system=P.VISPATH_SYSTEM, max_tokens=80)
            run.expression, run.head = ref.expression.strip(), ref.head.strip()
        except ModelUnavailable:
            run.fallbacks.append("referring expression: LLM gave no valid JSON; "
                                 + ("HEAD='object'" if has_image else "capitalised-words heuristic"))
            run.expression = question if has_image else topic_mention_heuristic(question)
            run.head = "object"
        if has_image:
            try:
                run.object_name = self.vision.recognize(image, run.head).strip()     # Eq. 1
            except ModelUnavailable:
                run.object_name = ""
            if not run.object_name:
                run.fallbacks.append("recognition: vision model named nothing; using the referring expression")
                run.object_name = run.expression
        else:
            if run.expression and run.expression.lower() not in question.lower():
                # a small LLM may invent a mention; the question's own words are safer
                run.fallbacks.append("topic mention not in the question; capitalised-words heuristic")
                run.expression = topic_mention_heuristic(question)
            run.object_name = run.expression
        vec = self.embed([run.object_name])[0]
        rows = self.graph.read("entity_vector_search", k=self.opt.K, vector=vec.tolist())
        retrieved = [StartCandidate(r["id"], r["name"] or r["id"], retrieval=_cos_from_neo4j(r["score"]))
                     for r in rows]
        if not retrieved:
            return []
        try:
            if self.opt.selection == "likelihood":
                ll = self.chat.choose(P.build_candidate_choice(question, run.expression, run.object_name),
                                      [" " + c.name for c in retrieved], per_token=True)
                ranked = [retrieved[k].name for k in sorted(range(len(retrieved)), key=lambda k: -ll[k])]
            else:
                ranked = self.chat.generate_json(
                    P.build_candidate_ranking(question, run.expression, run.object_name,
                                              [c.name for c in retrieved]),
                    P.CandidateRanking, system=P.VISPATH_SYSTEM, max_tokens=160).ranked
        except ModelUnavailable:
            ranked = []
        by_name: dict[str, StartCandidate] = {}
        for c in retrieved:
            by_name.setdefault(c.name.strip().lower(), c)
        out: list[StartCandidate] = []
        for name in ranked:
            c = by_name.get(str(name).strip().lower())
            if c is not None and c not in out:
                out.append(c)
        if not out:
            run.fallbacks.append("candidate ranking: LLM kept no listed entity; vector-index order")
            out = retrieved
        return out

    def graph_aware_validation(self, question: str, cands: list[StartCandidate],
                               run: VisPathRun) -> tuple[StartCandidate, bool]:
        """Eq. 2–3: keep e_Q,1 unless the best other candidate's s_Q exceeds it by more than δ_k*."""
        q_vec = self.embed([question])[0]
        rows = self.graph.read("vispath_relation_compatibility", ids=[c.id for c in cands],
                               question_vector=q_vec.tolist())
        by_id = {r["id"]: r for r in rows}
        for c in cands:                                                           # Eq. 2
            r = by_id.get(c.id)
            c.s_Q = _cos_from_neo4j(r["similarity"]) if r else -1.0              # no outgoing relation
            c.best_relation = r["relation_name"] if r else None
        if self.opt.no_graph_validation or len(cands) < 2:
            return cands[0], False
        k_star = max(range(1, len(cands)), key=lambda k: cands[k].s_Q)           # argmax over 2 ≤ k ≤ K
        delta_k = self.opt.delta + self.opt.delta_step * (k_star - 1)            # δ grows 0.01 per rank
        if cands[k_star].s_Q - cands[0].s_Q > delta_k:                           # Eq. 3
            winner = cands[k_star]
            cands.insert(0, cands.pop(k_star))                                   # ẽ_Q,1 = e_Q,k*
            return winner, True
        return cands[0], False

    # ========================================================================= IV-C (sketch)
    def analyze_question(self, question: str, run: VisPathRun) -> tuple[list[str], int]:
        try:
            sk = self.chat.generate_json(P.build_question_analysis(question), P.QuestionSketch,
                                         system=P.VISPATH_SYSTEM, max_tokens=120)
            sketch = [s.strip() for s in sk.sketch if s and s.strip()]
            copied = (tuple(x.lower() for x in sketch) == P.QUESTION_ANALYSIS_EXAMPLE
                      and not all(w in question.lower() for w in ("architect", "born")))
            if sketch and not copied:
                run.depth_predicted = True
                return sketch, sk.depth
            if copied:
                run.fallbacks.append("question analysis: the prompt's example was copied")
        except ModelUnavailable:
            pass
        run.fallbacks.append("question analysis: no valid sketch; S_Q = Q, D̂ = Dmax")
        return [question], self.opt.Dmax

    # ========================================================================= IV-B
    def hop_intent(self, question: str, image, paths: list[ReasoningPath], i: int, run: VisPathRun) -> str:
        """Eq. 4: q_Q^(i) = VLM(I, Q, P(i−1)); ablation "no visual intent" uses Q itself."""
        if self.opt.no_visual_intent:
            return question
        try:
            out = self._vlm_json(image, P.build_hop_intent(question, i, [p.verbalize() for p in paths]),
                                 P.HopIntent, max_tokens=60)
            intent = out.intent.strip()
            if intent:
                return intent
        except ModelUnavailable:
            pass
        # Fallback: the question, focused by the sketch step this hop should take.
        run.fallbacks.append(f"hop {i} intent: no valid JSON; Q ‖ sketch step")
        step = run.sketch[i - 1] if i - 1 < len(run.sketch) and run.sketch != [question] else ""
        return f"{step} {question}".strip()

    def expand_frontier(self, paths: list[ReasoningPath], q_i: str, q_vec: np.ndarray,
                        hop: int) -> list[ReasoningPath]:
        """Eq. 5–7: top-M1 outgoing edges per frontier entity by c_r,q_i, then P_cand(i)."""
        frontier = list(dict.fromkeys(p.end_id for p in paths))
        kept = self.score_edges(frontier, q_vec, hop=hop, intent=q_i)
        cand: list[ReasoningPath] = []
        for p in paths:
            for e in kept.get(p.end_id, []):
                if e.tail_id not in p.entity_ids:                  # no revisits within one path
                    cand.append(p.extend(e))
        return cand                                                # |P_cand(i)| ≤ M1·|P(i−1)| (Eq. 7)

    def score_edges(self, frontier: Sequence[str], q_vec: np.ndarray, *, hop: int = 0, intent: str = "",
                    expansion: str | None = None, M1: int | None = None) -> dict[str, list[Edge]]:
        """Eq. 5 exact scores of (first-cut) outgoing edges; top M1 per frontier entity."""
        m1 = M1 or self.opt.M1
        mode = expansion or self.opt.expansion
        rel = self.relations()
        if mode == "exact":
            rows = self.graph.read("vispath_frontier_edges_all", frontier=list(frontier))
        else:
            rel_scores = {rid: float(vec @ q_vec) for rid, (_, vec) in rel.items() if vec is not None}
            rows = self.graph.read("vispath_frontier_edges", frontier=list(frontier), relation_scores=rel_scores,
                                   intent=q_vec.tolist(), pre_cap=self.opt.pre_cut,
                                   cap=max(self.opt.first_cut, m1))
        if not rows:
            return {}
        rnames = [rel.get(r["relation_id"], (r["relation_id"], None))[0] for r in rows]
        texts = [f"{rn} {r['tail_name'] or r['tail_id']}" for rn, r in zip(rnames, rows)]   # r ‖ e_t
        scores = self.embed(texts) @ q_vec                                                    # Eq. 5
        by_head: dict[str, list[Edge]] = {}
        for r, rn, s in zip(rows, rnames, scores):
            by_head.setdefault(r["head_id"], []).append(
                Edge(r["head_id"], r["head_name"] or r["head_id"], r["relation_id"], rn, r["tail_id"],
                     r["tail_name"] or r["tail_id"], float(s), hop, intent))
        return {h: sorted(es, key=lambda e: (-e.score, e.relation_id, e.tail_id))[:m1] for h, es in by_head.items()}

    # ========================================================================= IV-C
    def chain_scores(self, cand: list[ReasoningPath], question: str, sketch: list[str],
                     q_i: str) -> list[ReasoningPath]:
        """Eq. 8: σ_p,i = cos(SBERT(Verbalize(p)), SBERT(Q ‖ S_Q ‖ q_i)); sorted, best first."""
        target = self.embed([" ".join([question, " → ".join(sketch), q_i])])[0]
        sig = self.embed([p.verbalize() for p in cand]) @ target
        for p, s in zip(cand, sig):
            p.sigma = float(s)
        return sorted(cand, key=lambda p: (-p.sigma, p.verbalize()))

    def examine_chains(self, question: str, sketch: list[str], chain: list[ReasoningPath],
                       hop: HopRecord, run: VisPathRun) -> list[ReasoningPath]:
        """LLM examines P_chain(i) as whole chains; keeps ≤ M3 by σ; empty → top-σ paths."""
        m3 = self.opt.M3
        try:
            if self.opt.selection == "likelihood":   # the M3 chains the LLM finds likeliest
                ll = self.chat.choose(P.build_chain_choice(question, sketch),
                                      [" " + p.verbalize() for p in chain], per_token=True)
                sel = [k + 1 for k in sorted(range(len(chain)), key=lambda k: -ll[k])[:m3]]
            else:
                sel = self.chat.generate_json(
                    P.build_chain_examination(question, sketch, [p.verbalize() for p in chain], m3),
                    P.ChainSelection, system=P.VISPATH_SYSTEM, max_tokens=60).selected
        except ModelUnavailable:
            sel = []
        idx = sorted({n - 1 for n in sel if isinstance(n, int) and 1 <= n <= len(chain)})
        hop.llm_selected = [n + 1 for n in idx]
        if not idx:
            run.fallbacks.append(f"hop {hop.hop} chain examination: LLM selected none; top chain scores")
            return chain[:m3]
        return [chain[n] for n in idx][:m3]          # idx ascending = σ order (chain is σ-sorted)

    # ========================================================================= IV-D
    def evidence_statement(self, question: str, image, paths: list[ReasoningPath], run: VisPathRun) -> str:
        """Eq. 9: z_i = VLM(I, Q, P(i)); fallback: the verbalised paths themselves."""
        verbal = [p.verbalize() for p in paths]
        try:
            z = self._vlm_json(image, P.build_evidence_statement(question, verbal), P.EvidenceStatement,
                               max_tokens=120).statement.strip()
            if z:
                return z
        except ModelUnavailable:
            pass
        run.fallbacks.append("evidence statement: no valid JSON; verbalised paths")
        return "; ".join(verbal)

    def answerability(self, question: str, image, z_i: str, run: VisPathRun) -> tuple[bool, str]:
        """Eq. 10: (η_i, A_i) = VLM(I, Q, z_i). No valid verdict counts as η_i = 0."""
        try:
            out = self._vlm_json(image, P.build_answerability(question, z_i), P.Answerability, max_tokens=60)
        except ModelUnavailable:
            run.fallbacks.append("answerability: no valid JSON; η = 0")
            return False, ""
        ans = out.candidate
        return bool(out.answerable and ans), ans

    def final_answer(self, question: str, image, z_star: str, hop: HopRecord, run: VisPathRun) -> str:
        """Generate A from (I, Q, z*), kept path-faithful.

        The generated answer stands when it names an entity of the retained paths; otherwise the
        hop's candidate A_i when that does; otherwise the endpoint of P(i*) the chat model finds most
        likely as the answer (log-likelihood over the endpoint names), so a weak model's free text
        never replaces the graph evidence.
        """
        a = ""
        try:
            a = self._vlm_json(image, P.build_final_answer(question, z_star), P.FinalAnswer,
                               max_tokens=40).answer.strip()
        except ModelUnavailable:
            run.fallbacks.append("final answer: no valid JSON")
        if a and self.ground_answer(a, run):
            return a
        if hop.candidate_answer and self.ground_answer(hop.candidate_answer, run):
            run.fallbacks.append("final answer names no path entity; candidate answer A_i")
            return hop.candidate_answer
        ends = list(dict.fromkeys(p.end_name for p in hop.retained if p.edges))
        if not ends:
            return a or hop.candidate_answer
        run.fallbacks.append("final answer names no path entity; likeliest retained endpoint")
        if len(ends) == 1:
            return ends[0]
        try:
            ll = self.chat.choose(P.build_answer_choice(question, z_star), [" " + e for e in ends])
            return ends[int(np.argmax(ll))]
        except ModelUnavailable:
            return ends[0]

    def terminal_selection(self, question: str, image, run: VisPathRun) -> None:
        """No answerable hop: rank visited endpoint entities, verify the top ones against the image."""
        paths = [p for h in run.hops for p in h.retained if p.edges and p.end_id != run.start.id]
        if not paths:
            return
        # Rank: path length closest to D̂ first, then the chain score σ it was retained with (Eq. 8; with
        # chain pruning ablated, its edge score). Paths of one length come from one hop, scored under one intent; without a predicted D̂, σ of different hops are compared (see the note on issue 5).
        # (The depth preference applies only when D̂ was predicted, not when it fell back to Dmax.)
        ranked_paths = sorted(paths, key=lambda p: (
            abs(len(p.edges) - run.depth_hat) if run.depth_predicted else 0,
            -(p.sigma if p.sigma is not None else -1.0)))
        # One candidate per endpoint entity, reached by its best-ranked path (an endpoint first seen
        # on a short path must still compete with the D̂-long path that reaches it).
        best: dict[str, ReasoningPath] = {}
        for p in ranked_paths:
            best.setdefault(p.end_id, p)
        ranked = list(best.values())
        top = ranked[: self.opt.verify_top]
        rest = ranked[self.opt.verify_top:]
        verdict: dict[str, bool] = {}
        if image is not None:
            with_images = {r["id"] for r in self.graph.read("vispath_entity_images", ids=[p.end_id for p in top])
                           if r["paths"]}
            for p in top:
                if p.end_id not in with_images:
                    continue
                try:
                    verdict[p.end_id] = self.vision.generate_json(
                        image, P.build_candidate_check(question, p.end_name, p.verbalize()), P.CandidateCheck,
                        system=P.VISPATH_SYSTEM, max_tokens=20).consistent
                except ModelUnavailable:
                    run.fallbacks.append(f"terminal verification of {p.end_id}: no valid JSON; kept in rank")
        top = [p for p in top if verdict.get(p.end_id, True)] + [p for p in top if not verdict.get(p.end_id, True)]
        order = top + rest
        chosen = order[0]
        run.answer, run.answer_id = chosen.end_name, chosen.end_id
        run.selected_paths = order[: self.opt.M3]
        run.sufficient = False
        run.stop_reason = ("terminal selection (no hop judged answerable)" if not self.opt.no_evidence_check
                           else "terminal selection")

    def _answer_from_image(self, question: str, image, run: VisPathRun, t0: float) -> VisPathRun:
        """Last resort: no reliable graph candidate — infer the answer from the image (or the question)."""
        try:
            a = self._vlm_json(image, P.build_image_answer(question), P.FinalAnswer, max_tokens=40).answer.strip()
        except ModelUnavailable:
            a = ""
        run.answer = a or None
        run.sufficient = False
        run.stop_reason = "answered from the image alone" if a else "abstained: no graph evidence, no model answer"
        run.timings["total"] = time.perf_counter() - t0
        return run

    def ground_answer(self, answer: str | None, run: VisPathRun) -> str | None:
        """The KG entity the answer text names, among the entities of the retained paths (else None)."""
        if not answer:
            return None
        names: dict[str, str] = {}
        for h in run.hops:
            for p in h.retained:
                for e in p.edges:
                    names.setdefault(e.tail_id, e.tail_name)
        if not names:
            return None
        low = answer.strip().lower()
        for eid, n in names.items():
            if n.strip().lower() == low:
                return eid
        ids = list(names)
        sims = self.embed([names[i] for i in ids]) @ self.embed([answer])[0]
        j = int(np.argmax(sims))
        return ids[j] if sims[j] >= 0.8 else None

    # ========================================================================= helpers
    def _vlm_json(self, image, prompt: str, schema, max_tokens: int = 120):
        """A vision-conditioned step; without an image the text LLM takes it (kgqa ask "question")."""
        if image is None:
            return self.chat.generate_json(prompt, schema, system=P.VISPATH_SYSTEM, max_tokens=max_tokens)
        return self.vision.generate_json(image, prompt, schema, system=P.VISPATH_SYSTEM, max_tokens=max_tokens)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """SBERT with a per-engine cache (edge texts repeat across hops and questions)."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._emb_cache]
        if missing:
            vecs = np.asarray(self.encoder.encode(missing), dtype=np.float32)
            if len(self._emb_cache) > 200_000:
                self._emb_cache.clear()
            self._emb_cache.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, getattr(self.encoder, "dim", 384)), dtype=np.float32)
        return np.stack([self._emb_cache[t] for t in texts])

    def relations(self) -> dict[str, tuple[str, np.ndarray | None]]:
        """The relation catalogue: id → (name, stored SBERT embedding), read once."""
        if self._relations is None:
            rows = self.graph.read("vispath_relation_catalogue")
            rel: dict[str, tuple[str, Any]] = {}
            for r in rows:
                emb = r.get("embedding")
                vec = np.asarray(emb, dtype=np.float32) if emb else None
                rel[r["id"]] = (r["name"] or r["id"], vec)
            self._relations = rel
        return self._relations
