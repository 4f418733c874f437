"""Steps 3–5 (mKG-RAG, Sections 3.1.1–3.1.3): what the models extract from a document.

The textual graph of a segment (ChatModel), the visual graph of an image (VisionModel, or the
whole-image stand-in on a CPU machine) and the matching of the two (VisionModel, Eq. 1), each
added to the document's KG. A reply that does not fit the schema (``BadModelReply``) costs that
step only, counted as a fallback in the report.
"""

from __future__ import annotations

from kgqa.core.errors import BadModelReply
from kgqa.loaders.documents.kg import DocumentKG, in_text, name_key
from kgqa.loaders.documents.options import DocReport
from kgqa.loaders.documents.parse import DocImage, ParsedDocument
from kgqa.loaders.documents.segment import Chunk


def text_graph(chat, doc: ParsedDocument, ch: Chunk, kg: DocumentKG, report: DocReport, max_tokens: int) -> None:
    """Step 3 (3.1.1): the segment's entities and relations, asked of the ChatModel (``TextGraph``)."""
    from kgqa.loaders.extraction_prompts import EXTRACT_SYSTEM, TextGraph, extraction_prompt

    try:
        tg = chat.generate_json(extraction_prompt(doc.title, ch.text), TextGraph,
                                system=EXTRACT_SYSTEM, max_tokens=max_tokens)
    except BadModelReply as e:
        key = f"text_graph:{e.code}"
        report.fallbacks[key] = report.fallbacks.get(key, 0) + 1
        return
    # Interpretation (beyond the paper): a small model invents names; only names that occur
    # in the segment (or its document's title) are kept, so every entity is grounded in its text.
    scope = f"{doc.title}\n{ch.text}"
    for e in tg.entities:
        if not in_text(e.name, scope):
            report.dropped_ungrounded += 1
            continue
        kg.add_entity(doc.id, e.name, e.type, e.description, ch.id)
    for r in tg.relations:
        if kg.add_relation(doc.id, r.head, r.tail, r.summary, ch.id) is None:
            report.dropped_ungrounded += 1


def visual_graph(vision, im: DocImage, report: DocReport, stand_in: bool):
    """Step 4 (3.1.2): (objects [(id, category, bbox)], relations [(id, subject, predicate, object)])."""
    if stand_in:
        # CPU stand-in, NOT a scene-graph model: the whole image is the one object.
        return [("o0", im.alt or "image", (0.0, 0.0, 1.0, 1.0))], []
    from kgqa.loaders.extraction_prompts import SCENE_GRAPH_PROMPT, SCENE_GRAPH_SYSTEM, VisualGraph

    try:
        vg = vision.generate_json(im.data, SCENE_GRAPH_PROMPT, VisualGraph, system=SCENE_GRAPH_SYSTEM, max_tokens=400)
    except BadModelReply as e:
        key = f"visual_graph:{e.code}"
        report.fallbacks[key] = report.fallbacks.get(key, 0) + 1
        return [], []
    objects = []
    for o in vg.objects:
        x1, y1, x2, y2 = (min(1.0, max(0.0, float(v))) for v in o.bbox)
        if x2 > x1 and y2 > y1:
            objects.append((o.id, o.category, (x1, y1, x2, y2)))
    ids = {o[0] for o in objects}
    rels = [(f"r{k}", r.subject, r.predicate, r.object) for k, r in enumerate(vg.relations)
            if r.subject in ids and r.object in ids and r.subject != r.object]
    return objects, rels


def match(vision, ch: Chunk, im: DocImage, objects, vrels, kg: DocumentKG, report: DocReport, stand_in: bool) -> None:
    """Step 5 (3.1.3, Eq. 1): the image's objects and relations matched to the segment's entities and
    relations; a matched object becomes a region of its entity, a matched relation gets a box."""
    from kgqa.loaders.extraction_prompts import MATCH_SYSTEM, matches_schema, matching_prompt

    ents = [e for e in kg.entities.values() if ch.id in e.chunk_ids]
    if not objects or not ents:
        return
    rels = [r for r in kg.relations.values() if ch.id in r.chunk_ids]
    prompt = matching_prompt([(e.name, e.description[:160]) for e in ents],
                             [(kg.entities[r.head].name, kg.entities[r.tail].name, r.summary[:160]) for r in rels],
                             objects, vrels)
    schema = matches_schema([o[0] for o in objects], [r[0] for r in vrels], [e.name for e in ents])
    try:
        m = vision.generate_json(im.data, prompt, schema, system=MATCH_SYSTEM, max_tokens=120)
    except BadModelReply as e:
        key = f"matching:{e.code}"
        report.fallbacks[key] = report.fallbacks.get(key, 0) + 1
        return
    boxes = {oid: (cat, b) for oid, cat, b in objects}
    rel_objs = {rid: (s, o) for rid, s, _, o in vrels}
    seen = set()
    for em in m.entities:
        ent = kg.entities.get(name_key(em.entity))
        if ent is None or em.object not in boxes or (ent.id, em.object) in seen:
            continue
        seen.add((ent.id, em.object))
        cat, b = boxes[em.object]
        kg.regions.append({"id": f"{ent.id}:g:{im.sha256[:8]}:{em.object}", "entity_id": ent.id,
                           "bbox": list(b), "category": cat, "image_sha256": im.sha256,
                           "stand_in": stand_in})
    for rm in getattr(m, "relations", []):
        rel = kg.relations.get((name_key(rm.head), name_key(rm.tail)))
        if rel is None or rm.relation not in rel_objs:
            continue
        s, o = rel_objs[rm.relation]
        (c1, b1), (c2, b2) = boxes[s], boxes[o]
        union = [min(b1[0], b2[0]), min(b1[1], b2[1]), max(b1[2], b2[2]), max(b1[3], b2[3])]
        rel.region = {"relation_id": rel.id, "bbox": union, "category": f"{c1} / {c2}",
                      "image_sha256": im.sha256}
