"""A VisPath run as the shared ``Answer``, and VisPath's own lines of ``kgqa ask``.

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843): the retained paths become ``PathEvidence`` (σ of Eq. 8 as the path score, c_r,q_i
of Eq. 5 and the intent q_i on each step); the start entity, sketch and D̂ go to ``Answer.details``.
"""

from __future__ import annotations

from dataclasses import replace

from kgqa.core.result import GROUNDING, RETAINED_BY_HOP, TIED_WITH, Answer, PathEvidence
from kgqa.methods.vispath.records import VisPathRun


def to_answer(run: VisPathRun, method: str) -> Answer:
    """A VisPathRun as the shared ``kgqa.core.result.Answer``: retained paths as PathEvidence."""
    evidence = []
    for rank, p in enumerate(run.selected_paths, 1):
        steps = [replace(e, hop=k, score=None if e.score is None else round(e.score, 4))
                 for k, e in enumerate(p.edges, 1)]
        evidence.append(PathEvidence(steps=steps, score=None if p.sigma is None else round(p.sigma, 4), rank=rank))
    return Answer(
        question=run.question, answer=run.answer, method=method, answer_id=run.answer_id,
        start_entity_id=run.start.id if run.start else None,
        start_entity_name=run.start.name if run.start else None,
        evidence=evidence, sufficient=run.sufficient, stop_reason=run.stop_reason,
        hops=len(run.hops), fallbacks=list(run.fallbacks),
        details={
            "expression": run.expression, "head": run.head, "object_name": run.object_name,
            "start_candidates": [{"id": c.id, "name": c.name, "retrieval": round(c.retrieval, 4),
                                  "s_Q": None if c.s_Q is None else round(c.s_Q, 4),
                                  "best_relation": c.best_relation} for c in run.start_candidates],
            GROUNDING: None if run.grounding is None else {"score": run.grounding, **run.grounding_parts},
            "start_replaced": run.start_replaced, "sketch": run.sketch, "depth_hat": run.depth_hat,
            "depth_range": list(run.depth_range) if run.depth_range else None,
            "hops": [{"hop": h.hop, "intent": h.intent, "candidates": h.candidates, "chain_kept": h.chain_kept,
                      "llm_selected": h.llm_selected, "retained": [p.verbalize() for p in h.retained],
                      "evidence": h.evidence, "answerable": h.answerable, "candidate_answer": h.candidate_answer}
                     for h in run.hops],
            # P(i) of every hop as [head, PID, tail] triples: kgqa eval tells "not retained" (and at which
            # hop) from "retained but not selected" by these, not only by the M3 paths of the evidence
            RETAINED_BY_HOP: [[[[e.head_id, e.relation_id, e.tail_id] for e in p.edges] for p in h.retained]
                                for h in run.hops],
            "timings": {k: round(v, 3) for k, v in run.timings.items()},
            "chain_scores": "chain reader" if run.reader else "rules" if not run.learned else "learned retriever",
            "dmax": run.dmax,
            TIED_WITH: [{"id": i, "name": n} for i, n in run.tied_with],
            "terminal": (None if not run.reader or run.terminal_candidates is None else
                         "learned" if run.terminal_weights is not None else "fixed"),
        },
    )


def ask_lines(answer: Answer) -> list[str]:
    """The VisPath-specific lines of ``kgqa ask``: start entity (recognised as), sketch and D̂."""
    d = answer.details
    start = f"{answer.start_entity_name} [{answer.start_entity_id}]" if answer.start_entity_id else "(none)"
    extra = f"  (recognised: {d.get('object_name')!r})" if d.get("object_name") else ""
    if d.get("start_replaced"):
        extra += "  (replaced e_Q,1 by graph-aware validation)"
    depth = (f"D̂={d['depth_range'][0]}–{d['depth_range'][1]} from the relations named"
             if d.get("depth_range") and d["depth_range"][0] != d["depth_range"][1] else f"D̂={d.get('depth_hat')}")
    lines = [f"start entity: {start}{extra}",
             f"sketch: {' → '.join(d.get('sketch', []))}  ({depth}, hops run {answer.hops})"]
    if d.get("chain_scores") == "chain reader":
        lines.append(f"chain scores: the chain reader (σ of every kept path, depth ≤ {d.get('dmax')} included)"
                     + {"learned": "; terminal selection: weights learned on this KG (kgqa train terminal)",
                        "fixed": "; terminal selection: the fixed sum"}.get(d.get("terminal") or "", ""))
    tied = d.get(TIED_WITH) or []
    if tied:
        names = ", ".join(f"{t['name']} [{t['id']}]" for t in tied[:5]) + (" …" if len(tied) > 5 else "")
        lines.append(f"tie: {len(tied)} other answer(s) score exactly as {answer.answer!r}: {names}; "
                     "the graph does not tell them apart (the first retained is given)")
    steps = d.get("llm_steps")
    if steps and steps != "all":
        lines.append(f"LLM steps: {steps} (-o llm_steps; the others took their graph-only fallback)")
    return lines
