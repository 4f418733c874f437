"""mKG-RAG's answer as a reader sees it: each context chunk as evidence with its file, page (PDFs) and
section, the supporting sentence's citation (``falcon_9.pdf p. 2 · History``; under a topic of a multi-topic guide
``towers.pdf p. 3 · Eiffel Tower › Design``), and the lines ``kgqa ask`` prints (``render``)."""

from __future__ import annotations

from kgqa.core.citation import cite, file_name, sentence_page
from kgqa.core.result import Answer, ChunkEvidence
from kgqa.methods.mkgrag.records import Chunk, Reading


def cited_under(c: Chunk, section: str | None) -> str | None:
    """What a citation names after the page: the chunk's heading path below the document's title, ending with the
    section the sentence is read in ("Eiffel Tower › Design and construction"); the section alone without a path."""
    path = list(c.heading_path[1:])
    if section and (not path or path[-1] != section):
        path.append(section)
    return " \u203a ".join(path) or None


def chunk_evidence(c: Chunk, rank: int, title: str | None, sentence: str | None = None,
                   section: str | None = None) -> ChunkEvidence:
    """One chunk of the context as evidence; ``sentence``: the supporting one when the answer is read from this
    chunk (its page is then the sentence's)."""
    pages = [c.page_start, c.page_end] if c.page_start is not None else None
    page = sentence_page(c.row(), sentence) if pages else None
    section = section or (c.sections or [None])[0] or None
    return ChunkEvidence(chunk_id=c.id, document_id=c.doc_id, text=c.text or sentence or "",
                         score=c.cos, rank=rank, title=title, sentence=sentence,
                         source=file_name(c.source), page=page, pages=pages,
                         citation=cite(c.source, page if sentence else None, cited_under(c, section),
                                       tuple(pages) if pages else None))


def locate(support: dict | None, chunk: Chunk | None) -> dict | None:
    """The support with where it is: ``file``, ``page`` (PDFs) and ``citation``."""
    if not support or chunk is None:
        return support
    page = sentence_page(chunk.row(), support.get("sentence")) if chunk.page_start is not None else None
    return {**support, "file": file_name(chunk.source), "page": page,
            "citation": cite(chunk.source, page, cited_under(chunk, support.get("section")))}


def figures_of(chunk: Chunk) -> list[dict]:
    """The figures of the chunk the answer is read from: file path, page (PDFs), caption, where (``citation``)."""
    out = []
    for f in chunk.figures:
        if f and f.get("sha256"):
            out.append({"sha256": f["sha256"], "path": f.get("path"), "page": f.get("page"),
                        "caption": f.get("caption") or None,
                        "citation": cite(chunk.source, f.get("page"))})
    return out


def render(answer: Answer) -> list[str]:
    """The mKG-RAG lines of ``kgqa ask``: query, stage-1 documents, stage-2 elements, support, context size."""
    d = answer.details
    lines = [f"query: {d.get('query')!r}" + (f"  (image recognised as {d['image_note']!r})"
                                              if d.get("image_note") else "")]
    if d.get("scope"):
        lines.append(f"scope: {len(d['scope'])} documents: " + ", ".join(d["scope"][:5])
                     + (" …" if len(d["scope"]) > 5 else ""))
    docs = d.get("documents") or []
    lines.append(f"stage 1: {len(docs)} documents: "
                 + ", ".join(f"{x['id']} ({x['cos']:.2f})" for x in docs[:5]) + (" …" if len(docs) > 5 else ""))
    els = d.get("elements") or []
    if els:
        lines.append(f"stage 2: {sum(e['kind'] == 'entity' for e in els)} entities, "
                     f"{sum(e['kind'] == 'relation' for e in els)} relations "
                     f"({sum(e['hop'] > 0 for e in els)} by expansion, {sum(e['region'] for e in els)} with an "
                     f"image region)")
        for e in els[:6]:
            lines.append(f"  {e['kind']} {e['name']} [{e['id']}] cos {e['cos']:.2f}"
                         + (f" (hop {e['hop']})" if e["hop"] else ""))
    sup = d.get("support")
    if sup:
        lines.append(f"supporting sentence ({sup.get('chunk_id')}, {sup.get('section') or '-'}): "
                     f"\u201c{sup['sentence']}\u201d")
        if sup.get("citation"):
            lines.append(f"source: {sup['citation']}")
    elif answer.answer is None:
        lines.append(f"no supporting sentence: {answer.stop_reason}")
    for f in d.get("figures") or []:
        lines.append(f"figure: {f.get('caption') or '(no caption)'} ({f.get('citation') or '-'}): {f.get('path')}")
    ranked = d.get("chunk_rank_scores") or {}
    lines.append(f"context: {len(d.get('chunk_ids') or [])} chunks, {d.get('context_tokens')} tokens "
                 f"(budget {d.get('budget')}"
                 + ("; in the passage ranker's order, its scores in brackets; a chunk's score below is its cosine"
                    if ranked else "") + "): "
                 + ", ".join(c + (f" [{ranked[c]:.2f}]" if c in ranked else "") for c in d.get("chunk_ids") or []))
    return lines


def support_of(text: str | None, chunks: list[Chunk], reading: Reading) -> dict | None:
    """The sentence the answer is read from: the CPU reader's (its ``reading``'s candidate), or (LLM) the first
    context sentence holding the answer."""
    if reading is not None and reading.candidate is not None and text:
        c = reading.candidate
        return {"sentence": c.sentence, "chunk_id": c.chunk_id, "doc_id": c.doc_id,
                "section": c.heading or None, "score": round(c.score, 4),
                "sentence_cos": round(c.sentence_cos, 4) if reading.reader_name == "rules" else None}
    if not text:
        return None
    from kgqa.core.spans import sentences

    key = text.casefold()
    for ch in chunks:
        for sent in sentences(ch.text):
            if key in sent.casefold():
                return {"sentence": sent, "chunk_id": ch.id, "doc_id": ch.doc_id,
                        "section": (ch.sections or [None])[0], "score": None, "sentence_cos": None}
    return None
