"""VisPath: visual-intent-guided path reasoning over a multimodal KG.

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question
Answering" (arXiv 2609.20843), Algorithm 1, as the ``vispath`` method of ``kgqa.core.method``.

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

Every model call that must return JSON names a schema from ``kgqa.methods.vispath.prompts``;
when a model answers but not usably (``BadModelReply``: no usable reply after retries, a
declined recognition, the graph-only setting) the step takes the paper's documented
fallback and the run records it, with its code, in ``VisPathRun.fallbacks``. A model
that cannot be reached (``ModelUnavailable``) is never caught here: the question fails.
Graph access goes through ``kgqa.core.kg`` (entity linking, relation catalogue, embeddings)
and ``cypher/vispath_*.cypher``.

Where the pieces live: options (``options``), the per-question records (``records``), the question
heuristics of the fallbacks (``question``), the IV-A steps (``start``), the graph-side scores of Eq. 2
and 5–8 (``scoring``), the grounding score and abstention (``abstain``), the ``Answer`` and the
``kgqa ask`` lines (``render``), the prompts (``prompts``). All state of one question is
in its ``VisPathRun``, so one ``VisPath`` may answer several questions at once.

Interpretations where the paper is silent (each also noted where it happens; those of the path search
in ``kgqa.methods.vispath.scoring``):
* δ grows by 0.01 per rank (V-B): the threshold for a challenger at rank k is
  δ + 0.01·(k − 2), so rank 2 needs δ, rank 3 needs δ + 0.01, …
* Terminal selection ranks endpoints of all retained paths (Algorithm 1: "visited path
  entities"), closest length to D̂ first, then by the chain score σ they were retained with.
* Without an image, the topic mention is taken from the question text and the
  vision-conditioned steps are asked of the text LLM.
* When a model step fails: ``intent_fallback`` (q_i when the intent step fails: Q, or the relations
  the question's phrases name), ``depth_fallback`` (D̂ when the sketch step fails: Dmax, or the number
  of relations the question names).
"""

from __future__ import annotations

import time
from typing import ClassVar

import numpy as np
from pydantic import BaseModel

from kgqa.core.errors import BadModelReply, InvalidInput
from kgqa.core.method import BaseMethod
from kgqa.core.result import GROUNDING, Answer
from kgqa.methods.vispath import prompts as P
from kgqa.methods.vispath.abstain import measure_grounding, weak_grounding
from kgqa.methods.vispath.learned import LearnedPaths
from kgqa.methods.vispath.terminal import TerminalSlot, kind_scores
from kgqa.models.heads.chain_reader import ReaderSlot
from kgqa.methods.vispath.options import VisPathOptions, parse_llm_steps, resolve_llm_steps
from kgqa.methods.vispath.records import HopRecord, ReasoningPath, RelationSketch, VisPathRun
from kgqa.methods.vispath.render import ask_lines, to_answer
from kgqa.methods.vispath.scoring import Scorer
from kgqa.methods.vispath.start import StartEntitySteps


