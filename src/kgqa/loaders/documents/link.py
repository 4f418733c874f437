"""Step 8 (beyond the paper): ``(:DocEntity)-[:SAME_AS {score}]->(:Entity)`` when a document entity's
name, aliases and description agree with a Wikidata entity above the threshold."""

from __future__ import annotations

from kgqa.core.kg import label_key
from kgqa.loaders.documents.kg import name_key
from kgqa.loaders.documents.options import DocOptions


def link_entities(graph, encoder, entities: list[dict], options: DocOptions) -> list[dict]:
    """SAME_AS candidates: the best Wikidata entity per document entity when its score ≥ threshold.

    Candidates are the entities whose name or alias equals the document entity's (exact label key,
    full-text index) and the ``link_candidates`` nearest names (vector index, approximate: among many
    entities it can miss an exact namesake, which the first lookup finds).

    score = name agreement (1.0 when the normalised name equals the entity's name or an alias,
    else the cosine of the name embeddings), blended 0.6 / 0.4 with the cosine of the two
    descriptions when both have one.
    """
    import numpy as np

    out = []
    descs_needed: list[str] = []
    cands_per: list[list[dict]] = []
    for e in entities:
        rows = graph.read("docs_link_candidates", vector=e["_name_vec"], k=options.link_candidates,
                          ef=max(50, 10 * options.link_candidates))
        key = label_key(e["name"])
        if key:
            rows = graph.read("docs_link_label_candidates", query=f'"{key}"', k=options.link_candidates) + rows
        rows = list({r["id"]: r for r in reversed(rows)}.values())     # one row per id, the exact one first
        cands_per.append(rows)
        descs_needed += [r["description"] for r in rows if r.get("description")]
    texts = list(dict.fromkeys([e["description"] for e in entities if e["description"]] + descs_needed))
    vec = dict(zip(texts, encoder.encode(texts))) if texts else {}
    for e, rows in zip(entities, cands_per):
        best = None
        for r in rows:
            s = link_score(e["name"], e["description"], r, vec, np)
            if best is None or s > best[1]:
                best = (r["id"], s)
        if best and best[1] >= options.link_threshold:
            out.append({"docentity_id": e["id"], "entity_id": best[0], "score": round(float(best[1]), 4)})
    return out


def link_score(name: str, description: str, cand: dict, vec: dict, np) -> float:
    """Agreement of a document entity (name, description) with a Wikidata candidate row."""
    names = [cand.get("name") or ""] + list(cand.get("aliases") or [])
    if float(cand["score"]) >= 1.0 or any(name_key(n) == name_key(name) for n in names if n):
        name_s = 1.0
    else:
        name_s = 2.0 * float(cand["score"]) - 1.0           # the index's (1 + cos) / 2 back to cos
    d1, d2 = description, cand.get("description")
    if d1 and d2 and d1 in vec and d2 in vec:
        return 0.6 * name_s + 0.4 * float(np.dot(vec[d1], vec[d2]))
    return name_s
