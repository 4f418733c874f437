"""Reasoning traces of any method in Neo4j, readable in Neo4j Browser.

One answered question becomes a ``(:Question {id, text, image_sha256, answer, answer_id, method,
created_at, seconds, cost (json), fallbacks (json), sufficient, stop_reason, start_entity_id, …})``
linked to the graph nodes its typed evidence (``kgqa.core.result``) used::

    path evidence      -[:HAS_PATH {rank}]-> (:Path {id, rank, score, text})
                           -[:STEP {hop: 0}]-> (start node)
                           -[:STEP {hop: 1, relation_id, relation_name, score, intent}]-> (node) …
    chunk evidence     -[:USED {rank, score, kind: 'chunk', page, citation}]-> (:Chunk)   (page, citation: where
                                                                            it is, "falcon_9.pdf p. 2 · History")
                       -[:USED {rank, score, kind: 'support', sentence}]-> (:Chunk)   the chunk the answer's
                                                                            sentence was read from
    subgraph evidence  -[:HAS_SUBGRAPH {rank}]-> (:Subgraph {id, rank, note, edges (json)})
                           -[:CONTAINS {weight}]-> (node) …
    -[:STARTS_AT]-> (:Entity)      -[:ANSWERED_BY]-> (:Entity)   (when known)

Nodes are found by label and id, labels only from ``kgqa.core.result.TRACE_LABELS``; every
reference is resolved first (``cypher/trace_resolve.cypher``) and a trace pointing at a
node that does not exist is refused with one line naming it (``TraceError``), so no
evidence is dropped silently and nothing is half-written. Trace writes only create
``Question``/``Path``/``Subgraph`` nodes and relationships leaving them; the KG is never
altered. Queries: ``cypher/trace_*.cypher``.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict

from kgqa import cypher
from kgqa.core.errors import InvalidInput, KgqaError
from kgqa.core.result import TRACE_LABELS, Answer, ChunkEvidence, PathEvidence, SubgraphEvidence


class TraceError(KgqaError):
    """A trace's evidence points at a node the graph does not have (a method bug or a stale graph)."""

    exit_code = 3

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


#: Characters of the Browser query left as they are in its link (legal in a URL query, kept by terminals)
_URL_SAFE = "():',.*=@"


def browser_url(settings, trace_id: str) -> str:
    """A Neo4j Browser link that opens with ``browser_cypher(trace_id)`` in its editor (run it to draw the trace).

    It is the Browser of the server at ``settings.neo4j_uri`` (that host, ``settings.neo4j_http_port``),
    told which server, user and database to connect to (``dbms``, ``db``: the connect form comes filled
    in, the password is asked; a user name with characters other than letters, digits and ``._-`` is
    left out) and what to put in the editor (``cmd=edit&arg=``). Browser turns ``+`` into a space,
    URL-decodes the whole address once and reads ``arg`` up to the next ``&`` or ``#`` without decoding
    it again: the query is encoded once (spaces as ``+``) and may hold neither (the bundled one does not).
    """
    from urllib.parse import quote, quote_plus, urlsplit

    stmt = browser_cypher(trace_id)
    if "&" in stmt or "#" in stmt:
        raise ValueError("cypher/trace_browser.cypher must hold no '&' or '#' (Browser cuts its URL argument there)")
    bolt = urlsplit(settings.neo4j_uri)
    host = bolt.hostname or "127.0.0.1"
    web_host = f"[{host}]" if ":" in host else host
    port = f":{bolt.port}" if bolt.port else ""
    user = settings.neo4j_username
    user = f"{user}@" if re.fullmatch(r"[\w.-]+", user or "") else ""   # Browser would keep any other %-encoded
    server = f"{bolt.scheme}://{user}{web_host}{port}"
    return (f"http://{web_host}:{int(settings.neo4j_http_port)}/browser/?dbms={quote(server, safe='')}"
            f"&db={quote(settings.neo4j_database, safe='')}&cmd=edit&arg={quote_plus(stmt, safe=_URL_SAFE)}")


