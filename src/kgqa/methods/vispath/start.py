"""IV-A of VisPath: the starting entity e_S (Eq. 1–3).

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843), Section IV-A: the visual-aware candidate ranking (o = VLM(I, HEAD), the entity-name
vector index, the LLM's ranking) and the graph-aware validation of Eq. 2–3. ``StartEntitySteps`` is a
part of ``kgqa.methods.vispath.algorithm.VisPath`` (which inherits it): its methods use the method's
models, options, ``scorer``, ``sketch_of`` and ``_ask``, and record fallbacks in the question's ``VisPathRun``.
"""

from __future__ import annotations

from kgqa.core.errors import BadModelReply, InvalidInput
from kgqa.methods.vispath import prompts as P
from kgqa.core.question import topic_mention_heuristic
from kgqa.methods.vispath.records import StartCandidate, VisPathRun


class StartEntitySteps:
    """The IV-A steps of ``VisPath.run``: a given start entity, candidate ranking, graph-aware validation."""

    def given_start(self, entity_id: str) -> StartCandidate:
        row = self.kg.entity(entity_id)
        if row is None:
            raise InvalidInput(f"--entity {entity_id}: no such entity in the graph")
        return StartCandidate(row["id"], row["name"] or row["id"], retrieval=1.0)

    def rank_start_candidates(self, question: str, image, run: VisPathRun) -> list[StartCandidate]:
        """Visual-aware candidate ranking: HEAD → o = VLM(I, HEAD) (Eq. 1) → SBERT index → LLM ranks."""
        has_image = image is not None
        try:
            self._ask("expression")
            ref = self.chat.generate_json(P.build_referring_expression(question, has_image=has_image),
                                          P.ReferringExpression, system=P.VISPATH_SYSTEM, max_tokens=80)
            run.expression, run.head = ref.expression.strip(), ref.head.strip()
        except BadModelReply as e:
            run.fell_back("referring expression: no usable LLM reply; "
                          + ("HEAD='object'" if has_image else "capitalised-words heuristic"), e.code)
            run.expression = question if has_image else topic_mention_heuristic(question)
            run.head = "object"
        if has_image:
            try:
                run.object_name = self.vision.recognize(image, run.head).strip()     # Eq. 1
                why = "empty"
            except BadModelReply as e:
                run.object_name, why = "", e.code
            if not run.object_name:
                run.fell_back("recognition: vision model named nothing; using the referring expression", why)
                run.object_name = run.expression
        else:
            if run.expression and run.expression.lower() not in question.lower():
                # a small LLM may invent a mention; the question's own words are safer
                run.fell_back("topic mention not in the question; capitalised-words heuristic", "empty")
                run.expression = topic_mention_heuristic(question)
            run.object_name = run.expression
        retrieved = [StartCandidate(c.id, c.name, retrieval=c.cos, label=c.label)
                     for c in self.kg.link_entities(run.object_name, self.opt.K)]
        if not retrieved:
            return []
        try:
            self._ask("ranking")
            if self.opt.selection == "likelihood":
                ll = self.chat.choose(P.build_candidate_choice(question, run.expression, run.object_name),
                                      [" " + c.name for c in retrieved], per_token=True)
                ranked = [retrieved[k].name for k in sorted(range(len(retrieved)), key=lambda k: -ll[k])]
            else:
                names = [c.name for c in retrieved]
                ranked = self.chat.generate_json(
                    P.build_candidate_ranking(question, run.expression, run.object_name, names),
                    P.candidate_ranking_schema(tuple(names), min(self.opt.rank_top, len(names))),
                    system=P.VISPATH_SYSTEM, max_tokens=160).ranked
            why = "empty"
        except BadModelReply as e:
            ranked, why = [], e.code
        by_name: dict[str, StartCandidate] = {}
        for c in retrieved:
            by_name.setdefault(c.name.strip().lower(), c)
        out: list[StartCandidate] = []
        for name in ranked:
            c = by_name.get(str(name).strip().lower())
            if c is not None and c not in out:
                out.append(c)
        if not out:
            run.fell_back("candidate ranking: LLM kept no listed entity; vector-index order", why)
            out = retrieved
        return out          # the model keeps the candidates that fit (a filter); Eq. 2–3 weigh those

    def graph_aware_validation(self, question: str, cands: list[StartCandidate],
                               run: VisPathRun, has_image: bool = False) -> tuple[StartCandidate, bool]:
        """Eq. 2–3: keep e_Q,1 unless the best other candidate's s_Q exceeds it by more than δ_k*."""
        sketch = self.sketch_of(question, run, has_image) if self.opt.compat_score == "sketch" else None
        sim = self.scorer.compatibility(question, [c.id for c in cands], sketch)
        for c in cands:                                                           # Eq. 2
            c.s_Q, c.best_relation = sim.get(c.id, (-1.0, None))                # -1: no outgoing relation
        if self.opt.no_graph_validation or len(cands) < 2:
            return cands[0], False
        rivals = range(1, len(cands))
        if self.opt.keep_label_match and not has_image and cands[0].label:
            # a question that names its entity ("the Statue of Liberty"): a candidate whose label is that
            # name is not replaced by one whose label is not (our guard; a recognised image keeps Eq. 3 whole)
            rivals = [k for k in rivals if cands[k].label]
            if not rivals:
                return cands[0], False
        k_star = max(rivals, key=lambda k: cands[k].s_Q)                         # argmax over 2 ≤ k ≤ K
        delta_k = self.opt.delta + self.opt.delta_step * (k_star - 1)            # δ grows 0.01 per rank
        gap = max(0.0, (cands[0].retrieval or 0.0) - (cands[k_star].retrieval or 0.0))
        delta_k += self.opt.delta_grounding * gap                                # ours: the grounding margin
        if cands[k_star].s_Q - cands[0].s_Q > delta_k:                           # Eq. 3
            winner = cands[k_star]
            cands.insert(0, cands.pop(k_star))                                   # ẽ_Q,1 = e_Q,k*
            return winner, True
        return cands[0], False
