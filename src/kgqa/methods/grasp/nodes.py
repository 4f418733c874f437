"""GraSP's node-scoring head: LLM_select without a soft-prompt LLM (the ``nodes`` head).

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting",
Section 4.3 has a small LLM read the GAT's soft prompt and name entities (LLM_select). On a CPU
without a served model that can read prompt embeddings, a 135M model reading soft tokens names
almost nothing right; *interpretation* (ours, not the paper's): the same question-conditioned GAT
(``kgqa.gnn.encoder.GraphNodeScorer``) gives every node of G_t a logit, trained with cross-entropy
over the subgraph's nodes on questions generated from the loaded KG. Its ranking is LLM_select's
selection; its top node is the answer (one entity, always).

A checkpoint records the relation catalogue it was trained on (id → name, and its fingerprint); a KG
that holds fewer than half of those relations under the same names is refused in one line (their
embeddings are what the head learned to match). A larger KG that contains them (Wikidata5M around the
demo, a user's document KGs beside it) is accepted.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np

from kgqa.core.errors import InvalidInput

SHIPPED = "grasp-nodes.safetensors"


def kg_fingerprint(relations: dict[str, tuple[str, object]]) -> str:
    """16 hex digits of sha256 over the sorted "id<TAB>name" lines of the relation catalogue."""
    h = hashlib.sha256()
    for rid in sorted(relations):
        h.update(f"{rid}\t{relations[rid][0]}\n".encode("utf-8"))
    return h.hexdigest()[:16]


class HeadForAnotherKG(InvalidInput):
    """A node head trained on another KG (``load_head``): GraSP ranks without it (``chain_text_ranking``)."""


#: a KG must hold at least this share of the trained relations (same id, same name) for the head to be used
MIN_SHARED_RELATIONS = 0.5


def shared_relations(trained: dict[str, str], relations: dict[str, tuple[str, object]]) -> int:
    """How many of the trained relations (id → name) the loaded KG holds under the same name."""
    return sum(1 for rid, name in trained.items() if rid in relations and relations[rid][0] == name)


def shipped_checkpoint() -> Path | None:
    """The demo checkpoint of a source checkout (``data/demo/grasp/grasp-nodes.safetensors``), if present."""
    here = Path(__file__).resolve()
    for up in here.parents:
        cand = up / "data" / "demo" / "grasp" / SHIPPED
        if cand.is_file():
            return cand
        if (up / "pyproject.toml").is_file():
            break
    return None


#: the extraction options a nodes checkpoint records and inference takes from it unless set (-o KEY=VALUE)
EXTRACTION = ("k1", "k2", "hops", "cap", "scan_cap")


def trained_extraction(opt, path: Path):
    """``opt`` with the extraction the head at ``path`` was trained with (k1, k2, hops, cap, scan_cap), except
    the options set explicitly: a head scores the subgraphs it learned on (a 3-hop head, 3-hop subgraphs)."""
    from kgqa.gnn.checkpoint import read_meta

    ext = read_meta(path).get("extraction") or {}
    update = {k: ext[k] for k in EXTRACTION if k in ext and k not in opt.model_fields_set}
    return opt.model_copy(update=update) if update else opt


def load_head(path: Path, relations: dict):
    """The trained ``GraphNodeScorer`` at ``path``; refused in one line when made for another KG."""
    from kgqa.gnn import checkpoint as ckpt

    enc, info = ckpt.load(path, variant="nodes")
    want, have = info.get("kg_fingerprint"), kg_fingerprint(relations)
    trained = info.get("kg_catalogue")
    if isinstance(trained, dict) and trained:
        shared = shared_relations(trained, relations)
        if shared < MIN_SHARED_RELATIONS * len(trained):
            raise HeadForAnotherKG(
                f"grasp: {path} was trained on another KG (relation catalogue {want}: the loaded KG holds "
                f"{shared} of its {len(trained)} relations under the same names, {len(relations)} relations in "
                f"all); train one for this KG with `kgqa train grasp --head nodes`")
    elif want and want != have:
        raise HeadForAnotherKG(
            f"grasp: {path} was trained on another KG (relation catalogue {want}, {info.get('kg_relations', '?')} "
            f"relations; the loaded KG's is {have}, {len(relations)} relations); train one for this KG with "
            f"`kgqa train grasp --head nodes`")
    enc.eval()
    return enc, info


def node_probabilities(head, inputs, topic_index: int = 0) -> np.ndarray:
    """Softmax over the subgraph's nodes of the head's logits, the topic masked out (N,)."""
    import torch

    with torch.inference_mode():
        logits = head(*inputs).clone()
        logits[topic_index] = float("-inf")
        return torch.softmax(logits, dim=0).numpy()


def node_loss(head, inputs, target: int):
    """Cross-entropy of the gold node among the subgraph's nodes (topic masked out)."""
    import torch

    logits = head(*inputs)
    mask = inputs[5]
    logits = logits.masked_fill(mask, float("-inf"))
    return torch.nn.functional.cross_entropy(logits.reshape(1, -1), torch.tensor([target]))


