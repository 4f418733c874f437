"""Step 2 (mKG-RAG, Section 3.1): a parsed document cut into chunks. Sections with images are kept
whole (a PDF page's part with a figure only up to ``chunk_tokens``: beyond that it is cut as a text section is,
each figure in the piece that holds its caption); runs of sections without images are merged up to
``chunk_tokens`` tokens and longer ones split at sentence ends, or with ``paragraphs`` (``kgqa load documents --paragraphs``) at paragraph ends
where whole paragraphs fit (the recursive splitting of common RAG tools: paragraphs first, then
sentences, then words), so that a chunk holds whole paragraphs, the unit a reader is trained on, and
keeps their blank lines. Nothing is dropped.

Beyond the paper: a chunk never crosses a top-level heading (a topic of a multi-topic guide: the first
heading of each section's ``path``), and each chunk carries its ``heading_path``, the document's title and
the headings its sections share (document title › topic › section), which retrieval and the readers read
beside its text: a chunk under "Eiffel Tower" › "Design" that says "the tower" still knows of what."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from kgqa.core.spans import paragraphs_of
from kgqa.loaders.documents.parse import DocImage, ParsedDocument


@dataclass
class Chunk:
    id: str
    order: int
    text: str
    sections: list[str]
    tokens: int
    images: list[DocImage]
    pages: list[tuple[int, int]] = field(default_factory=list)   # PDF: (offset in text, page) where each page begins
    heading_path: list[str] = field(default_factory=list)        # document title › topic › section (``path_of``)

    @property
    def page_span(self) -> tuple[int, int] | None:
        """The first and last page the chunk's text lies on (PDF), else None."""
        return (self.pages[0][1], self.pages[-1][1]) if self.pages else None


# --------------------------------------------------------------------------- segmentation (3.1)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def segment(doc: ParsedDocument, count_tokens: Callable[[str], int], chunk_tokens: int,
            paragraphs: bool = False) -> list[Chunk]:
    """Sections with images whole (a PDF one over ``chunk_tokens`` cut as a text section, each figure with the
    piece of its caption); text-only sections merged up to ``chunk_tokens`` or split at sentence ends (a
    sentence longer than that is split by words). Nothing is dropped.

    The text is tokenized once: every sentence of the text-only sections in one batch (with its
    leading space: the tokenizer splits at spaces, so a piece's count is the sum of its sentences'),
    since counting the growing piece at every sentence made a 5 MB document take minutes."""
    # (sections, text, images, tokens, pages, heading path)
    pieces: list[tuple[list[str], str, list[DocImage], int, list, list[str]]] = []
    blocks = [(s, (f"{s.heading}\n{s.text}" if s.heading and not s.cont else s.text).strip()) for s in doc.sections]
    cut_figures = doc.format == "pdf"        # a PDF page's part with a figure may be cut (a Markdown one is not)
    # each section's paragraphs that may be cut (the whole block as one without ``paragraphs``): (text, its sentences)
    paras = {k: [(p, [x for x in _SENTENCE.split(p) if x.strip()]) for p in (paragraphs_of(b) if paragraphs else [b])]
             for k, (s, b) in enumerate(blocks) if not s.images or cut_figures}
    sents = {k: [x for _, ps in pss for x in ps] for k, pss in paras.items()}
    flat = [" " + x for k in sorted(sents) for x in sents[k]]
    counts_flat = iter(count_many(count_tokens, flat))
    counts = {k: [next(counts_flat) for _ in sents[k]] for k in sorted(sents)}
    buf_sections: list[str] = []
    buf_paths: list[tuple[str, ...]] = []
    buf_text: list[str] = []
    buf_pages: list[tuple[int, int]] = []
    buf_tokens = 0

    def page_at(s, offset: int = 0) -> list[tuple[int, int]]:
        return [(offset, s.page)] if s.page is not None else []

    def flush():
        nonlocal buf_sections, buf_paths, buf_text, buf_tokens, buf_pages
        if buf_text:
            pieces.append((list(dict.fromkeys(buf_sections)), "\n\n".join(buf_text), [], buf_tokens,
                           _runs(buf_pages), path_of(doc.title, buf_paths)))
        buf_sections, buf_paths, buf_text, buf_tokens, buf_pages = [], [], [], 0, []

    for k, (s, block) in enumerate(blocks):
        if s.images and not (k in counts and sum(counts[k]) > chunk_tokens):
            flush()
            pieces.append(([s.heading], block, list(s.images), count_tokens(block), page_at(s),
                           path_of(doc.title, [s.path])))
            continue
        n = sum(counts[k])
        if n > chunk_tokens:
            flush()              # cut at sentence (or paragraph) ends; a figure goes with the piece of its caption
            parts = (_split_paragraphs(paras[k], counts[k], count_tokens, chunk_tokens) if paragraphs
                     else _split(sents[k], counts[k], count_tokens, chunk_tokens))
            for (part, m), ims in zip(parts, figure_homes([p for p, _ in parts], s.images)):
                pieces.append(([s.heading], part, ims, m, page_at(s), path_of(doc.title, [s.path])))
            continue
        if buf_tokens + n > chunk_tokens or (buf_paths and _top(buf_paths[-1]) != _top(s.path)):
            flush()                            # full, or a new topic begins: a chunk never crosses one
        buf_pages += page_at(s, sum(len(t) + 2 for t in buf_text))
        buf_paths.append(s.path)
        buf_sections.append(s.heading)
        buf_text.append(block)
        buf_tokens += n
    flush()
    return [Chunk(id=f"{doc.id}#c{i}", order=i, text=text, sections=secs, tokens=n, images=imgs, pages=pages,
                  heading_path=hpath) for i, (secs, text, imgs, n, pages, hpath) in enumerate(pieces)]


