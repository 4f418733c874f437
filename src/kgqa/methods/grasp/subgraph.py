"""The extracted subgraph G_t of GraSP's Section 4.1 and what Section 4.2 encodes of it.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting":
``Subgraph`` holds G_t's facts and nodes (topic first) with their scores; ``triple_texts`` are
the sentences of the text soft prompt (ablation), ``graph_tensors`` the GAT's input, ``path_features``
how well the relation chain that reached each node in extraction matches the question (the node head's input).
"""

from __future__ import annotations

import math
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
    hops: int = 0                               # hops l it was extracted with

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


#: the chain positions ``path_features`` describes one by one (GraSP's hops are 1–3)
PATH_POSITIONS = 3
#: columns of ``path_features``
PATH_FEATURES = 2 * PATH_POSITIONS + 10
#: most walks ``chain_walks`` follows in one subgraph (bounded work on a hub)
WALK_BUDGET = 20000


def extraction_parents(sub: Subgraph) -> dict[str, tuple[Fact, int, str]]:
    """node → (fact, direction, parent node) of the step by which extraction first reached it.

    Extraction is breadth-first and appends each hop's facts best score first, so a node reached at hop h
    has as parent the first fact of hop h that links it to a node reached at hop h − 1; direction is +1
    when that fact is walked head → tail, −1 against it. The topic has none.
    """
    hop = sub.node_hop
    parents: dict[str, tuple[Fact, int, str]] = {}
    for f in sub.facts:
        for node, other, d in ((f.tail_id, f.head_id, 1), (f.head_id, f.tail_id, -1)):
            if node not in parents and node != sub.topic_id and hop.get(node) == f.hop \
                    and hop.get(other) == f.hop - 1:
                parents[node] = (f, d, other)
    return parents


def extraction_chain(sub: Subgraph, node_id: str, parents: dict | None = None) -> list[tuple[Fact, int]]:
    """The chain of (fact, direction) by which extraction reached ``node_id`` from the topic, topic side
    first (``extraction_parents``); [] for the topic or a node no chain reaches."""
    parents = extraction_parents(sub) if parents is None else parents
    chain: list[tuple[Fact, int]] = []
    cur = node_id
    while cur != sub.topic_id:
        step = parents.get(cur)
        if step is None or len(chain) > len(sub.names):
            return []
        chain.append(step[:2])
        cur = step[2]
    return chain[::-1]


def chain_terms(relation_emb: np.ndarray, q: np.ndarray) -> tuple[list[float], list[list[float]]]:
    """(cos(q, r) per relation, the relations' Gram matrix) as Python floats: a chain's summed embedding v has
    v·q = the sum of its cosines and |v|² = the sum of its Gram block, so chains need no 384-d vector per step
    (numpy's per-call cost on one made the walk ~4× slower)."""
    if not len(relation_emb):
        return [], []
    emb = np.asarray(relation_emb, dtype=np.float64)
    return (emb @ np.asarray(q, dtype=np.float64)).tolist(), (emb @ emb.T).tolist()


def chain_walks(sub: Subgraph, rel_index: dict[str, int], terms: tuple[list[float], list[list[float]]],
                max_len: int = PATH_POSITIONS):
    """Every walk of at most ``max_len`` facts from the topic through the subgraph (either direction, no node twice,
    never back against the relation just walked — u -r-> v <-r- w makes siblings, not a chain; at most
    ``WALK_BUDGET`` steps), depth first: yields (the node reached, its steps ((relation id, +1 along the fact / −1
    against it) each), the facts walked, v·q, |v|²) for v the sum of the chain's relation vectors (``terms``:
    ``chain_terms``; a step adds cos(q, r) to v·q and 2·Σ_i r_i·r + r·r to |v|²)."""
    cos, gram = terms
    at: dict[str, list[tuple[str, Fact, int, int]]] = {}
    for f in sub.facts:
        r = rel_index[f.relation_id]
        at.setdefault(f.head_id, []).append((f.tail_id, f, r, 1))
        at.setdefault(f.tail_id, []).append((f.head_id, f, r, -1))
    budget = [WALK_BUDGET]

    def walk(node: str, seen: set[str], total: float, chain: tuple[int, ...], steps: tuple, facts: tuple,
             sq: float):
        for nxt, f, r, d in at.get(node, ()):
            if nxt in seen or budget[0] <= 0 or (steps and steps[-1] == (f.relation_id, -d)):
                continue
            budget[0] -= 1
            g = gram[r]
            t, n2 = total + cos[r], sq + 2.0 * sum(g[i] for i in chain) + g[r]
            s2, f2 = steps + ((f.relation_id, d),), facts + (f,)
            yield nxt, s2, f2, t, n2
            if len(s2) < max_len:
                seen.add(nxt)
                yield from walk(nxt, seen, t, chain + (r,), s2, f2, n2)
                seen.discard(nxt)

    yield from walk(sub.topic_id, {sub.topic_id}, 0.0, (), (), (), 0.0)


