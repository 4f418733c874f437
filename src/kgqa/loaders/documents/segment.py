"""Step 2 (mKG-RAG, Section 3.1): a parsed document cut into chunks. Sections with images are kept
whole; runs of sections without images are merged up to ``chunk_tokens`` tokens and longer ones
split at sentence ends. Nothing is dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from kgqa.loaders.documents.parse import DocImage, ParsedDocument


@dataclass
class Chunk:
    id: str
    order: int
    text: str
    sections: list[str]
    tokens: int
    images: list[DocImage]


# --------------------------------------------------------------------------- segmentation (3.1)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def segment(doc: ParsedDocument, count_tokens: Callable[[str], int], chunk_tokens: int) -> list[Chunk]:
    """Sections with images whole; text-only sections merged up to ``chunk_tokens`` or split at
    sentence ends (a sentence longer than that is split by words). Nothing is dropped."""
    pieces: list[tuple[list[str], str, list[DocImage]]] = []   # (sections, text, images)
    buf_sections: list[str] = []
    buf_text: list[str] = []
    buf_tokens = 0

    def flush():
        nonlocal buf_sections, buf_text, buf_tokens
        if buf_text:
            pieces.append((buf_sections, "\n\n".join(buf_text), []))
        buf_sections, buf_text, buf_tokens = [], [], 0

    for s in doc.sections:
        block = (f"{s.heading}\n{s.text}" if s.heading else s.text).strip()
        if s.images:
            flush()
            pieces.append(([s.heading], block, list(s.images)))
            continue
        n = count_tokens(block)
        if n > chunk_tokens:
            flush()
            for part in _split(block, count_tokens, chunk_tokens):
                pieces.append(([s.heading], part, []))
            continue
        if buf_tokens + n > chunk_tokens:
            flush()
        buf_sections.append(s.heading)
        buf_text.append(block)
        buf_tokens += n
    flush()
    return [Chunk(id=f"{doc.id}#c{i}", order=i, text=text, sections=secs, tokens=count_tokens(text), images=imgs)
            for i, (secs, text, imgs) in enumerate(pieces)]


def _split(text: str, count_tokens, limit: int) -> list[str]:
    out, cur = [], ""
    for sent in _SENTENCE.split(text):
        cand = f"{cur} {sent}".strip()
        if cur and count_tokens(cand) > limit:
            out.append(cur)
            cand = sent
        if count_tokens(cand) > limit:             # one very long sentence: by words
            words, cur = cand.split(), ""
            for w in words:
                c2 = f"{cur} {w}".strip()
                if cur and count_tokens(c2) > limit:
                    out.append(cur)
                    c2 = w
                cur = c2
            continue
        cur = cand
    if cur:
        out.append(cur)
    return out
