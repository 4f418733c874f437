"""A GraSP run as the shared ``Answer``, and GraSP's own lines of ``kgqa ask``.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting": the chains
from the topic to the selected entities become ``PathEvidence`` (a fact walked against its direction as
"inverse of r"), each round's subgraph G_t a ``SubgraphEvidence``; the variant, the rounds and their
selections go to ``Answer.details``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgqa.core.result import Answer, EdgeRef, NodeRef, PathEvidence, Step, SubgraphEvidence
from kgqa.methods.grasp.subgraph import Fact

if TYPE_CHECKING:
    from kgqa.methods.grasp.records import GraSPRun


def to_path_evidence(chain: list[Fact], names: dict[str, str], rel_names: dict[str, str], rnd: int,
                     rank: int, start: str | None = None) -> PathEvidence:
    """The chain from the topic as steps in walking order; a fact walked against its direction is named
    "inverse of r" (its head and tail swapped in the step, the fact itself in the note)."""
    steps = []
    cur = start if start is not None else (chain[0].head_id if chain else None)
    for k, f in enumerate(chain, 1):
        name = rel_names.get(f.relation_id, f.relation_id)
        if f.head_id == cur:
            h, t, rn, note = f.head_id, f.tail_id, name, f"round {rnd}"
        else:
            h, t, rn, note = f.tail_id, f.head_id, f"inverse of {name}", f"round {rnd}; fact {f.key}"
        steps.append(Step(head_id=h, head_name=names[h], relation_id=f.relation_id, relation_name=rn, tail_id=t,
                          tail_name=names[t], hop=k, score=round(f.score, 4), note=note))
        cur = t
    return PathEvidence(steps=steps, score=round(min(f.score for f in chain), 4), rank=rank)


_VARIANT_TEXT = {"nodes": "GAT node-scoring head (no soft-prompt LLM served)",
                 "gat": "GAT soft prompt + triples (GraSP)", "text": "text soft prompt + triples (ablation)",
                 "triples": "triples only (ablation)", "none": "question + candidate names only (ablation)"}


def to_answer(run: GraSPRun, method) -> Answer:
    """The run as the shared ``Answer``; ``method`` is the ``GraSP`` that ran it (its options, variant, head,
    checkpoint and relation names; not imported here, which would close a circle with algorithm.py)."""
    evidence: list = list(run.evidence)
    rel_names = method.relation_names()
    for k, r in enumerate(run.rounds, 1):
        sub = r.subgraph
        nodes = [NodeRef("Entity", n, sub.names[n], round(sub.node_score.get(n, 1.0 if n == sub.topic_id else 0.0), 4))
                 for n in sub.node_ids]
        edges = [EdgeRef("Entity", f.head_id, f.relation_id, "Entity", f.tail_id, round(f.score, 4),
                         rel_names.get(f.relation_id, f.relation_id)) for f in sub.facts]
        hops = sub.hops or method.opt.hops
        evidence.append(SubgraphEvidence(nodes=nodes, edges=edges, rank=k,
                                         note=f"round {k}: {hops}-hop subgraph of {sub.names[sub.topic_id]}"))
    return Answer(
        question=run.question, answer=run.answer, method=method.name, answer_id=run.answer_id,
        start_entity_id=run.topic_id, start_entity_name=run.topic_name, evidence=evidence,
        sufficient=None, stop_reason=run.stop_reason, hops=len(run.rounds), fallbacks=list(run.fallbacks),
        details={
            "variant": method.variant, "head": method.head, "variant_text": _VARIANT_TEXT[method.variant],
            "checkpoint": str(method.checkpoint) if method.checkpoint else None,
            "topic_how": run.topic_how, "hidden_facts": run.hidden_facts, "evidence_text": run.evidence_text,
            "options": method.opt.model_dump(),
            "rounds": [{"round": k, "topic": {"id": r.topic_id, "name": r.topic_name},
                        "nodes": len(r.subgraph.names), "facts": len(r.subgraph.facts),
                        "soft_tokens": r.soft_tokens, "select_raw": r.select_raw,
                        "selected": [{"id": n, "name": r.subgraph.names[n]} for n in r.selected],
                        "scores": [{"id": n, "name": r.subgraph.names[n], "p": round(p, 4)}
                                   for n, p in r.scores[: method.opt.max_selected]],
                        "ranked_by": r.ranked_by if r.scores else None,
                        "decision": r.decision, "entity": r.entity, "next_topic": r.next_topic,
                        "seconds": {a: round(b, 3) for a, b in r.seconds.items()}}
                       for k, r in enumerate(run.rounds, 1)],
        })


def ask_lines(answer: Answer) -> list[str]:
    """The GraSP-specific lines of ``kgqa ask``: topic entity, LLM_select input, the rounds."""
    d = answer.details
    lines = [f"topic entity: {answer.start_entity_name} [{answer.start_entity_id}]  ({d.get('topic_how')})"
             if answer.start_entity_id else "topic entity: (none)",
             f"LLM_select input: {d.get('variant_text')}"]
    for r in d.get("rounds", []):
        sel = (", ".join(f"{s['name']} {s['p']:.2f}" for s in r["scores"]) if r.get("scores")
               else ", ".join(s["name"] for s in r["selected"])) or "-"
        nxt = f" → next topic {r['next_topic']}" if r.get("next_topic") else ""
        if r.get("ranked_by") == "chain reader":
            sel = f"{sel} (ranked by the chain reader)"
        lines.append(f"round {r['round']}: {r['topic']['name']} · subgraph {r['nodes']} nodes / {r['facts']} "
                     f"facts · {r['soft_tokens']} soft tokens · selected: {sel} · {r['decision']}{nxt}")
    if d.get("hidden_facts"):
        lines.append(f"drop-edges: {d['hidden_facts']} of the topic entity's facts hidden at query time")
    return lines