def trace_rows(answer: Answer, trace_id: str, image_sha256: str | None = None) -> dict:
    """The parameters of ``cypher/trace_write.cypher`` for ``answer`` (refs: every (label, id) it links)."""
    cost = {role: asdict(c) for role, c in answer.cost.items()}
    question = {
        "id": trace_id, "text": answer.question, "image_sha256": image_sha256, "answer": answer.answer,
        "answer_id": answer.answer_id, "method": answer.method, "seconds": round(answer.seconds, 3),
        "cost": json.dumps(cost, sort_keys=True),
        "fallbacks": json.dumps([asdict(f) for f in answer.fallbacks], ensure_ascii=False),
        "sufficient": answer.sufficient, "stop_reason": answer.stop_reason,
        "start_entity_id": answer.start_entity_id, "start_entity_name": answer.start_entity_name,
        "hops": answer.hops,
        # where the answer's supporting sentence is ("falcon_9.pdf p. 2 · History"), shown on the node in Browser
        "citation": next((ev.citation for ev in answer.evidence if isinstance(ev, ChunkEvidence) and ev.sentence
                          and ev.citation), None),
    }
    refs: list[tuple[str, str]] = []

    def ref(label: str, node_id: str, where: str) -> None:
        if label not in TRACE_LABELS:
            raise TraceError(f"trace {trace_id}: {where} points at label {label!r} "
                             f"(allowed: {', '.join(TRACE_LABELS)})")
        if not isinstance(node_id, str) or not node_id:
            raise TraceError(f"trace {trace_id}: {where} has no node id")
        refs.append((label, node_id))

    paths, uses, subgraphs = [], [], []
    if answer.start_entity_id:
        ref("Entity", answer.start_entity_id, "start entity")
    if answer.answer_id:
        ref("Entity", answer.answer_id, "answer")
    for ev in answer.evidence:
        if isinstance(ev, PathEvidence):
            if not ev.steps:
                continue
            first = ev.steps[0]
            steps = [{"hop": 0, "label": first.head_label, "node_id": first.head_id, "score": None,
                      "relation_id": None, "relation_name": None, "intent": None}]
            ref(first.head_label, first.head_id, f"path {ev.rank} step 0")
            for s in ev.steps:
                if s.tail_label not in ("Entity", "DocEntity"):
                    raise TraceError(f"trace {trace_id}: path {ev.rank} hop {s.hop} ends at a {s.tail_label}; "
                                     "path steps link Entity or DocEntity nodes")
                ref(s.tail_label, s.tail_id, f"path {ev.rank} hop {s.hop}")
                steps.append({"hop": s.hop, "label": s.tail_label, "node_id": s.tail_id, "score": s.score,
                              "relation_id": s.relation_id, "relation_name": s.relation_name, "intent": s.note})
            paths.append({"id": f"{trace_id}-{ev.rank}", "rank": ev.rank, "score": ev.score,
                          "text": ev.verbalize(), "steps": steps})
        elif isinstance(ev, ChunkEvidence):
            ref("Chunk", ev.chunk_id, f"chunk {ev.rank}")
            uses.append({"label": "Chunk", "id": ev.chunk_id, "rank": ev.rank, "score": ev.score,
                         "kind": "support" if ev.sentence else "chunk", "sentence": ev.sentence,
                         "page": ev.page, "citation": ev.citation})
        elif isinstance(ev, SubgraphEvidence):
            nodes = []
            for n in ev.nodes:
                if n.label not in ("Entity", "DocEntity", "Chunk"):
                    raise TraceError(f"trace {trace_id}: subgraph {ev.rank} node {n.id} has label {n.label!r}; "
                                     "subgraphs link Entity, DocEntity or Chunk nodes")
                ref(n.label, n.id, f"subgraph {ev.rank} node")
                nodes.append({"label": n.label, "id": n.id, "weight": n.weight})
            edges = [asdict(e) for e in ev.edges]
            subgraphs.append({"id": f"{trace_id}-g{ev.rank}", "rank": ev.rank, "note": ev.note,
                              "edges": json.dumps(edges, ensure_ascii=False), "nodes": nodes})
        else:
            raise TraceError(f"trace {trace_id}: unknown evidence {type(ev).__name__}")
    return {"question": question, "paths": paths, "uses": uses, "subgraphs": subgraphs,
            "refs": list(dict.fromkeys(refs))}