def ranked(node_ids: list[str], probs: np.ndarray, exclude: set[str]) -> list[tuple[str, float]]:
    """(node id, probability) best first, ``exclude`` left out; ties broken by node order."""
    order = sorted(range(len(node_ids)), key=lambda i: (-float(probs[i]), i))
    return [(node_ids[i], float(probs[i])) for i in order if node_ids[i] not in exclude]


def text_chains(sub, q_vec: np.ndarray, kg, max_len: int = 3) -> dict[str, dict[tuple, tuple]]:
    """node → {chain ((relation id, +1 along the fact / −1 against it) per step): (cos of the question with the
    normalised sum of the chain's relation-name vectors, the sum of the steps' cosines, the facts of the first walk
    with it)}, over the walks of ≤ ``max_len`` facts from the topic (either direction, no node twice, never back
    against the relation just walked, at most ``subgraph.WALK_BUDGET`` steps: ``subgraph.chain_walks``)."""
    from kgqa.methods.grasp.subgraph import chain_terms, chain_walks

    rel_ids = list(dict.fromkeys(f.relation_id for f in sub.facts))
    if not rel_ids:
        return {}
    relations = kg.relations()
    emb = []
    for r in rel_ids:
        name, vec = relations.get(r, (r, None))
        emb.append(np.asarray(vec if vec is not None else kg.embed([name])[0], dtype=np.float32))
    found: dict[str, dict[tuple, tuple]] = {}
    for nxt, chain, facts, t, n2 in chain_walks(sub, {r: k for k, r in enumerate(rel_ids)},
                                                chain_terms(np.stack(emb), q_vec), max_len):
        found.setdefault(nxt, {}).setdefault(chain, (t / math.sqrt(n2) if n2 > 0 else 0.0, t, facts))
    return found


#: the question's sketch as GraSP reads it: VisPath's default phrase-to-relation cosine, at most one match more
#: than the longest chain read (``text_chains``: 3 facts)
SKETCH_MIN_COS, SKETCH_MATCHES = 0.45, 4


def question_depth(method, run) -> tuple[int, int] | None:
    """The depth (lo, hi) the question walks, read once per question (``kgqa.core.sketch.relation_sketch``: one
    fact per relation its phrases name, the answer's type noun an optional last one); None when no phrase
    names a relation. The relations' alias vectors are read once per method (the same for every question)."""
    from kgqa.core.sketch import relation_alias_forms, relation_sketch

    if run.depth is None:
        if method._aliases is None:
            method._aliases = relation_alias_forms(method.kg, [r for r, (_, v) in method.kg.relations().items()
                                                              if v is not None])
        sketch = relation_sketch(method.kg, run.question, run.has_image, min_cos=SKETCH_MIN_COS,
                                 max_matches=SKETCH_MATCHES, alias_forms=method._aliases)
        run.depth = sketch.depth or ()
    return run.depth or None


def depth_gap(n: int, depth: tuple[int, int] | None) -> int:
    """How many facts a chain of ``n`` walks outside the question's depth range (lo, hi); 0 without one."""
    return max(depth[0] - n, n - depth[1], 0) if depth else 0


def chain_text_ranking(sub, q_vec: np.ndarray, kg, exclude: set[str], ends_split: bool = False,
                       walks: dict | None = None, depth: tuple[int, int] | None = None,
                       depth_weight: float = 0.0) -> list[tuple[str, float]]:
    """(node id, score) best first, ``exclude`` left out, without a trained head: a node scores the best cosine
    of the question with the normalised sum of the relation-name vectors of a chain of ≤ 3 facts reaching it
    (``text_chains``, the node head's own path feature), ties broken by the best sum of the chain's
    cosines, then by node order. Relation names' vectors only, so it reads any KG (ours: what GraSP ranks
    with when its node head was trained on another KG and no chain reader fits).
    ``ends_split``: a chain that reaches k of the nodes counts log k / ``TERMINAL_SCALE`` less for each (VisPath's
    ``ends_split`` with the fixed sum, a cosine read as logit / ``TERMINAL_SCALE``), and what kind of thing a node
    is (``KG.kind_texts``: its classes or description, else the relation reaching it) breaks a tie, by its cosine
    with the question. ``depth``: the facts the question walks (lo, hi) (``question_depth``): a chain loses
    ``depth_weight`` per fact it walks outside that range, so that a prefix one hop short of the whole chain
    the question names does not read as well as it. ``walks``, when given, is filled with node → the facts of
    the chain read for it."""
    from kgqa.models.heads.chain_reader import TERMINAL_SCALE, log_chain_ends

    reached = text_chains(sub, q_vec, kg)
    ids = [n for n in sub.node_ids if n not in exclude]
    pairs = [(n, c) for n in ids for c in reached.get(n, ())]
    shared = {p: depth_weight * depth_gap(len(p[1]), depth) for p in pairs} if depth_weight and depth else {}
    if ends_split and pairs:
        logk = log_chain_ends([c for _, c in pairs], [n for n, _ in pairs]) / TERMINAL_SCALE
        shared = {p: shared.get(p, 0.0) + k for p, k in zip(pairs, logk)}
    best = {n: max(reached[n], key=lambda c: (reached[n][c][0] - shared.get((n, c), 0.0), reached[n][c][1]))
            for n in ids if reached.get(n)}
    score = {n: reached[n][c][0] - shared.get((n, c), 0.0) for n, c in best.items()}
    kind: dict[str, float] = {}
    if ends_split and best:
        text = kg.kind_texts({n: c[-1][0] for n, c in best.items()})
        vecs = kg.embed([text[n] for n in best])
        kind = dict(zip(best, (float(x) for x in vecs @ np.asarray(q_vec, dtype=np.float32))))
    pos = {n: k for k, n in enumerate(ids)}
    order = sorted(ids, key=lambda n: (n not in best, -score.get(n, 0.0), -kind.get(n, 0.0),
                                       -(reached[n][best[n]][1] if n in best else 0.0), pos[n]))
    if walks is not None:
        walks.update({n: list(reached[n][c][2]) for n, c in best.items()})
    return [(n, max(reached[n][best[n]][0], 0.0) if n in best else 0.0) for n in order]