def best_chains(sub: Subgraph, q: np.ndarray, rel_index: dict[str, int], relation_emb: np.ndarray,
                max_len: int = PATH_POSITIONS,
                terms: tuple[list[float], list[list[float]]] | None = None) -> dict[str, tuple[float, float, int]]:
    """node → (best sum of cos(q, r) over a chain, best cos(q, chain embedding), that chain's length), over
    ``chain_walks``: the chain that reached a node first in extraction need not be the one the question
    describes (the Eiffel Tower is located in Paris, and its architect was born there).
    ``terms``: ``chain_terms(relation_emb, q)`` when the caller has them already."""
    best: dict[str, list] = {}
    for nxt, steps, _, t, n2 in chain_walks(sub, rel_index, terms or chain_terms(relation_emb, q), max_len):
        ce = t / math.sqrt(n2) if n2 > 0 else 0.0
        b = best.setdefault(nxt, [t, ce, len(steps)])
        if t > b[0]:
            b[0] = t
        if ce > b[1]:
            b[1], b[2] = ce, len(steps)
    return {n: (b[0], b[1], b[2]) for n, b in best.items()}


def path_features(sub: Subgraph, rel_index: dict[str, int], relation_emb: np.ndarray, q_vec: np.ndarray) -> np.ndarray:
    """(N, PATH_FEATURES) per node, over the relation chain that reached it in extraction (``extraction_chain``).

    *interpretation* (not in the paper): the GAT's node input says how well a node's name matches the
    question, not how well the relations leading to it do, so the answer and the chain's intermediate entity
    look alike. Columns, with c_i = cos(q, relation i of the chain) (embeddings L2-normalised):
    c_1..c_3 (0 past the chain's end), the direction of each step (+1 head → tail, −1 against, 0 past the end),
    c_last, mean c, sum c, max c, min c, cos(q, normalised sum of the chain's relation embeddings), chain
    length / 3; then over every chain of at most 3 facts that reaches the node (``best_chains``): the best
    sum c, the best chain-embedding cosine and that chain's length / 3. The topic's row is 0. (A flag for nodes that are a step of another node's chain was tried
    and dropped: on held-out more-dev questions it cost 16 points of top-1.)
    """
    ids = sub.node_ids
    out = np.zeros((len(ids), PATH_FEATURES), dtype=np.float32)
    cos, gram = chain_terms(relation_emb, q_vec)
    parents = extraction_parents(sub)
    anywalk = best_chains(sub, q_vec, rel_index, relation_emb, terms=(cos, gram))
    b = 2 * PATH_POSITIONS
    for k, nid in enumerate(ids):
        if nid == sub.topic_id:
            continue
        if nid in anywalk:
            t, ce, n = anywalk[nid]
            out[k, b + 7:b + 10] = (t, ce, n / PATH_POSITIONS)
        chain = extraction_chain(sub, nid, parents)
        if not chain:
            continue
        ri = [rel_index[f.relation_id] for f, _ in chain]
        c = [cos[i] for i in ri]
        for i, (f, d) in enumerate(chain[:PATH_POSITIONS]):
            out[k, i] = c[i]
            out[k, PATH_POSITIONS + i] = d
        total = sum(c)
        n2 = sum(gram[i][j] for i in ri for j in ri)
        out[k, b:b + 7] = (c[-1], total / len(c), total, max(c), min(c), total / math.sqrt(n2) if n2 > 0 else 0.0,
                           len(chain) / PATH_POSITIONS)
    return out


def graph_tensors(method: BaseMethod, sub: Subgraph, q_vec: np.ndarray, *, with_paths: bool = True):
    """(x, edge_index, edge_type, relation_emb, question, topic_mask, node_hop, node_path) of G_t from the stored
    embeddings (node_hop: the hop at which extraction reached each node, the topic 0; node_path:
    ``path_features``, (N, PATH_FEATURES), or None when ``with_paths`` is false: an encoder without path
    features never reads them, and they cost more than the encoder itself)."""
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
    remb_a = np.stack(remb).astype(np.float32) if remb else np.zeros((0, x.shape[1]), dtype=np.float32)
    paths = torch.from_numpy(path_features(sub, ridx, remb_a, q_vec)) if with_paths else None
    return (torch.from_numpy(x), torch.from_numpy(ei.reshape(2, -1)), torch.from_numpy(et),
            torch.from_numpy(remb_a), torch.from_numpy(np.asarray(q_vec, dtype=np.float32)),
            torch.from_numpy(topic), torch.from_numpy(hop), paths)