class VisPath(StartEntitySteps, BaseMethod):
    """Algorithm 1 over a Neo4j Wikidata5M graph (the ``vispath`` method).

    From the ``Context``: ``graph`` (kgqa.core.graph.Graph), ``kg`` (shared KG access: SBERT cache,
    entity linking, relation catalogue), the models ``encoder`` (SBERT), ``chat`` (text LLM)
    and ``vision`` (VLM).
    """

    name: ClassVar[str] = "vispath"
    title: ClassVar[str] = ("VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph "
                            "Question Answering")
    arxiv: ClassVar[str | None] = "2609.20843"
    Options: ClassVar[type[BaseModel]] = VisPathOptions
    ablations: ClassVar[tuple[str, ...]] = ("no_graph_validation", "no_visual_intent", "no_chain_pruning",
                                            "no_evidence_check")
    #: ``kgqa ask`` / ``kgqa eval`` flags, each an alias of an option (``--m1 30`` = ``-o M1=30``)
    cli_flags: ClassVar[dict[str, str]] = {
        "--m1": "M1", "--m2": "M2", "--m3": "M3", "--dmax": "Dmax", "--delta": "delta", "--expansion": "expansion",
        "--selection": "selection", "--no-graph-validation": "no_graph_validation",
        "--no-visual-intent": "no_visual_intent", "--no-chain-pruning": "no_chain_pruning",
        "--no-evidence-check": "no_evidence_check"}

    def __init__(self, ctx, options: VisPathOptions | None = None):
        super().__init__(ctx, options)
        self.llm_steps = resolve_llm_steps(self.opt.llm_steps, self.chat)
        self._llm_steps = parse_llm_steps(self.llm_steps)
        self.scorer = Scorer(self.kg, self.graph, self.opt)     # Eq. 2, 5–8 over the graph; no per-question state
        self.learned = (LearnedPaths(self.kg, self.settings, self.opt.path_checkpoint)   # -o path_scorer=learned
                        if self.opt.path_scorer in ("learned", "mixed") else None)        # or mixed
        self.reader = (ReaderSlot(self.kg, self.settings, self.opt.reader_checkpoint)      # the chain reader
                       if self.opt.path_scorer in ("auto", "reader") else None)
        self.terminal = TerminalSlot(self.reader.path, self.opt.terminal_weights) if self.reader else None

    # ========================================================================= the method interface
    def solve(self, query) -> Answer:
        """``kgqa.core.method.Query`` in, ``Answer`` out (the pipeline adds seconds, cost and the trace)."""
        ans = to_answer(self.run(query.question, query.image, query.entity_id, drop_edges=query.drop_edges,
                                 seed=query.seed), self.name)
        ans.details["llm_steps"] = self.llm_steps
        if ans.details.get(GROUNDING) is not None:
            ans.details[GROUNDING]["abstain_below"] = self.opt.abstain_below
        return ans

    def render(self, answer: Answer) -> list[str]:
        """The VisPath-specific lines of ``kgqa ask``: start entity (recognised as), sketch and D̂."""
        return ask_lines(answer)

    # ========================================================================= Algorithm 1
    def run(self, question: str, image=None, entity_id: str | None = None, *, drop_edges: float = 0.0,
            seed: int = 0) -> VisPathRun:
        """Algorithm 1 for one question. ``drop_edges``, ``seed``: the incomplete-KG evaluation (--drop-edges):
        that share of the start entity's facts is hidden from every expansion (``VisPathRun.hidden``)."""
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
                run.start, run.start_replaced = self.graph_aware_validation(question, cands, run,  # Eq. 2–3
                                                                            has_image=image is not None)
        run.timings["start_entity"] = time.perf_counter() - t0
        if not entity_id:
            measure_grounding(self.vision, image, run)
        if o.abstain_below > 0 and not entity_id:                               # abstention (not the paper's)
            why = weak_grounding(run, o.abstain_below)
            if why:
                run.stop_reason = f"abstained: {why}"
                run.timings["total"] = time.perf_counter() - t0
                return run
        if run.start is not None and drop_edges:
            run.hidden = self.kg.hidden_facts(run.start.id, drop_edges, seed)

        # --- which scores the chains: the chain reader when no LLM examines them (ours), else Eq. 8 --------
        run.reader = self._reader_ready(run)
        run.dmax = o.Dmax or (4 if run.reader else 3)

        # --- line 1: sketch S_Q and predicted depth D̂ ---------------------------------
        run.sketch, d_hat = self.analyze_question(question, run, image is not None)
        run.depth_hat = min(d_hat, run.dmax)                                    # D̂ ← min(D̂, Dmax)

        if run.start is None:
            run.fell_back("no start entity found", "graph")
            return self._answer_from_image(question, image, run, t0)

        # --- lines 2–9: hop loop --------------------------------------------------------
        paths = [ReasoningPath(run.start.id, run.start.name)]                  # P(0) = {(e_S)}
        z_star: str | None = None                                              # z* ← ⊥
        star_hop: HopRecord | None = None
        for i in range(1, run.dmax + 1):
            th = time.perf_counter()
            q_i = self.hop_intent(question, image, paths, i, run)              # Eq. 4
            q_vec = self.scorer.embed([q_i])[0]
            learned = self.learned.relation_scores(question, paths) if run.learned else None
            cand = self.scorer.expand_frontier(paths, q_i, q_vec, i,           # Eq. 5–7
                                               relation_sketch=run.relation_sketch, hidden=run.hidden,
                                               learned=learned)
            hop = HopRecord(hop=i, intent=q_i, candidates=len(cand))
            run.hops.append(hop)
            if not cand:
                run.fell_back(f"hop {i}: no outgoing edges to expand", "graph")
                run.timings[f"hop_{i}"] = time.perf_counter() - th
                break
            if o.no_chain_pruning:                                             # ablation: hop-level edge scores only
                paths = sorted(cand, key=lambda p: -p.edges[-1].score)[: o.M3]
                for p in paths:
                    p.sigma = p.edges[-1].score
                hop.chain_kept = len(cand)
            elif run.reader:                                                   # the chain reader (ours)
                paths = self.reader_keeps(question, cand, q_i, hop, run)
            else:
                chain = self.chain_scores(question, cand, q_i, run)[: o.M2]       # Eq. 8, top M2
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

    # ========================================================================= IV-C (sketch)
    def analyze_question(self, question: str, run: VisPathRun, has_image: bool = False) -> tuple[list[str], int]:
        try:
            self._ask("sketch")
            sk = self.chat.generate_json(P.build_question_analysis(question), P.QuestionSketch,
                                         system=P.VISPATH_SYSTEM, max_tokens=120)
            sketch = [s.strip() for s in sk.sketch if s and s.strip()]
            copied = (tuple(x.lower() for x in sketch) == P.QUESTION_ANALYSIS_EXAMPLE
                      and not all(w in question.lower() for w in ("architect", "born")))
            if sketch and not copied:
                run.depth_predicted = True
                return sketch, sk.depth
            why = "empty"
            if copied:
                run.fell_back("question analysis: the prompt's example was copied", "empty")
        except BadModelReply as e:
            why = e.code
        if self.opt.depth_fallback == "sketch":
            # D̂ from the non-LLM sketch (ours): one hop per relation the question names, the answer-type
            # noun ("which city") an optional last hop, so D̂ is a range (lo, hi)
            rng = self.sketch_of(question, run, has_image).depth
            if rng is not None:
                lo, hi = min(rng[0], run.dmax), min(rng[1], run.dmax)
                run.depth_range = (lo, hi)
                d = f"{lo}" if lo == hi else f"{lo}–{hi}"
                run.fell_back(f"question analysis: no valid sketch; S_Q = Q, D̂ = {d} from the relations "
                              "the question names", why)
                return [question], lo
        run.fell_back("question analysis: no valid sketch; S_Q = Q, D̂ = Dmax", why)
        return [question], run.dmax

    # ========================================================================= IV-B
    def hop_intent(self, question: str, image, paths: list[ReasoningPath], i: int, run: VisPathRun) -> str:
        """Eq. 4: q_Q^(i) = VLM(I, Q, P(i−1)); ablation "no visual intent" uses Q itself."""
        if self.opt.no_visual_intent:
            return question
        try:
            self._ask("intent")
            out = self._vlm_json(image, P.build_hop_intent(question, i, [p.verbalize() for p in paths]),
                                 P.HopIntent, max_tokens=60)
            intent = out.intent.strip()
            if intent:
                return intent
            why = "empty"
        except BadModelReply as e:
            why = e.code
        if self.learned is not None and self._learned_ready(run) and self.opt.path_scorer == "learned":
            run.fell_back(f"hop {i} intent: no usable reply; the learned path scorer reads Q", why)
            return question          # (mixed: the rules' intent below; the retriever's scores are added)
        if self.opt.intent_fallback == "relations" and not run.depth_predicted:
            # Fallback (our choice; the paper has none) when the model gave no sketch S_Q either (a sketch
            # it gave names this hop's relation: below): the relations the question names, matched
            # phrase by phrase against the catalogue. Hop order is not guessed: every named relation
            # is sought at every hop, and an edge's relation score is its relation's best phrase match.
            sketch = self.sketch_of(question, run, image is not None)
            if sketch.intent:
                run.fell_back(f"hop {i} intent: no usable reply; the relations the question names", why)
                return sketch.intent
        # Fallback: the question, focused by the sketch step this hop should take.
        run.fell_back(f"hop {i} intent: no usable reply; Q ‖ sketch step", why)
        step = run.sketch[i - 1] if i - 1 < len(run.sketch) and run.sketch != [question] else ""
        return f"{step} {question}".strip()

    def sketch_of(self, question: str, run: VisPathRun, has_image: bool) -> RelationSketch:
        """The question's non-LLM relation sketch (``Scorer.relation_sketch``), computed once per question
        and kept in its ``run``."""
        if run.relation_sketch is None:
            run.relation_sketch = self.scorer.relation_sketch(question, has_image)
        return run.relation_sketch

    # ========================================================================= IV-C
    def chain_scores(self, question: str, cand: list[ReasoningPath], q_i: str, run: VisPathRun
                     ) -> list[ReasoningPath]:
        """Eq. 8's σ of each candidate path, best first: the rules' (``Scorer.chain_scores``); with the learned
        retriever in use (``run.learned``), its own (path_scorer=learned) or the rules' plus learned_weight × its
        score (path_scorer=mixed)."""
        if run.learned and self.opt.path_scorer == "learned":
            return self.learned.chain_scores(question, cand)
        chain = self.scorer.chain_scores(cand, question, run.sketch, q_i, relation_sketch=run.relation_sketch)
        return self.learned.add_chain_scores(question, chain, self.opt.learned_weight) if run.learned else chain

    def reader_keeps(self, question: str, cand: list[ReasoningPath], q_i: str, hop: HopRecord,
                     run: VisPathRun) -> list[ReasoningPath]:
        """P(i) when the chain reader stands in for the LLM's chain examination (ours): σ of every candidate is
        the reader's score of its relation chain under Q plus ``reader_rules_weight`` × the rules' Eq. 8 σ; kept are the reader's best ``reader_beam`` paths and
        the rules' best ``M3_fallback`` (their Eq. 8 order), so the reader only adds to what the rules keep.
        Terminal selection then ranks every kept path of every hop by the reader's σ: the depth is its call."""
        o = self.opt
        ruled = self.chain_scores(question, cand, q_i, run)[: o.M2]               # the rules' Eq. 8 order
        hop.chain_kept = len(ruled)
        reader = self.reader.get()
        s = reader.score(question, [[e.relation_id for e in p.edges] for p in cand])
        w = o.reader_rules_weight
        for p, v in zip(cand, s):
            p.reader_score, p.rules_sigma = float(v), p.sigma
            p.sigma = float(v) + (w * float(p.sigma) if w and p.sigma is not None else 0.0)
        by_reader = sorted(cand, key=lambda p: (-p.sigma, p.verbalize()))
        keep = {id(p): p for p in by_reader[: o.reader_beam]}
        for p in ruled[: o.M3_fallback or o.M3]:
            keep.setdefault(id(p), p)
        return sorted(keep.values(), key=lambda p: (-p.sigma, p.verbalize()))

    def examine_chains(self, question: str, sketch: list[str], chain: list[ReasoningPath],
                       hop: HopRecord, run: VisPathRun) -> list[ReasoningPath]:
        """LLM examines P_chain(i) as whole chains; keeps ≤ M3 by σ; empty → top-σ paths."""
        m3 = self.opt.M3
        try:
            self._ask("chain")
            if self.opt.selection == "likelihood":   # the M3 chains the LLM finds likeliest
                ll = self.chat.choose(P.build_chain_choice(question, sketch),
                                      [" " + p.verbalize() for p in chain], per_token=True)
                sel = [k + 1 for k in sorted(range(len(chain)), key=lambda k: -ll[k])[:m3]]
            else:
                sel = self.chat.generate_json(
                    P.build_chain_examination(question, sketch, [p.verbalize() for p in chain], m3),
                    P.chain_selection_schema(m3, len(chain)), system=P.VISPATH_SYSTEM, max_tokens=60).selected
            why = "empty"
        except BadModelReply as e:
            sel, why = [], e.code
        idx = sorted({n - 1 for n in sel if isinstance(n, int) and 1 <= n <= len(chain)})
        hop.llm_selected = [n + 1 for n in idx]
        if not idx:
            run.fell_back(f"hop {hop.hop} chain examination: LLM selected none; top chain scores", why)
            return chain[: self.opt.M3_fallback or m3]
        return [chain[n] for n in idx][:m3]          # idx ascending = σ order (chain is σ-sorted)

    # ========================================================================= IV-D
    def evidence_statement(self, question: str, image, paths: list[ReasoningPath], run: VisPathRun) -> str:
        """Eq. 9: z_i = VLM(I, Q, P(i)); fallback: the verbalised paths themselves."""
        verbal = [p.verbalize() for p in paths]
        try:
            self._ask("evidence")
            z = self._vlm_json(image, P.build_evidence_statement(question, verbal), P.EvidenceStatement,
                               max_tokens=120).statement.strip()
            if z:
                return z
            why = "empty"
        except BadModelReply as e:
            why = e.code
        run.fell_back("evidence statement: no usable reply; verbalised paths", why)
        return "; ".join(verbal)

    def answerability(self, question: str, image, z_i: str, run: VisPathRun) -> tuple[bool, str]:
        """Eq. 10: (η_i, A_i) = VLM(I, Q, z_i). No valid verdict counts as η_i = 0."""
        try:
            self._ask("answerability")
            out = self._vlm_json(image, P.build_answerability(question, z_i), P.Answerability, max_tokens=60)
        except BadModelReply as e:
            run.fell_back("answerability: no usable reply; η = 0", e.code)
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
            self._ask("final")
            a = self._vlm_json(image, P.build_final_answer(question, z_star), P.FinalAnswer,
                               max_tokens=40).answer.strip()
        except BadModelReply as e:
            run.fell_back("final answer: no usable reply", e.code)
        if a and self.ground_answer(a, run):
            return a
        if hop.candidate_answer and self.ground_answer(hop.candidate_answer, run):
            run.fell_back("final answer names no path entity; candidate answer A_i", "empty")
            return hop.candidate_answer
        ends = list(dict.fromkeys(p.end_name for p in hop.retained if p.edges))
        if not ends:
            return a or hop.candidate_answer
        run.fell_back("final answer names no path entity; likeliest retained endpoint", "empty")
        if len(ends) == 1:
            return ends[0]
        try:
            self._ask("final")
            ll = self.chat.choose(P.build_answer_choice(question, z_star), [" " + e for e in ends])
            return ends[int(np.argmax(ll))]
        except BadModelReply:
            return ends[0]

    def terminal_selection(self, question: str, image, run: VisPathRun) -> None:
        """No answerable hop: rank visited endpoint entities, verify the top ones against the image."""
        if run.reader:        # the weights learned on this KG (when fitted), the depth the sketch reads, the kinds
            run.terminal_weights = self.terminal.get(run)
            self.sketch_of(question, run, image is not None)
            run.kind_scores = kind_scores(self.reader.get(), self.kg, question,
                                          [p for h in run.hops for p in h.retained if p.edges])
        ranked = self.scorer.rank_endpoints(question, image is not None, run)
        if not ranked:
            return
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
                    self._ask("verify")
                    verdict[p.end_id] = self.vision.generate_json(
                        image, P.build_candidate_check(question, p.end_name, p.verbalize()), P.CandidateCheck,
                        system=P.VISPATH_SYSTEM, max_tokens=20).consistent
                except BadModelReply as e:
                    run.fell_back(f"terminal verification of {p.end_id}: no usable reply; kept in rank", e.code)
        top = [p for p in top if verdict.get(p.end_id, True)] + [p for p in top if not verdict.get(p.end_id, True)]
        order = top + rest
        chosen = order[0]
        # the image check decides a tie when it puts another candidate first, and drops the tied it rejects
        run.tied_with = ([t for t in run.tied_with if verdict.get(t[0], True)] if chosen is ranked[0] else [])
        run.answer, run.answer_id = chosen.end_name, chosen.end_id
        run.selected_paths = order[: self.opt.M3]
        run.sufficient = False
        run.stop_reason = ("terminal selection (no hop judged answerable)" if not self.opt.no_evidence_check
                           else "terminal selection")

    def _answer_from_image(self, question: str, image, run: VisPathRun, t0: float) -> VisPathRun:
        """Last resort: no reliable graph candidate — infer the answer from the image (or the question)."""
        try:
            self._ask("final")
            a = self._vlm_json(image, P.build_image_answer(question), P.FinalAnswer, max_tokens=40).answer.strip()
        except BadModelReply:
            a = ""
        run.answer = a or None
        run.sufficient = False
        run.stop_reason = "answered from the image alone" if a else "abstained: no graph evidence, no model answer"
        run.timings["total"] = time.perf_counter() - t0
        return run

    def ground_answer(self, answer: str | None, run: VisPathRun) -> str | None:
        """The KG entity the answer text names, among the entities of the retained paths (else None)."""
        names: dict[str, str] = {}
        for h in run.hops:
            for p in h.retained:
                for e in p.edges:
                    names.setdefault(e.tail_id, e.tail_name)
        return self.kg.ground_answer(answer, names)

    # ========================================================================= helpers
    def _learned_ready(self, run: VisPathRun) -> bool:
        """path_scorer=learned: whether its checkpoint is usable; when not, the rules take over and the run
        records why once (one line, fallback code ``checkpoint``)."""
        if self.learned.retriever() is not None:
            run.learned = True
            return True
        if not any(f.code == "checkpoint" for f in run.fallbacks):
            run.fell_back(f"path scorer: {self.learned.error}; the rules take over", "checkpoint")
        return False

    def _reader_ready(self, run: VisPathRun) -> bool:
        """Whether the chain reader scores this question's chains: path_scorer auto or reader, no LLM examines the
        chains (``llm_steps`` without ``chain``, or no chat model: the graph-only setting), and the checkpoint fits
        the loaded KG; when it does not, the rules take over and the run records why (one line, fallback code
        ``checkpoint``)."""
        no_llm = getattr(self.chat, "backend", None) == "none"
        if self.reader is None or ("chain" in self._llm_steps and not no_llm):
            return False
        if self.reader.get() is not None:
            return True
        run.fell_back(f"chain reader: {self.reader.error}; the rules take over", "checkpoint")
        return False

    def _ask(self, step: str) -> None:
        """Per-step ablation (``llm_steps``): a step that is off takes its fallback, as in the graph-only setting."""
        if step not in self._llm_steps:
            raise BadModelReply(f"{step}: model step switched off (llm_steps)", code="off")

    def _vlm_json(self, image, prompt: str, schema, max_tokens: int = 120):
        """A vision-conditioned step; without an image the text LLM takes it (kgqa ask "question")."""
        if image is None:
            return self.chat.generate_json(prompt, schema, system=P.VISPATH_SYSTEM, max_tokens=max_tokens)
        return self.vision.generate_json(image, prompt, schema, system=P.VISPATH_SYSTEM, max_tokens=max_tokens)