def node_round(method, decision, sub, rnd, run, visited: set[str], forced: bool) -> str | None:
    """After a nodes-head round: set the answer (one node of G_t) and return None, or the next topic.

    LLM_answer (when it replies) decides as in Section 4.3, its answer grounded to a node of G_t
    (else the top node). Without a usable reply (graph-only): the top node is the answer when its
    probability reaches ``answer_p`` or the round is the last; the best answer seen over the rounds
    wins. *interpretation*: below ``answer_p`` the top node is taken as a bridge, not an answer, and
    the loop continues from it (else from the best unvisited node). With answer typing (``rnd.typed``,
    not None when the question names the answer's type and the subgraph has type evidence) the answer is
    the top node of that type; nodes typed as something else leave the ranking (an entity without type
    evidence stays); when every node is typed as something else, the loop continues from the top node (the
    last round answers with the best node seen).
    """
    top, p = rnd.scores[0]
    best = run.best
    if best is None or p > best[1]:
        run.best = best = (top, p, sub.names[top])
    t = len(run.rounds)

    def answer(nid: str, name: str, why: str) -> None:
        run.answer, run.answer_id = name, nid
        rnd.decision = "ANSWER"
        run.stop_reason = why

    if decision is not None and (decision.decision == "ANSWER" or forced):
        cands = {n: sub.names[n] for n, _ in rnd.scores}
        nid = method.kg.ground_answer(decision.answer, cands) if decision.answer else None
        if nid is None:
            run.fell_back(f"round {t}: LLM_answer's answer is no node of the subgraph; the top-scored node",
                          "unresolved")
            nid = top
        run.evidence_text = decision.evidence
        answer(nid, sub.names[nid], f"answered in round {t}")
        return None
    if decision is not None:                            # ENTITY
        rnd.entity = decision.entity
        rnd.decision = "ENTITY"
        nxt = method.resolve_next_topic(decision.entity, sub, rnd, visited, run)
        if nxt is None:
            answer(best[0], best[2], f"round {t}: no next topic; the best-scored node")
        return nxt
    if rnd.typed:                                       # the top node of the question's answer type
        nid = rnd.typed[0]
        answer(nid, sub.names[nid], f"answered in round {t}: the top node of the question's answer type "
               f"(p {dict(rnd.scores)[nid]:.2f})")
        return None
    if rnd.typed is not None and not forced:            # every node typed as something else: continue
        rnd.decision = "move on (no node of the answer type)"
        return top
    if rnd.ranked_by == "chain reader":                 # the chain reader's best-scored node
        answer(top, sub.names[top], f"answered in round {t}: the node the chain reader scores best (σ {p:.2f})")
        return None
    if rnd.ranked_by == "relation chains":              # no head for this KG: the best-read relation chain's end
        answer(top, sub.names[top], f"answered in round {t}: the node whose relation chain reads best "
               f"(cos {p:.2f}; the node head was trained on another KG)")
        return None
    if p >= method.opt.answer_p or forced:
        nid, name = (top, sub.names[top]) if p >= method.opt.answer_p else (best[0], best[2])
        answer(nid, name, f"answered in round {t} by the node head (p {max(p, best[1]):.2f})"
               + (" (forced)" if forced and p < method.opt.answer_p else ""))
        return None
    rnd.decision = f"move on (p {p:.2f} < {method.opt.answer_p})"
    return top


__all__ = ["HeadForAnotherKG", "chain_text_ranking", "question_depth", "depth_gap", "text_chains", "EXTRACTION", "trained_extraction", "kg_fingerprint", "shipped_checkpoint", "load_head", "node_probabilities", "node_loss", "ranked", "node_round", "SHIPPED"]
