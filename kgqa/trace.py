"""Reasoning traces in Neo4j, readable in Neo4j Browser.

One answered question becomes::

    (:Question {id, text, image_sha256, answer, answer_id, method, created_at, seconds, cost (json),
                sufficient, stop_reason, start_entity_id})
      -[:HAS_PATH {rank}]-> (:Path {id, rank, score, text})
          -[:STEP {hop: 0}]-> (start :Entity)
          -[:STEP {hop: 1, relation_id, relation_name, score, intent}]-> (:Entity)
          -[:STEP {hop: 2, …}]-> (:Entity) …
      -[:STARTS_AT]-> (:Entity)      -[:ANSWERED_BY]-> (:Entity)   (when known)

Steps point at the real ``:Entity`` nodes; trace writes only create ``Question``/``Path``
nodes and relationships leaving them, so the KG's facts are never altered. Queries:
``cypher/trace_*.cypher``.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict

from kgqa import cypher
from kgqa.errors import InvalidInput
from kgqa.result import Answer

_TRACE_ID = re.compile(r"^[0-9a-f]{16}$")


def new_trace_id() -> str:
    return secrets.token_hex(8)


def check_trace_id(trace_id: str) -> str:
    if not isinstance(trace_id, str) or not _TRACE_ID.match(trace_id):
        raise InvalidInput(f"trace id {trace_id!r} is not a kgqa trace id (16 hex digits)")
    return trace_id


def browser_cypher(trace_id: str) -> str:
    """The one line to paste into Neo4j Browser (cypher/trace_browser.cypher with the id written in)."""
    stmt = cypher.statements("trace_browser")[0]
    return " ".join(stmt.split()).replace("$id", f"'{check_trace_id(trace_id)}'")


def write_trace(graph, answer: Answer, *, trace_id: str, image_sha256: str | None = None) -> dict:
    """Store ``answer`` as a trace; returns {id, paths, steps}."""
    check_trace_id(trace_id)
    cost = {role: asdict(c) for role, c in answer.cost.items()}
    question = {
        "id": trace_id, "text": answer.question, "image_sha256": image_sha256, "answer": answer.answer,
        "answer_id": answer.answer_id, "method": answer.method, "seconds": round(answer.seconds, 3),
        "cost": json.dumps(cost, sort_keys=True), "sufficient": answer.sufficient,
        "stop_reason": answer.stop_reason, "start_entity_id": answer.start_entity_id,
        "start_entity_name": answer.start_entity_name, "hops": answer.hops,
    }
    paths = []
    for p in answer.paths:
        if not p.steps:
            continue
        steps = [{"hop": 0, "entity_id": p.steps[0].head_id, "score": None, "relation_id": None,
                  "relation_name": None, "intent": None}]
        for s in p.steps:
            steps.append({"hop": s.hop, "entity_id": s.tail_id, "score": s.edge_score, "relation_id": s.relation_id,
                          "relation_name": s.relation_name, "intent": s.intent})
        paths.append({"id": f"{trace_id}-{p.rank}", "rank": p.rank, "score": p.score, "text": p.verbalize(),
                      "steps": steps})
    rows = graph.write("trace_write", question=question, paths=paths)
    return rows[0] if rows else {"id": trace_id, "paths": 0, "steps": 0}


def show_trace(graph, trace_id: str) -> dict | None:
    rows = graph.read("trace_show", id=check_trace_id(trace_id))
    if not rows:
        return None
    out = rows[0]
    q = dict(out["question"])
    if isinstance(q.get("cost"), str):
        try:
            q["cost"] = json.loads(q["cost"])
        except ValueError:
            pass
    return {"question": q, "paths": out["paths"]}


def list_traces(graph, limit: int = 20) -> list[dict]:
    return graph.read("trace_list", limit=int(limit))


def remove_trace(graph, trace_id: str) -> int:
    return int(graph.write("trace_rm", id=check_trace_id(trace_id))[0]["removed"])


def remove_older_than(graph, days: float) -> int:
    if days < 0:
        raise InvalidInput(f"--older-than must be a number of days >= 0, got {days}")
    rows = graph.write("trace_rm_older", days=float(days))
    return int(rows[0]["removed"]) if rows else 0


def format_trace(trace: dict) -> str:
    """Plain text of a stored trace (kgqa trace show)."""
    q = trace["question"]
    lines = [f"trace {q.get('id')} · {q.get('method')} · {q.get('created_at')}",
             f"question: {q.get('text')}",
             f"answer:   {q.get('answer')}" + (f" ({q['answer_id']})" if q.get("answer_id") else ""),
             f"start:    {q.get('start_entity_name')} ({q.get('start_entity_id')})",
             f"evidence sufficient: {q.get('sufficient')} · {q.get('stop_reason')}"]
    for p in trace["paths"]:
        steps = sorted(p["steps"], key=lambda s: s["hop"])
        chain = steps[0]["entity_name"] if steps else ""
        for s in steps[1:]:
            chain += f" -[{s['relation_name']}]-> {s['entity_name']}"
        score = f"{p['score']:.3f}" if isinstance(p.get("score"), (int, float)) else "-"
        lines.append(f"path {p['rank']} (σ={score}): {chain}")
    cost = q.get("cost") or {}
    if isinstance(cost, dict):
        for role, c in sorted(cost.items()):
            lines.append(f"cost {role}: {c.get('calls')} calls, {c.get('prompt_tokens', 0)}+"
                         f"{c.get('completion_tokens', 0)} tokens, {c.get('seconds', 0):.2f} s")
    return "\n".join(lines)
