"""The extracted subgraph G_t of GraSP's Section 4.1 and what Section 4.2 encodes of it.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting":
``Subgraph`` holds G_t's facts and nodes (topic first) with their scores; ``triple_texts`` are
the sentences of the text soft prompt (ablation), ``graph_tensors`` the GAT's input.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np

from kgqa.core.method import BaseMethod
from kgqa.methods.grasp import prompts as P


@dataclass(frozen=True)
class Fact:
    head_id: str
    relation_id: str
    tail_id: str
    hop: int
    score: float          # (relation score + neighbour score) / 2

    @property
    def key(self) -> str:
        return f"{self.head_id}|{self.relation_id}|{self.tail_id}"


@dataclass
class Subgraph:
    """The extracted l-hop subgraph G_t around one topic entity (nodes in insertion order, topic first)."""

    topic_id: str
    names: dict[str, str]                       # node id → name
    facts: list[Fact] = field(default_factory=list)
    node_score: dict[str, float] = field(default_factory=dict)   # best score of a fact that reached it
    node_hop: dict[str, int] = field(default_factory=dict)

    @property
    def node_ids(self) -> list[str]:
        return list(self.names)

    def triples_by_hop(self, relation_names: dict[str, str], hops: int) -> list[list[str]]:
        out: list[list[str]] = [[] for _ in range(hops)]
        for f in self.facts:
            out[f.hop - 1].append(P.triple_line(self.names[f.head_id], relation_names.get(f.relation_id, f.relation_id),
                                                self.names[f.tail_id]))
        return out

    def path_to(self, node_id: str) -> list[Fact]:
        """The shortest chain of facts (either direction) from the topic to ``node_id``, best scores first."""
        if node_id == self.topic_id or node_id not in self.names:
            return []
        adj: dict[str, list[tuple[str, Fact]]] = {}
        for f in sorted(self.facts, key=lambda f: -f.score):
            adj.setdefault(f.head_id, []).append((f.tail_id, f))
            adj.setdefault(f.tail_id, []).append((f.head_id, f))
        prev: dict[str, tuple[str, Fact] | None] = {self.topic_id: None}
        todo = deque([self.topic_id])
        while todo:
            u = todo.popleft()
            if u == node_id:
                break
            for v, f in adj.get(u, []):
                if v not in prev:
                    prev[v] = (u, f)
                    todo.append(v)
        if node_id not in prev:
            return []
        chain: list[Fact] = []
        cur = node_id
        while prev[cur] is not None:
            u, f = prev[cur]
            chain.append(f)
            cur = u
        return chain[::-1]


def triple_texts(sub: Subgraph, relation_names: dict[str, str]) -> list[str]:
    """"head relation tail" per fact (the text soft prompt's sentences)."""
    return [f"{sub.names[f.head_id]} {relation_names.get(f.relation_id, f.relation_id)} {sub.names[f.tail_id]}"
            for f in sub.facts]


def graph_tensors(method: BaseMethod, sub: Subgraph, q_vec: np.ndarray):
    """(x, edge_index, edge_type, relation_emb, question, topic_mask, node_hop) of G_t from the stored embeddings
    (node_hop: the hop at which extraction reached each node, the topic 0)."""
    import torch

    ids = sub.node_ids
    stored = {r["id"]: r["embedding"] for r in method.graph.read("grasp_entities", ids=ids)}
    missing = [sub.names[i] for i in ids if not stored.get(i)]
    fresh = dict(zip(missing, method.kg.embed(missing))) if missing else {}
    x = np.stack([np.asarray(stored[i], dtype=np.float32) if stored.get(i) else fresh[sub.names[i]] for i in ids])
    rel = method.kg.relations()
    idx = {n: k for k, n in enumerate(ids)}
    ei = np.array([[idx[f.head_id] for f in sub.facts], [idx[f.tail_id] for f in sub.facts]], dtype=np.int64)
    rel_ids = list(dict.fromkeys(f.relation_id for f in sub.facts))        # each distinct relation once
    ridx = {r: k for k, r in enumerate(rel_ids)}
    et = np.array([ridx[f.relation_id] for f in sub.facts], dtype=np.int64)
    remb = []
    for r in rel_ids:
        name, vec = rel.get(r, (r, None))
        remb.append(vec if vec is not None else method.kg.embed([name])[0])
    topic = np.zeros(len(ids), dtype=bool)
    topic[0] = True
    hop = np.array([sub.node_hop.get(i, 0 if k == 0 else 1) for k, i in enumerate(ids)], dtype=np.int64)
    return (torch.from_numpy(x), torch.from_numpy(ei.reshape(2, -1)), torch.from_numpy(et),
            torch.from_numpy(np.stack(remb).astype(np.float32)) if remb else torch.zeros((0, x.shape[1])),
            torch.from_numpy(np.asarray(q_vec, dtype=np.float32)), torch.from_numpy(topic), torch.from_numpy(hop))
