"""mKG-RAG's answer: the CPU readers' abstention beyond their own, and the ``Answer`` with its evidence.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA", Section 3.2. The paper's MLLM always answers; a served LLM still does here. The CPU readers abstain where
they find no answer they trust (their own thresholds), and ``settle`` adds two options beyond the paper:
``rank_abstain`` (abstain when the passage ranker scores no candidate chunk as answering the question) and
``abstain=false`` (``--no-abstain``: the best candidate all the same). ``to_answer`` builds the ``Answer``: each
context chunk as evidence (the supporting sentence's with its file, page and section), G_r as a subgraph, the
details ``kgqa ask`` prints (``evidence.render``) and ``kgqa eval`` reads.
"""

from __future__ import annotations

from dataclasses import asdict, replace

from kgqa.core.result import (CHUNK_SECTIONS, CONTEXT_TOKENS, DOCUMENT_IDS, Answer, EdgeRef, NodeRef,
                              SubgraphEvidence)
from kgqa.methods.mkgrag.evidence import chunk_evidence, figures_of, locate, support_of
from kgqa.methods.mkgrag.options import MKGRAGOptions
from kgqa.methods.mkgrag.records import Chunk, Reading, Retrieval


def settle(reading: Reading, rank_scores: dict[str, float], opt: MKGRAGOptions) -> Reading:
    """The CPU reader's abstentions beyond its own: with ``rank_abstain`` it abstains when the passage ranker
    finds no candidate chunk that answers the question (its best score below the bar: a span read there is
    a guess, "Who founded the company that builds the rocket?" over a page that never names a founder).
    With ``abstain=false`` (``--no-abstain``) it never abstains: the best candidate is the answer, and the
    reason says what it would have abstained for."""
    t, best = opt.rank_abstain, max(rank_scores.values(), default=None)
    if reading.answer is not None and t is not None and best is not None and best < t:
        reading = replace(reading, answer=None, reason=f"abstained: no retrieved chunk answers the question by "
                                                       f"the passage ranker (best score {best:.2f} < {t:.2f})")
    if not opt.abstain and reading.answer is None and reading.candidate is not None:
        reading = replace(reading, answer=reading.candidate.text,
                          reason=f"answered with abstention off (it would have {reading.reason})")
    return reading


def to_answer(question: str, reading: Reading, r: Retrieval, *, method: str, graph, opt: MKGRAGOptions,
              budget: int) -> Answer:
    """The ``Answer`` of ``reading`` over ``r`` (``method``: its name; ``graph``: where a cited chunk the context left
    out and the answer's KG entity are looked up; ``budget``: the context's token budget)."""
    text = reading.answer
    cpu = reading.reader_name != "llm"
    evidence: list = []
    titles = {d.id: d.title for d in r.documents}
    support = support_of(text, r.chunks, reading)
    cited = support["chunk_id"] if support else None
    in_context = {c.id: c for c in r.chunks}
    figures = []
    if cited:
        rows = [] if cited in in_context else graph.read("mkgrag_chunk_pages", id=cited)
        chunk = in_context.get(cited) or (Chunk.from_row(rows[0]) if rows else None)
        support = locate(support, chunk)
        figures = figures_of(chunk) if chunk is not None else []
    for rank, c in enumerate(r.chunks, 1):
        ours = c.id == cited
        evidence.append(chunk_evidence(c, rank, f"{c.title} / {', '.join(c.sections)}",
                                       support["sentence"] if ours else None,
                                       support.get("section") if ours else None))
    if cited and cited not in in_context:
        # read from a node of G_r whose source chunk the budget left out of the context: cite it all the same
        c = Chunk.from_row({"id": cited, "doc_id": support["doc_id"], "text": support["sentence"],
                            **(rows[0] if rows else {})})
        ev = chunk_evidence(c, len(r.chunks) + 1, titles.get(support["doc_id"]), support["sentence"],
                            support.get("section"))
        ev.text, ev.score = support["sentence"], None
        evidence.append(ev)
    if r.elements:
        nodes = [NodeRef("DocEntity", el.id, el.name, round(el.sim, 4)) for el in r.elements if el.kind == "entity"]
        named = {n.id for n in nodes}
        for el in r.elements:
            if el.kind == "relation":
                for nid in (el.head_id, el.tail_id):
                    if nid and nid not in named:
                        nodes.append(NodeRef("DocEntity", nid, "", None))
                        named.add(nid)
        edges = [EdgeRef("DocEntity", el.head_id, el.id, "DocEntity", el.tail_id, round(el.sim, 4),
                         name=el.name) for el in r.elements if el.kind == "relation"]
        evidence.append(SubgraphEvidence(nodes=nodes, edges=edges, rank=1,
                                         note=f"G_r over {len(r.documents)} documents (Kg={opt.Kg}, "
                                              f"l={0 if opt.no_expansion else opt.l})"))
    answer_id = None
    if text and r.elements:
        ent_ids = [el.id for el in r.elements if el.kind == "entity"]
        for row in graph.read("mkgrag_same_as", ids=ent_ids) if ent_ids else []:
            if row["name"].strip().casefold() == text.strip().casefold():
                answer_id = row["entity_id"]
                break
    variant = "chunks only (naive RAG)" if opt.chunks_only else "dual-stage graph retrieval"
    if cpu:
        why = reading.reason if (text or reading.reason.startswith("abstained")) else f"abstained: {reading.reason}"
        stop = f"{why} ({reading.reader_name} cpu reader, answer type {reading.answer_type})"
    else:
        stop = reading.reason
    return Answer(
        question=question, answer=text, method=method, answer_id=answer_id,
        evidence=evidence, sufficient=None,
        stop_reason=f"{stop} · {variant}",
        hops=0 if (opt.no_expansion or opt.chunks_only) else opt.l, fallbacks=r.fallbacks,
        details={
            "query": r.query_text, "image_note": r.image_note,
            "query_encoder": "all-MiniLM-L6-v2 over question + recognised image name (text stand-in for "
                             "the QM-Retriever)",
            "documents": [asdict(d) for d in r.documents], "scope": r.scope or None,
            DOCUMENT_IDS: [d.id for d in r.documents],
            "elements": [{"kind": el.kind, "id": el.id, "doc_id": el.doc_id, "name": el.name,
                          "cos": round(el.sim, 4), "hop": el.hop, "region": bool(el.region)}
                         for el in r.elements],
            "chunk_ids": [c.id for c in r.chunks],
            # the passage ranker's score of each context chunk it ordered (empty: the paper's order)
            "chunk_rank_scores": {c.id: round(r.rank_scores[c.id], 4) for c in r.chunks if c.id in r.rank_scores},
            CHUNK_SECTIONS: [{"id": c.id, "doc_id": c.doc_id, "sections": c.sections} for c in r.chunks],
            CONTEXT_TOKENS: r.context_tokens, "budget": budget,
            "timings": {k: round(v, 4) for k, v in r.timings.items()},
            "titles": titles,
            "reader": "cpu" if cpu else "llm",
            "cpu_reader": reading.reader_name if cpu else None,
            "answer_type": reading.answer_type if cpu else None,
            # the CPU reader's best candidate's score (the learned reader: its margin with the question's
            # adjustments), also when it abstained
            "reader_score": reading.candidate.score if cpu and reading.candidate is not None else None,
            "support": support,
            "figures": figures,
        },
    )
