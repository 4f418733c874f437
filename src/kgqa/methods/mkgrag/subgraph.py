"""Stage 2 of mKG-RAG's retrieval: the query-specific graph G_r inside the recalled documents' KGs.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA", Section 3.2.2:

    G_m      the KGs of stage 1's Kd documents, merged online (only those)
    G_r^0    the top Kg entities and relations of G_m by cos(E(q), f), f the embedding of the entity (name +
             description) or relation (head, tail, summary), or of the image region matched to it when that is
             closer (the multimodal (n, v) / (e, r) of Eq. 1), computed in Cypher over G_m (Neo4j 5.26's vector
             index cannot pre-filter); ``no_visual_graph``: regions neither scored nor shown
    Eq. 3    G_r^l = breadth-first expansion of G_r^0 for l hops inside G_m, keeping only the neighbours whose
             cosine to the query exceeds ``threshold`` (``no_expansion``: G_r^0 only)

Interpretations where the paper is silent: Kg counts entities and relations together (the paper's "top Kg
best-matched candidates"); the expansion frontier of hop 1 is G_r^0's entities and the endpoints of its
relations.
"""

from __future__ import annotations

from kgqa.core.kg import cos_from_neo4j
from kgqa.methods.mkgrag.options import MKGRAGOptions
from kgqa.methods.mkgrag.records import Element


def retrieve_subgraph(graph, qvec: list[float], doc_ids: list[str], opt: MKGRAGOptions) -> list[Element]:
    """G_r: G_r^0 of the documents ``doc_ids``, expanded for ``l`` hops (Eq. 3) unless ``no_expansion``."""
    visual = not opt.no_visual_graph
    ents = graph.read("mkgrag_graph_entities", doc_ids=doc_ids, vector=qvec, k=opt.Kg, visual=visual)
    rels = graph.read("mkgrag_graph_relations", doc_ids=doc_ids, vector=qvec, k=opt.Kg, visual=visual)
    cands = [entity_element(e, 0, visual) for e in ents] + [relation_element(x, 0, visual) for x in rels]
    cands.sort(key=lambda el: (-el.sim, el.id))
    elements = cands[:opt.Kg]          # Kg counts entities and relations together (interpretation)
    if not opt.no_expansion and opt.l > 0:
        elements = expand(graph, elements, doc_ids, qvec, opt)
    return elements


def expand(graph, elements: list[Element], doc_ids: list[str], qvec, opt: MKGRAGOptions) -> list[Element]:
    """Eq. 3: l-hop BFS inside G_m from G_r^0, keeping the neighbours (and the relations reaching them) whose
    cosine to the query exceeds ``threshold``; each added element records the hop that added it."""
    visual = not opt.no_visual_graph
    have = {el.id for el in elements}
    frontier = list(dict.fromkeys(
        [el.id for el in elements if el.kind == "entity"]
        + [x for el in elements if el.kind == "relation" for x in (el.head_id, el.tail_id)]))
    seen_entities = set(frontier)
    min_sim = (1.0 + opt.threshold) / 2.0        # the threshold as Neo4j's (1 + cos) / 2
    for hop in range(1, opt.l + 1):
        if not frontier:
            break
        rows = graph.read("mkgrag_expand", ids=frontier, doc_ids=doc_ids, vector=qvec, min_sim=min_sim)
        nxt = []
        for row in rows:
            if row["id"] not in seen_entities:
                seen_entities.add(row["id"])
                nxt.append(row["id"])
                if row["id"] not in have:
                    elements.append(entity_element(row, hop, visual))
                    have.add(row["id"])
            if row["rel_id"] not in have:
                elements.append(relation_element({"id": row["rel_id"], "doc_id": row["doc_id"],
                                                  "head_id": row["head_id"], "head": row["head"],
                                                  "tail_id": row["tail_id"], "tail": row["tail"],
                                                  "summary": row["summary"], "chunk_ids": row["rel_chunk_ids"],
                                                  "phrase": row.get("rel_phrase"),
                                                  "relation_name": row.get("rel_relation_name"),
                                                  "sim": row["rel_sim"], "region": None}, hop, visual))
                have.add(row["rel_id"])
        frontier = nxt
    return elements


def entity_element(row: dict, hop: int, visual: bool = True) -> Element:
    """An entity of G_r from its row, with its context line (and the image region depicting it, when ``visual``)."""
    desc = " ".join((row.get("description") or "").split())
    line = f"entity: {row['name']} ({row.get('type') or 'entity'}): {desc}"
    region = row.get("region") if visual else None
    if region and region.get("bbox"):
        b = region["bbox"]
        line += f" [depicted in an image as {region.get('category')!r}, region ({b[0]:.2f}, {b[1]:.2f}, " \
                f"{b[2]:.2f}, {b[3]:.2f})]"
    return Element("entity", row["id"], row["doc_id"], line, cos_from_neo4j(row["sim"]),
                   list(row.get("chunk_ids") or []), name=row["name"], region=region, hop=hop)


def relation_element(row: dict, hop: int, visual: bool = True) -> Element:
    """A relation of G_r from its row, with its context line (and its image region, when ``visual``)."""
    line = f"relation: {row['head']} -> {row['tail']}: {' '.join((row.get('summary') or '').split())}"
    region = row.get("region") if visual else None
    if region and region.get("bbox"):
        line += f" [depicted in an image as {region.get('category')!r}]"
    return Element("relation", row["id"], row["doc_id"], line, cos_from_neo4j(row["sim"]),
                   list(row.get("chunk_ids") or []), name=f"{row['head']} -> {row['tail']}",
                   head_id=row["head_id"], tail_id=row["tail_id"], region=region, hop=hop,
                   phrase=row.get("phrase") or "", relation_name=row.get("relation_name") or "")
