"""GraSP's LLM_select with the chain reader: the subgraph's nodes ranked by the relation chains that reach them.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting" has an LLM read the
subgraph (soft prompts) and select entities. Without such a model (the CPU stack) the node head learned from
generated questions picked the chain's intermediate entity or a one-hop node whose relation resembles the
question. *interpretation* (ours): where the chain reader of ``kgqa train paths`` fits the loaded KG
(``kgqa.models.heads.chain_reader``, the component VisPath uses too), a node's score is the reader's best score over
the relation chains of ≤ ``MAX_LEN`` facts that reach it from the topic along the facts' direction inside the
extracted subgraph; the head's probability breaks ties and ranks the nodes no forward chain reaches. GraSP's
extraction (4.1) still decides which nodes are there to be chosen.
"""

from __future__ import annotations

import math

from kgqa.models.heads.chain_reader import log_chain_ends

MAX_LEN = 4
CHAINS_PER_NODE = 12
WALK_BUDGET = 20_000


def forward_walks(sub, max_len: int = MAX_LEN) -> dict[str, dict[tuple[str, ...], tuple]]:
    """node id → {relation chain (relation ids, topic first): the facts of the first walk found with it}, over the
    walks from the topic along the facts' direction, no node twice, at most ``CHAINS_PER_NODE`` chains per node
    and ``WALK_BUDGET`` steps in all."""
    out_edges: dict[str, list] = {}
    for f in sub.facts:
        out_edges.setdefault(f.head_id, []).append(f)
    found: dict[str, dict[tuple[str, ...], tuple]] = {}
    budget = WALK_BUDGET
    level = [(sub.topic_id, (), (), frozenset([sub.topic_id]))]
    for _ in range(max_len):
        nxt = []
        for node, chain, walk, seen in level:
            for f in out_edges.get(node, ()):
                if f.tail_id in seen or budget <= 0:
                    continue
                budget -= 1
                c, w = chain + (f.relation_id,), walk + (f,)
                have = found.setdefault(f.tail_id, {})
                if c not in have and len(have) < CHAINS_PER_NODE:
                    have[c] = w
                nxt.append((f.tail_id, c, w, seen | {f.tail_id}))
        level = nxt
    return found


def forward_chains(sub, max_len: int = MAX_LEN) -> dict[str, list[tuple[str, ...]]]:
    """node id → the distinct relation chains of ``forward_walks`` that reach it."""
    return {n: list(w) for n, w in forward_walks(sub, max_len).items()}


def chain_order(reader, question: str, cands: list, chain_of: dict[str, tuple[str, ...]]) -> list:
    """One hop's candidate facts ``cands`` ((fact, neighbour id, neighbour name), in the paper's order) reordered
    for the extraction: first the facts walked head → tail from a node that a chain from the topic reached forward
    (``chain_of``: node → its relation chain), by the reader's logit of that chain extended by the fact's relation,
    best first; then the others in their order. So the entities the question's chain walks through are the ones
    the next hop expands, and a 3- or 4-hop answer is reached within the cap (ours; the paper ranks each hop's facts
    by relation and name similarity alone, and its answer lies within 2 hops)."""
    chain = {k: chain_of[c[0].head_id] + (c[0].relation_id,) for k, c in enumerate(cands)
             if c[1] == c[0].tail_id and c[0].head_id in chain_of}
    if not chain:
        return cands
    flat = sorted(set(chain.values()))
    logit = dict(zip(flat, (float(x) for x in reader.score(question, flat))))
    first = sorted(chain, key=lambda k: (-logit[chain[k]], k))
    return [cands[k] for k in first] + [c for k, c in enumerate(cands) if k not in chain]


def class_nodes(sub, best_chain: dict[str, tuple[str, ...]], type_relations: set[str]) -> dict[str, tuple[str, ...]]:
    """node → the chain before its last step, for the nodes that are a class of another node of the subgraph
    (the tail of an ``instance of`` / ``subclass of`` fact there) and whose best chain ends with such a step
    after at least one other."""
    classes = {f.tail_id for f in sub.facts if f.relation_id in type_relations}
    return {n: c[:-1] for n, c in best_chain.items() if n in classes and len(c) > 1 and c[-1] in type_relations}


