"""Where an answer's evidence is, as a reader finds it: the file, the page (PDFs) and the section.

A PDF's chunk stores where each of its pages begins in its text (``page_offsets``, ``page_numbers``: the
loader's ``segment``); the page of a supporting sentence is the page its first character lies on. Used by
mKG-RAG's answer (``ChunkEvidence.page``, the support's ``citation``) and read back by the trace."""

from __future__ import annotations

from pathlib import PurePath


def page_at(offsets: list[int] | None, numbers: list[int] | None, offset: int) -> int | None:
    """The page holding character ``offset`` of a chunk's text (None without pages)."""
    hit = None
    for off, page in zip(offsets or [], numbers or []):
        if off <= offset:
            hit = page
    return hit


def find(text: str, sentence: str) -> int:
    """Where ``sentence`` begins in ``text`` (spaces compared loosely), or -1."""
    i = text.find(sentence)
    if i >= 0 or not sentence.strip():
        return i
    words = sentence.split()
    import re

    m = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return m.start() if m else -1


def sentence_page(chunk: dict, sentence: str | None) -> int | None:
    """The page of ``sentence`` in ``chunk`` (a row of ``mkgrag_chunks``), else the chunk's first page."""
    offsets, numbers = chunk.get("page_offsets"), chunk.get("page_numbers")
    if not numbers:
        return chunk.get("page_start")
    at = find(chunk.get("text") or "", sentence) if sentence else -1
    return page_at(offsets, numbers, at) if at >= 0 else numbers[0]


def file_name(source: str | None) -> str | None:
    """The file's name of a document's source (a path); a URL (E-VQA) is kept as it is."""
    if not source:
        return None
    if "://" in source:
        return source
    return PurePath(source).name


def cite(source: str | None, page: int | None = None, section: str | None = None,
         pages: tuple[int, int] | None = None) -> str | None:
    """``falcon_9.pdf p. 2 · History`` (``pp. 2–3`` for a span without one page); None without a source."""
    name = file_name(source)
    if name is None:
        return None
    where = (f" p. {page}" if page is not None else
             f" pp. {pages[0]}\u2013{pages[1]}" if pages and pages[0] != pages[1] else
             f" p. {pages[0]}" if pages else "")
    return f"{name}{where}" + (f" \u00b7 {section}" if section else "")
