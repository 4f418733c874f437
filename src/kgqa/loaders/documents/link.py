"""Step 8 (beyond the paper): ``(:DocEntity)-[:SAME_AS {score}]->(:Entity)`` when a document entity's
name, aliases and description agree with a Wikidata entity above the threshold."""

from __future__ import annotations

from kgqa.core.kg import label_key
from kgqa.loaders.documents.kg import name_key
from kgqa.loaders.documents.options import DocOptions

#: the description's weight in the score (the name's: 1 - this)
DESC_WEIGHT = 0.4


def link_entities(graph, encoder, entities: list[dict], options: DocOptions,
                  vectors: dict | None = None) -> list[dict]:
    """SAME_AS candidates: the best Wikidata entity per document entity when its score ≥ threshold.

    Candidates are the entities whose name or alias equals the document entity's (exact label key,
    full-text index) and the ``link_candidates`` nearest names (vector index, approximate: among many
    entities it can miss an exact namesake, which the first lookup finds), for all ``entities`` in one
    query.

    score = name agreement (1.0 when the normalised name equals the entity's name or an alias,
    else the cosine of the name embeddings), blended 0.6 / 0.4 with the cosine of the two
    descriptions when both have one. A candidate whose name agreement leaves it below the threshold
    even with identical descriptions can be neither linked nor beat one that is, so its description
    is not embedded. ``vectors``: description → embedding, kept by the caller across documents (a
    load's documents share many candidates); the missing ones are embedded in one batch and added.
    """
    import numpy as np

    vectors = {} if vectors is None else vectors
    rows = graph.read("docs_link_candidates", k=options.link_candidates, ef=max(50, 10 * options.link_candidates),
                      rows=[{"i": i, "vector": e["_name_vec"],
                             "query": f'"{key}"' if (key := label_key(e["name"])) else None}
                            for i, e in enumerate(entities)])
    by_i = {r["i"]: r for r in rows}
    kept: list[list[tuple[dict, float]]] = []
    needed: list[str] = []
    for i, e in enumerate(entities):
        r = by_i.get(i, {})
        cands = list({c["id"]: c for c in reversed((r.get("label") or []) + (r.get("vector") or []))}.values())
        # one row per id, the exact one first; (candidate, its name agreement) for those that can reach it
        mine = [(c, s) for c in cands
                if (1 - DESC_WEIGHT) * (s := name_agreement(e["name"], c)) + DESC_WEIGHT + 1e-6
                >= options.link_threshold]
        kept.append(mine)
        if e["description"] and any(c.get("description") for c, _ in mine):
            needed += [e["description"]] + [c["description"] for c, _ in mine if c.get("description")]
    todo = [t for t in dict.fromkeys(needed) if t not in vectors]
    if todo:
        vectors.update(zip(todo, encoder.encode(todo)))
    out = []
    for e, mine in zip(entities, kept):
        best = None
        for c, name_s in mine:
            s = blend(name_s, e["description"], c.get("description"), vectors, np)
            if best is None or s > best[1]:
                best = (c["id"], s)
        if best and best[1] >= options.link_threshold:
            out.append({"docentity_id": e["id"], "entity_id": best[0], "score": round(float(best[1]), 4)})
    return out


def name_agreement(name: str, cand: dict) -> float:
    """1.0 when ``name`` is the candidate's name or an alias (normalised), else the cosine of the names."""
    names = [cand.get("name") or ""] + list(cand.get("aliases") or [])
    if float(cand["score"]) >= 1.0 or any(name_key(n) == name_key(name) for n in names if n):
        return 1.0
    return 2.0 * float(cand["score"]) - 1.0           # the index's (1 + cos) / 2 back to cos


def blend(name_s: float, d1: str, d2: str | None, vec: dict, np) -> float:
    """The name agreement blended with the descriptions' cosine when both descriptions are embedded."""
    if d1 and d2 and d1 in vec and d2 in vec:
        return (1 - DESC_WEIGHT) * name_s + DESC_WEIGHT * float(np.dot(vec[d1], vec[d2]))
    return name_s