def reader_ranking(reader, question: str, sub, head_scores: list[tuple[str, float]],
                   head_weight: float = 0.0, kg=None, kind_weight: float = 0.0,
                   type_relations: set[str] | None = None, ends_split: float = 0.0,
                   walks: dict | None = None) -> list[tuple[str, float]]:
    """(node id, score) best first over the nodes of ``head_scores`` (the head's ranking, visited topics already
    out), by the reader's best logit over the forward chains reaching each node; the score shown is that chain's
    cosine for a bi-encoder reader (logit / scale), σ(logit) for a cross-encoder. A node no forward chain
    reaches scores 0 and keeps the head's order after the others. ``head_weight`` w > 0 ranks a reached node by
    its best logit + w × ln(head probability) instead (the head's view of the subgraph's topology weighed in).
    ``kind_weight`` k > 0 (with ``kg``) adds k × the reader's logit of the question against what kind of thing the
    node is (its classes or description in the KG, else the last relation of its best chain: ``KG.kind_texts``),
    so a currency outranks a language for "what currency …" (VisPath's terminal selection reads the same); with
    ``kg``, that kind also breaks a tie (two ends of one chain, which the chain's score cannot tell apart), before
    the head's probability.
    ``ends_split`` s > 0: a chain's logit is the chain's, not an entity's, so a chain that reaches k of the nodes
    is a k-way guess and counts s × log k less for each of them (VisPath's ``ends_split``: s is one log-unit of
    its ranking softmax in logits, ``GraSP.split_units``).
    ``type_relations`` (the KG's ``instance of`` / ``subclass of`` ids): a class reached by such a step is an answer
    only when the question asks for a class, i.e. the reader reads the chain with that last step better than the
    chain stopped before it ("What is that currency instance of?"); otherwise it ranks after the reached nodes, as
    a node no chain reaches ("Which sovereign state …" asks for a sovereign state, not the class *sovereign
    state*).
    ``walks``, when given, is filled with node → the facts of the chain the ranking read for it (GraSP's evidence)."""
    reached = forward_walks(sub)
    ids = [n for n, _ in head_scores]
    pairs = [(n, c) for n in ids for c in reached.get(n, ())]
    flat = sorted({c for _, c in pairs})
    logit = dict(zip(flat, (float(x) for x in reader.score(question, flat)))) if flat else {}
    shared = {}
    if ends_split and pairs:
        shared = dict(zip(pairs, ends_split * log_chain_ends([c for _, c in pairs], [n for n, _ in pairs])))
    head = dict(head_scores)
    best_chain = {n: max(reached[n], key=lambda c: logit[c] - shared.get((n, c), 0.0)) for n in ids if reached.get(n)}
    stopped = class_nodes(sub, best_chain, type_relations or set())
    short = sorted(set(stopped.values()) - set(logit))
    if short:
        logit.update(zip(short, (float(x) for x in reader.score(question, short))))
    for n, c in stopped.items():
        if logit[best_chain[n]] <= logit[c]:         # the question does not walk the class step: not an answer
            del best_chain[n]
    kind: dict[str, float] = {}
    if kg is not None and best_chain:
        text = kg.kind_texts({n: c[-1] for n, c in best_chain.items()})
        kinds = reader.score_texts(question, [text[n] for n in best_chain], kept=True)     # the graph's texts: kept
        kind = dict(zip(best_chain, (float(x) for x in kinds)))
    rank = {n: (logit[c] - shared.get((n, c), 0.0) + head_weight * math.log(max(head[n], 1e-9))
                + kind_weight * kind.get(n, 0.0)) for n, c in best_chain.items()}
    pos = {n: k for k, n in enumerate(ids)}
    order = sorted(ids, key=lambda n: (n not in rank, -rank.get(n, 0.0), -kind.get(n, 0.0), -head[n], pos[n]))
    if walks is not None:
        walks.update({n: list(reached[n][c]) for n, c in best_chain.items()})
    bi = getattr(reader, "arch", "cross") == "bi"

    def shown(n: str) -> float:
        if n not in best_chain:
            return 0.0
        v = logit[best_chain[n]]
        return v / getattr(reader, "scale", 20.0) if bi else 1.0 / (1.0 + math.exp(-v))

    return [(n, shown(n)) for n in order]


__all__ = ["forward_walks", "forward_chains", "chain_order", "class_nodes", "reader_ranking", "MAX_LEN"]