def write_trace(graph, answer: Answer, *, trace_id: str, image_sha256: str | None = None) -> dict:
    """Store ``answer`` as a trace; returns {id, paths, steps, uses, subgraph_nodes}.

    Raises ``TraceError`` (nothing written) when a piece of evidence points at a node the
    graph does not have."""
    check_trace_id(trace_id)
    rows = trace_rows(answer, trace_id, image_sha256)
    refs = rows.pop("refs")
    if refs:
        found = {(r["label"], r["id"]) for r in graph.read("trace_resolve",
                                                           refs=[{"label": lb, "id": i} for lb, i in refs])}
        missing = [f"{lb} {i}" for lb, i in refs if (lb, i) not in found]
        if missing:
            raise TraceError(f"trace {trace_id} not stored: its evidence points at {len(missing)} node(s) "
                             f"the graph does not have: {', '.join(missing[:5])}" + (" …" if len(missing) > 5 else ""))
    out = graph.write("trace_write", **rows)
    return out[0] if out else {"id": trace_id, "paths": 0, "steps": 0, "uses": 0, "subgraph_nodes": 0}


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
    if isinstance(q.get("fallbacks"), str):
        try:
            q["fallbacks"] = json.loads(q["fallbacks"])
        except ValueError:
            pass
    return {"question": q, "paths": out["paths"], "uses": out.get("uses") or [],
            "subgraphs": out.get("subgraphs") or []}


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
             *([f"cited:    {q['citation']}"] if q.get("citation") else []),
             f"evidence sufficient: {q.get('sufficient')} · {q.get('stop_reason')}"]
    for p in trace["paths"]:
        steps = sorted(p["steps"], key=lambda s: s["hop"])
        chain = steps[0]["entity_name"] if steps else ""
        for s in steps[1:]:
            chain += f" -[{s['relation_name']}]-> {s['entity_name']}"
        score = f"{p['score']:.3f}" if isinstance(p.get("score"), (int, float)) else "-"
        lines.append(f"path {p['rank']} (score {score}): {chain}")
    for u in trace.get("uses", []):
        score = f"{u['score']:.3f}" if isinstance(u.get("score"), (int, float)) else "-"
        lines.append(f"{u.get('kind') or 'used'} {u['rank']} (score {score}): {u['label']} {u['id']}"
                     + (f" {u['name']!r}" if u.get("name") else "")
                     + (f" · {u['citation']}" if u.get("citation") else "")
                     + (f" · supporting sentence: \u201c{u['sentence']}\u201d" if u.get("sentence") else ""))
    for g in trace.get("subgraphs", []):
        edges = g.get("edges")
        n_edges = len(json.loads(edges)) if isinstance(edges, str) else 0
        lines.append(f"subgraph {g['rank']}: {g['nodes']} nodes, {n_edges} edges" + (f" ({g['note']})" if g.get("note") else ""))
    fb = q.get("fallbacks")
    if isinstance(fb, list) and fb:
        lines.append(f"fallbacks: {len(fb)} (" + "; ".join(f"{f.get('code')}: {f.get('message')}" for f in fb[:4])
                     + (" …" if len(fb) > 4 else "") + ")")
    cost = q.get("cost") or {}
    if isinstance(cost, dict):
        for role, c in sorted(cost.items()):
            lines.append(f"cost {role}: {c.get('calls')} calls, {c.get('prompt_tokens', 0)}+"
                         f"{c.get('completion_tokens', 0)} tokens, {c.get('seconds', 0):.2f} s")
    return "\n".join(lines)
