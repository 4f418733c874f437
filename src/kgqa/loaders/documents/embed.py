"""Step 7: a document's texts embedded (entities: name + description; relations: head, tail,
summary; chunks; the document: title, image captions, text; regions: their category), as the
rows the writer stores."""

from __future__ import annotations

from typing import Callable

from kgqa.loaders.documents.kg import DocumentKG
from kgqa.loaders.documents.parse import ParsedDocument
from kgqa.loaders.documents.segment import Chunk

#: chunks embedded per call (a progress report after each)
CHUNK_SLICE = 256
#: words of the document's text embedded: the encoder keeps its first 256 word pieces, and every word is
#: at least one piece, so a longer prefix gives the same vector without tokenizing megabytes
DOC_TEXT_WORDS = 1024


def document_rows(encoder, doc: ParsedDocument, chunks: list[Chunk], kg: DocumentKG, extractor: str,
                  on_chunks: Callable[[int, int], None] | None = None, threads: int | None = None) -> dict:
    """The document, its chunks, images, entities, relations and regions as the rows ``store`` writes,
    with their embeddings (all-MiniLM-L6-v2); ``extractor`` names what extracted them.

    Texts of a sentence or more (chunks, entity descriptions, relation summaries, the document) are
    embedded as passages (``encode_passages``, ``threads`` workers), the chunks ``CHUNK_SLICE`` at a
    time with ``on_chunks(done, total)`` after each slice; names and region categories, which are
    compared with the Wikidata entities' names, with ``encode``."""
    ents = list(kg.entities.values())
    rels = list(kg.relations.values())
    captions = [im.alt for im in doc.images if im.alt]
    doc_text = " ".join(" ".join([doc.title + "."] + captions + [c.text for c in chunks])
                        .split(None, DOC_TEXT_WORDS)[:DOC_TEXT_WORDS])
    passages = getattr(encoder, "encode_passages", None)
    if passages is None:                       # an encoder without passages (a test double): encode
        def passages(texts, threads=None):
            return encoder.encode(texts)
    ne, nr = len(ents), len(rels)
    vecs = passages([f"{e.name}: {e.description}" for e in ents]
                    + [f"{kg.entities[r.head].name} {kg.entities[r.tail].name}: {r.summary}" for r in rels]
                    + [doc_text], threads=threads)
    ev, rv, dv = vecs[:ne], vecs[ne:ne + nr], vecs[ne + nr]
    # a region's embedding is that of its category (the stand-in: the image's alt text); it stands
    # for the visual part of the multimodal entity (n, v) / relation (e, r) at retrieval time
    regions = kg.regions + [r.region for r in rels if r.region]
    short = encoder.encode([e.name for e in ents] + [g["category"] for g in regions]) if ents or regions else []
    namev = short[:ne]
    for g, v in zip(regions, short[ne:]):
        g["embedding"] = [float(x) for x in v]
    cv = []
    for i in range(0, len(chunks), CHUNK_SLICE):
        cv.extend(passages([c.text for c in chunks[i:i + CHUNK_SLICE]], threads=threads))
        if on_chunks is not None:
            on_chunks(min(i + CHUNK_SLICE, len(chunks)), len(chunks))
    return {
        "document": {"id": doc.id, "title": doc.title, "source": doc.source, "origin": doc.origin,
                     "format": doc.format,
                     "content_hash": doc.content_hash, "bytes": len(doc.raw), "n_chunks": len(chunks),
                     "n_images": len(doc.images), "embedding": [float(x) for x in dv], "pages": doc.pages or None,
                     "extractor": extractor},
        "chunks": [{"id": c.id, "order": c.order, "text": c.text, "sections": c.sections, "tokens": c.tokens,
                    "has_image": bool(c.images), "embedding": [float(x) for x in v],
                    "page_start": c.page_span[0] if c.pages else None,
                    "page_end": c.page_span[1] if c.pages else None,
                    "page_offsets": [off for off, _ in c.pages] or None,
                    "page_numbers": [p for _, p in c.pages] or None}
                   for c, v in zip(chunks, cv)],
        "images": [{"chunk_id": c.id, "sha256": im.sha256, "path": str(im.path), "width": im.width,
                    "height": im.height, "mime": im.mime, "alt": im.alt, "page": im.page}
                   for c in chunks for im in c.images],
        "entities": [{"id": e.id, "name": e.name, "type": e.type, "description": e.description,
                      "chunk_ids": e.chunk_ids, "embedding": [float(x) for x in v],
                      "_name_vec": [float(x) for x in nv]} for e, v, nv in zip(ents, ev, namev)],
        "relations": [{"id": r.id, "head_id": kg.entities[r.head].id, "tail_id": kg.entities[r.tail].id,
                       "summary": r.summary, "chunk_ids": r.chunk_ids, "embedding": [float(x) for x in v],
                       "sentence": r.sentence or None, "context": r.context or None, "phrase": r.phrase or None,
                       "relation_id": r.relation_id, "relation_name": r.relation_name}
                      for r, v in zip(rels, rv)],
        "regions": kg.regions,
        "rel_regions": [r.region for r in rels if r.region],
    }
