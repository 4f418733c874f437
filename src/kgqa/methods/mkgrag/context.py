"""mKG-RAG's context: the graph elements of G_r, then their source chunks, best first, within a token budget.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA", Section 3.2.2, last paragraph: the retrieved graph elements (entities, relations, regions) and their
associated textual chunks are the context of the answer. Here, in a delimited data block:

    order    the source chunks in the order of the best element citing them (the paper's), then their cosine;
             with ``ranker=learned`` the first ``rerank_k`` in the passage ranker's order (beyond the paper:
             ``kgqa.models.heads.passage_ranker``, monoBERT, arXiv:1901.04085), the rest after them in theirs
    budget   ``budget`` tokens of the LLM's tokenizer, ``chunk_share`` of them kept for the chunks (the graph lines,
             which restate them, are cut to the rest; line k is element k, so a cut line leaves the evidence too);
             the chunks then take what the lines leave
    fit      token counts of the parts do not add up exactly to the joined text's (tokens merge at the joins): the
             context itself is measured, and its last chunk, then its last graph line, dropped until it fits

The reference code orders the final context by node degree; we order it by similarity to the query.
"""

from __future__ import annotations

import time
from dataclasses import replace

from kgqa.core.kg import cos_from_neo4j
from kgqa.core.result import Fallback
from kgqa.methods.mkgrag.options import MKGRAGOptions
from kgqa.methods.mkgrag.records import Chunk, Element, Retrieval


def graph_lines(elements: list[Element]) -> list[str]:
    """The context lines of G_r; a relation whose summary an earlier line already gave (the CPU extractor's
    relations of one sentence share it) is shortened to its head and tail, leaving budget for chunks."""
    seen: set[str] = set()
    out = []
    for el in elements:
        if el.kind == "relation":
            summary = el.text.split(": ", 2)[-1]
            if summary in seen:
                out.append(f"relation: {el.name} (same sentence as above)")
                continue
        else:
            head, _, rest = el.text.partition("): ")
            summary = rest.split(" [depicted in an image")[0]
            if rest and summary in seen:
                out.append(f"{head}) (described above){rest[len(summary):]}")
                continue
        seen.add(summary)
        out.append(el.text)
    return out


def source_chunks(graph, elements: list[Element], qvec) -> list[Chunk]:
    """The chunks G_r's elements cite, in the order of the best element citing them, then by cosine."""
    order: dict[str, int] = {}
    for rank, el in enumerate(sorted(elements, key=lambda e: -e.sim)):
        for cid in el.chunk_ids:
            order.setdefault(cid, rank)
    chunks = [Chunk.from_row(c) for c in graph.read("mkgrag_chunks", ids=list(order), vector=qvec)] if order else []
    chunks.sort(key=lambda c: (order[c.id], -c.sim))
    return chunks


def rank_chunks(query_text: str, chunks: list[Chunk], r: Retrieval, opt: MKGRAGOptions,
                passage_ranker) -> list[Chunk]:
    """The first ``rerank_k`` candidate chunks in the passage ranker's order, the rest after them in theirs
    (beyond the paper, whose context orders chunks by the graph elements citing them); ``passage_ranker``: loads
    the ranker, (ranker, None) or (None, why). The ranker's scores go to ``r.rank_scores``."""
    if opt.ranker == "none" or not chunks:
        return chunks
    ranker, why = passage_ranker()
    if ranker is None:
        r.fallbacks.append(Fallback("ranker", f"passage ranker unavailable ({why}); the chunks keep the "
                                              "retrieval order"))
        return chunks
    t = time.perf_counter()
    head = chunks[:opt.rerank_k]
    scores = ranker.score(query_text, [f"{c.label}. {c.text}" for c in head])     # where it stands, and its text
    order = sorted(range(len(head)), key=lambda k: -float(scores[k]))
    r.timings["rank"] = time.perf_counter() - t
    r.rank_scores = {c.id: float(x) for c, x in zip(head, scores)}
    return [head[k] for k in order] + chunks[opt.rerank_k:]


def chunk_tokens(c: Chunk, count_tokens) -> int:
    return count_tokens(f"[{c.label}] {c.text}") + 1      # as the chunk appears in the context


def fit_chunks(chunks: list[Chunk], budget: int, count_tokens, sizes: dict[str, int] | None = None) -> list[Chunk]:
    """The chunks, best first, that fit ``budget`` tokens (``sizes``: their counts by id, when known), each with
    its cosine."""
    out, used = [], 0
    for c in chunks:
        n = sizes[c.id] if sizes is not None else chunk_tokens(c, count_tokens)
        if used + n > budget:
            continue                       # a later, shorter chunk may still fit
        out.append(replace(c, cos=round(cos_from_neo4j(c.sim), 4)))
        used += n
    return out


def context_text(lines: list[str], chunks: list[Chunk]) -> str:
    parts = []
    if lines:
        parts.append("Knowledge graph:\n" + "\n".join(f"- {line}" for line in lines))
    if chunks:
        parts.append("Sources:\n" + "\n\n".join(f"[{c.label}] {c.text}" for c in chunks))
    return "\n\n".join(parts)


def pack(elements: list[Element], chunks: list[Chunk], budget: int, chunk_share: float,
         count_tokens) -> tuple[list[str], list[Chunk]]:
    """G_r's lines and the chunks that fit ``budget`` tokens: the best chunks keep ``chunk_share`` of it, the lines
    are cut to the rest (``elements`` with them: line k is element k, the evidence is what the context holds),
    then the chunks take what the lines leave. Counted line by line: an expansion in a large document can bring
    thousands of lines."""
    lines = graph_lines(elements)
    sizes = {c.id: chunk_tokens(c, count_tokens) for c in chunks}          # counted once, fitted twice
    kept = fit_chunks(chunks, int(budget * chunk_share), count_tokens, sizes) if chunk_share > 0 else []
    room = budget - sum(sizes[c.id] for c in kept) - 4                        # 4: the two headers
    lines_tokens = [count_tokens(f"- {line}") + 1 for line in lines]
    total = 3 + sum(lines_tokens)
    while lines and total > room:
        total -= lines_tokens.pop()
        lines.pop()
        elements.pop()
    used = count_tokens(context_text(lines, [])) if lines else 0
    return lines, fit_chunks(chunks, budget - used - 2, count_tokens, sizes)  # 2: the "Sources:" header


def fit_context(r: Retrieval, lines: list[str], budget: int, count_tokens) -> None:
    """The context as text in ``r.context``, measured whole: its last chunk, then its last graph line (and element),
    dropped until it fits ``budget``; its size in ``r.context_tokens``."""
    r.context = context_text(lines, r.chunks)
    while r.context and count_tokens(r.context) > budget and (r.chunks or lines):
        if r.chunks:
            r.chunks.pop()
        else:
            lines.pop()
            r.elements.pop()         # the evidence is what the context holds: line k is element k
        r.context = context_text(lines, r.chunks)
    r.context_tokens = count_tokens(r.context) if r.context else 0
