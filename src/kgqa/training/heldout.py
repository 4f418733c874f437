"""The held-out-template set of a loaded KG: generated questions phrased only with template families training
never draws (``kgqa.core.walk_questions.HELD_OUT_FAMILIES``: a chain told step by step, stacked possessives, a
statement with a gap), on walks of 2–4 facts that the chain reader's training recipe does not draw.

The chain reader ranks the gold chain first on almost every held-out *generated* question phrased by the
templates it was trained on; this set is a new phrasing *and* a new walk, the yardstick of ``kgqa train paths``'
check (the new reader against the one it replaces) and of ``bench/heldout.py``."""

from __future__ import annotations

from pathlib import Path


def heldout_set(graph, kg, n: int, seed: int, exclude: set[str], train_examples: int, train_seed: int,
                hops: tuple[int, ...] = (2, 3, 4), train_depth: int = 4,
                train_weights=None) -> tuple[list[dict], int]:
    """Up to ``n`` held-out-template questions (walks of ``hops`` facts, about evenly), none on a walk that the
    training recipe (``train_examples`` questions, ``train_seed``, walks of up to ``train_depth`` facts) draws,
    uniformly or, with ``train_weights`` (``kgqa.core.walk_questions.WalkWeights``), weighted as well, in
    the ``kgqa eval`` format (id, question, answer, answer_id, aliases, hops, topic, path); and how many training
    walks there were."""
    from kgqa.core.walk_questions import generate_walk_questions

    seen = {(g.example.topic_id, g.relations) for w in ([None, train_weights] if train_weights else [None])
            for g in generate_walk_questions(graph, kg, train_examples, train_seed, exclude, max_hops=train_depth,
                                             weights=w)}
    weights = tuple(1.0 if h in hops else 0.0 for h in range(1, 5))
    cand = generate_walk_questions(graph, kg, 20 * n, seed, exclude, hop_weights=weights, held_out=True)
    per_hop: dict[int, list] = {h: [] for h in hops}
    used: set = set()
    for g in cand:
        key = (g.example.topic_id, g.relations)
        if len(g.relations) not in per_hop or key in seen or key in used:
            continue
        used.add(key)
        per_hop[len(g.relations)].append(g)
    out: list[dict] = []
    k = 0
    while len(out) < n and any(per_hop.values()):         # round-robin over the hop counts
        h = hops[k % len(hops)]
        k += 1
        if not per_hop[h]:
            continue
        g = per_hop[h].pop(0)
        ids = (g.example.topic_id,) + g.entities
        topic = kg.entity(g.example.topic_id) or {}
        out.append({"id": f"ho-{len(out) + 1:03d}", "question": g.example.question, "answer": g.example.answer,
                    "answer_id": g.example.answer_id, "aliases": list(g.example.aliases or ()),
                    "hops": len(g.relations),
                    "topic": {"id": g.example.topic_id, "label": topic.get("name") or g.example.topic_id},
                    "path": [[ids[i], r, ids[i + 1]] for i, r in enumerate(g.relations)]})
    return out, len(seen)


def em(results, hops: int | None = None) -> float:
    """EM in percent over the results (anything with ``exact_match`` and ``hops``) of ``hops`` hops (all when
    None); NaN when there are none."""
    v = [bool(r.exact_match) for r in results if hops is None or r.hops == hops]
    return 100.0 * sum(v) / len(v) if v else float("nan")




REJECTED_SUFFIX = ".rejected"


def rejected_path(checkpoint: Path) -> Path:
    """Where ``kgqa train paths`` writes a new reader that read worse than the one it would replace: beside the
    checkpoint, ``<name>.rejected.safetensors`` (VisPath never loads it)."""
    checkpoint = Path(checkpoint)
    return checkpoint.with_name(checkpoint.stem + REJECTED_SUFFIX + checkpoint.suffix)


def reads_worse(new: dict, old: dict | None) -> bool:
    """Whether the new reader's row (``{"em": ...}``) is below the old one's on the held-out-template set: a
    lower overall EM (a tie keeps the new one; no old row, or no questions: never worse)."""
    if old is None or new.get("em") is None or old.get("em") is None:
        return False
    return new["em"] < old["em"]


__all__ = ["heldout_set", "em", "rejected_path", "reads_worse", "REJECTED_SUFFIX"]