def figure_homes(parts: list[str], images: list[DocImage]) -> list[list[DocImage]]:
    """The figures of each of a section's pieces: a figure in the first piece that holds its caption (its words in
    order, whatever the spacing), a figure without one found in the first piece."""
    homes: list[list[DocImage]] = [[] for _ in parts]
    flat = [" ".join(p.split()) for p in parts]
    for im in images:
        cap = " ".join(im.alt.split())
        at = next((j for j, p in enumerate(flat) if cap and cap in p), 0)
        homes[at].append(im)
    return homes


def _top(path: tuple[str, ...]) -> str | None:
    """The top-level heading a section lies under (None before the first heading)."""
    return path[0] if path else None


def path_of(title: str, paths: list[tuple[str, ...]]) -> list[str]:
    """A chunk's heading path: the document's title, then the headings all its sections' paths share (the whole
    path of a chunk of one section); a heading that repeats the title is not repeated."""
    common = list(paths[0]) if paths else []
    for p in paths[1:]:
        k = 0
        while k < min(len(common), len(p)) and common[k] == p[k]:
            k += 1
        common = common[:k]
    out = [title] if title else []
    for h in common:
        if not out or h.casefold() != out[-1].casefold():
            out.append(h)
    return out


def _runs(pages: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(offset, page) pairs with a page that repeats the one before it left out."""
    out: list[tuple[int, int]] = []
    for off, page in pages:
        if not out or out[-1][1] != page:
            out.append((off, page))
    return out


def page_of(pages: list[tuple[int, int]], offset: int) -> int | None:
    """The page holding ``offset`` of a chunk's text, from its (offset, page) starts."""
    hit = None
    for off, page in pages:
        if off <= offset:
            hit = page
    return hit


def count_many(count_tokens: Callable[[str], int], texts: list[str]) -> list[int]:
    """Token counts of many texts: one batch call when the counter has one (``.many``), else one by one."""
    many = getattr(count_tokens, "many", None)
    return list(many(texts)) if many is not None and texts else [count_tokens(t) for t in texts]


def _pack(parts: list[str], counts: list[int], limit: int, out: list[tuple[str, int]]) -> None:
    """Greedy packing of ``parts`` (counted with their leading space) into pieces of at most ``limit``."""
    cur: list[str] = []
    n = 0
    for part, c in zip(parts, counts):
        if cur and n + c > limit:
            out.append((" ".join(cur), n))
            cur, n = [], 0
        cur.append(part)
        n += c
    if cur:
        out.append((" ".join(cur), n))


def _split_paragraphs(paras: list[tuple[str, list[str]]], counts: list[int], count_tokens,
                      limit: int) -> list[tuple[str, int]]:
    """A long section's paragraphs, (text, its sentences), packed whole up to ``limit`` tokens and joined by a blank
    line; a paragraph longer than that is split by ``_split`` into pieces of its own. ``counts``: the token count of
    each sentence of the paragraphs in order."""
    out: list[tuple[str, int]] = []
    cur: list[str] = []
    n = 0
    at = 0
    for p, sents in paras:
        cs = counts[at:at + len(sents)]
        at += len(sents)
        c = sum(cs)
        if cur and n + c > limit:
            out.append(("\n\n".join(cur), n))
            cur, n = [], 0
        if c > limit:
            out += _split(sents, cs, count_tokens, limit)
            continue
        cur.append(p)
        n += c
    if cur:
        out.append(("\n\n".join(cur), n))
    return out


def _split(sents: list[str], counts: list[int], count_tokens, limit: int) -> list[tuple[str, int]]:
    """Sentences packed up to ``limit`` tokens, a longer sentence by words: (text, tokens) pieces."""
    out: list[tuple[str, int]] = []
    run_s: list[str] = []
    run_c: list[int] = []
    for sent, c in zip(sents, counts):
        if c <= limit:
            run_s.append(sent)
            run_c.append(c)
            continue
        _pack(run_s, run_c, limit, out)                 # one very long sentence: by words
        run_s, run_c = [], []
        words = sent.split()
        _pack(words, count_many(count_tokens, [" " + w for w in words]), limit, out)
    _pack(run_s, run_c, limit, out)
    return out
