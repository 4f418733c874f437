"""Step 7: a document's texts embedded (entities: name + description; relations: head, tail,
summary; chunks; the document: title, image captions, text; regions: their category), as the
rows the writer stores."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from kgqa.loaders.documents.embed_cache import EmbeddingCache
from kgqa.loaders.documents.kg import DocumentKG
from kgqa.loaders.documents.parse import ParsedDocument
from kgqa.loaders.documents.segment import Chunk

#: texts embedded per call: a progress report, and with a cache a saved file, after each
EMBED_SLICE = 1024
#: words of the document's text embedded: the encoder keeps its first 256 word pieces, and every word is
#: at least one piece, so a longer prefix gives the same vector without tokenizing megabytes
DOC_TEXT_WORDS = 1024


@dataclass
class Resumed:
    """What a cache gave a load before it embedded anything: vectors saved by a killed load."""
    vectors: int = 0                   # texts whose vector was saved
    texts: int = 0                     # texts of the document
    chunks: int = 0                    # the first ``chunks`` chunks have every vector they bring saved
    page: int | None = None            # a PDF: the last page of those chunks


def embed_texts(encoder, items: list[tuple[str, str]], threads: int | None = None, cache: EmbeddingCache | None = None,
                on_progress: Callable[[int, int], None] | None = None) -> list[np.ndarray]:
    """The vectors of ``items`` ((kind, text): ``passage`` by ``encode_passages``, ``name`` by ``encode``), in
    their order, ``EMBED_SLICE`` at a time; with ``cache``, a saved vector is reused and each slice computed is
    saved before the next begins (all but the last: a document of one slice writes no file).
    ``on_progress(done, total)`` after each slice."""
    passages = getattr(encoder, "encode_passages", None)
    if passages is None:                       # an encoder without passages (a test double): encode
        def passages(texts, threads=None):
            return encoder.encode(texts)
    keys = [cache.key(kind, text) for kind, text in items] if cache is not None else [b""] * len(items)
    out: list[np.ndarray | None] = [cache.vectors.get(k) if cache is not None else None for k in keys]
    todo = [i for i, v in enumerate(out) if v is None]
    total, done = len(items), len(items) - len(todo)
    for s in range(0, len(todo), EMBED_SLICE):
        part = todo[s:s + EMBED_SLICE]
        for kind, fn in (("passage", lambda t: passages(t, threads=threads)), ("name", encoder.encode)):
            idx = [i for i in part if items[i][0] == kind]
            if idx:
                for i, v in zip(idx, fn([items[i][1] for i in idx])):
                    out[i] = np.asarray(v, dtype=np.float32)
        if cache is not None and s + EMBED_SLICE < len(todo):  # the last slice goes to the graph at once: a
            cache.save([keys[i] for i in part], np.stack([out[i] for i in part]))  # small document never waits on disk
        done += len(part)
        if on_progress is not None:
            on_progress(done, total)
    return out


def document_rows(encoder, doc: ParsedDocument, chunks: list[Chunk], kg: DocumentKG, extractor: str,
                  on_progress: Callable[[int, int], None] | None = None, threads: int | None = None,
                  cache: EmbeddingCache | None = None, on_resume: Callable[[Resumed], None] | None = None) -> dict:
    """The document, its chunks, images, entities, relations and regions as the rows ``store`` writes,
    with their embeddings (all-MiniLM-L6-v2); ``extractor`` names what extracted them.

    Texts of a sentence or more (chunks, entity descriptions, relation summaries, the document) are
    embedded as passages (``encode_passages``, ``threads`` workers); names and region categories, which are
    compared with the Wikidata entities' names, with ``encode``. All in the document's order (a chunk, then
    the entities and relations it brings first), ``EMBED_SLICE`` texts at a time with ``on_progress(done,
    total)`` after each; with ``cache`` (``embed_cache``), each slice is saved as it is computed and a
    rerun after a kill reuses what was saved: ``on_resume(Resumed)`` first says how much, when anything."""
    ents = list(kg.entities.values())
    rels = list(kg.relations.values())
    captions = [im.alt for im in doc.images if im.alt]
    doc_text = " ".join(" ".join([doc.title + "."] + captions + [c.text for c in chunks])
                        .split(None, DOC_TEXT_WORDS)[:DOC_TEXT_WORDS])
    # a region's embedding is that of its category (the stand-in: the image's alt text); it stands
    # for the visual part of the multimodal entity (n, v) / relation (e, r) at retrieval time
    regions = kg.regions + [r.region for r in rels if r.region]
    first = {c.id: i for i, c in enumerate(chunks)}
    end = len(chunks)

    def at(chunk_ids) -> int:
        return min((first[c] for c in chunk_ids if c in first), default=end)

    # (where in the document: its first chunk, kind, text); the vectors come back in this list's order
    texts = ([(i, "passage", c.text) for i, c in enumerate(chunks)]
             + [(at(e.chunk_ids), "passage", f"{e.name}: {e.description}") for e in ents]
             + [(at(r.chunk_ids), "passage", f"{kg.entities[r.head].name} {kg.entities[r.tail].name}: {r.summary}")
                for r in rels]
             + [(end, "passage", doc_text)]
             + [(at(e.chunk_ids), "name", e.name) for e in ents]
             + [(end, "name", g["category"]) for g in regions])
    order = sorted(range(len(texts)), key=lambda i: texts[i][0])
    items = [texts[i][1:] for i in order]
    if cache is not None and cache.vectors and on_resume is not None:
        missing = [texts[i][0] for i in order if cache.vectors.get(cache.key(*texts[i][1:])) is None]
        upto = min(missing, default=end)
        saved = len(texts) - len(missing)
        if saved:
            on_resume(Resumed(vectors=saved, texts=len(texts), chunks=upto,
                              page=chunks[upto - 1].page_span[1] if upto and chunks[upto - 1].pages else None))
    got = embed_texts(encoder, items, threads=threads, cache=cache, on_progress=on_progress)
    vecs: list = [None] * len(texts)
    for i, v in zip(order, got):
        vecs[i] = v
    nc, ne, nr = len(chunks), len(ents), len(rels)
    cv, ev, rv, dv = vecs[:nc], vecs[nc:nc + ne], vecs[nc + ne:nc + ne + nr], vecs[nc + ne + nr]
    namev = vecs[nc + ne + nr + 1:nc + ne + nr + 1 + ne]
    for g, v in zip(regions, vecs[nc + ne + nr + 1 + ne:]):
        g["embedding"] = [float(x) for x in v]
    return {
        "document": {"id": doc.id, "title": doc.title, "source": doc.source, "origin": doc.origin,
                     "format": doc.format,
                     "content_hash": doc.content_hash, "bytes": len(doc.raw), "n_chunks": len(chunks),
                     "n_images": len(doc.images), "embedding": [float(x) for x in dv], "pages": doc.pages or None,
                     "extractor": extractor},
        "chunks": [{"id": c.id, "order": c.order, "text": c.text, "sections": c.sections,
                    "heading_path": c.heading_path, "tokens": c.tokens,
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
