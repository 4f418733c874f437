"""mKG-RAG: retrieval-augmented answering over per-document multimodal KGs.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for
Knowledge-intensive VQA", Section 3.2, as the ``mkgrag`` method of ``kgqa.core.method``. The
offline half (Section 3.1: segmentation, textual and visual graph extraction, vision-text
matching, per-document KGs) is ``kgqa.loaders.documents`` (``kgqa load documents DIR``).

Read top to bottom, ``answer`` is Section 3.2:

    query      q = question ‖ what the image shows (VisionModel.recognize; none without an image)
    3.2.1      stage 1 (Eq. 2): the top Kd documents by cos(E(q), E(document)), the exact cosine of the
               candidates of the ``document_embedding`` and ``chunk_embedding`` vector indexes (each asked
               for ``ef`` ≥ Kd: the approximate index asked for Kd alone misses the nearest documents);
               by default a document scores the better of that and its best chunk's cosine (``doc_score``)
    3.2.2      stage 2: G_m = the KGs of those Kd documents, merged online (only those);
               G_r^0 = the top Kg entities and relations of G_m by cos(E(q), f), f the embedding
               of the entity (name + description) or relation (head, tail, summary), or of the image
               region matched to it when that is closer (the multimodal (n, v) / (e, r) of Eq. 1),
               computed in Cypher over G_m (Neo4j 5.26's vector index cannot pre-filter)
    Eq. 3      G_r^l = breadth-first expansion of G_r^0 for l hops inside G_m, keeping only the
               neighbours whose cosine to the query exceeds ``threshold``
    context    the graph elements of G_r^l (entities, relations, regions) then their source chunks,
               best first (with ``ranker=learned`` the first ``rerank_k`` in the passage ranker's order),
               within ``budget`` tokens (``chunk_share`` of it kept for the chunks), in a delimited data block
    answer     VisionModel(image, question, context), or the ChatModel without an image (``reader=llm``,
               the default when a chat server is configured); without one, the CPU reader: the learned span
               reader (learned.py; the rule reader, reader.py, when its checkpoint cannot load or with
               ``reader=rules``): a typed span of the context, with its supporting sentence, or abstention

Where the paper and the public reference code (xandery-geek/mKG-RAG) differ, we follow the paper:
* the reference recalls documents by CLIP image-to-image similarity and retrieves graph elements by
  the image alone; the paper's QM-Retriever (Eq. 4–6) encodes image and question together, and is not
  in the repository. On this CPU stack the query encoder is all-MiniLM-L6-v2 over the question plus
  the name of what the image shows (the reference-image stand-in recognises it): a text stand-in for
  the multimodal query, named as such in the answer's details (``query_encoder``);
* the reference's "l-hop BFS with threshold" is a 1-hop expansion whose threshold (cosine > 0.5, keep
  ≥ 3) is switched off by a typo; here l is an option and the threshold is applied;
* the reference orders the final context by node degree; we order it by similarity to the query.

Where we go beyond the paper (measured in docs/benchmarks.md, the paper's reading one option away):
* stage 1's ``doc_score=maxp`` (MaxP, Dai and Callan, arXiv:1905.09217): E(document) holds a document's title,
  captions and first 256 word pieces only, so Eq. 2 alone misses a long document asked about its later
  parts; ``doc_score=document`` is Eq. 2 as written.
* the order of the context's chunks (``ranker=learned``): the paper puts G_r's source chunks in the order of
  the elements citing them; here the first ``rerank_k`` are put in the order of a learned passage ranker
  (``kgqa.models.passage_ranker``: a cross-encoder over question and chunk, monoBERT, arXiv:1901.04085, on
  all-MiniLM-L6-v2, trained on SQuAD training paragraphs), so the budget holds the chunks that answer; the
  learned reader adds ``rank_weight`` times a chunk's ranker score to its spans' margins (a retrieval prior,
  as BERTserini, arXiv:1902.01718, weighs its retriever's score). ``ranker=none`` is the paper's order. The
  default since 2026-12-06, with the learned reader and ``chunk_share`` 0.75: on the SQuAD training sample's
  held-out articles it answers more than the rule reader with the paper's order (docs/benchmarks.md).
* abstention by the passage ranker (``rank_abstain``, CPU readers only, off by default): when the ranker scores
  no candidate chunk as answering the question, the CPU reader abstains instead of reading a guess from the
  best of them. The paper's MLLM always answers; a served LLM still does here. Off by default because it
  costs 1.25 EM on SQuAD dev's open setting for halving the answers given to unanswerable questions
  (docs/benchmarks.md).

Interpretations where the paper is silent (also noted where they happen):
* Kg counts entities and relations together (the paper's "top Kg best-matched candidates").
* The expansion frontier of hop 1 is G_r^0's entities and the endpoints of its relations.
* ``threshold`` (default 0.3) is a cosine of all-MiniLM-L6-v2 embeddings: question-to-statement
  cosines of this encoder are low (0.2–0.6 for relevant facts), so the reference's 0.5 keeps
  almost nothing.
* Answer fallback of the LLM reader (the paper has none; a model answered but unusably, or
  ``reader=llm`` under ``KGQA_CHAT_BACKEND=none``): the name of the best-ranked retrieved entity that
  the question and the recognised image name do not already mention; no entity → abstain. Without a
  chat server (``local`` or ``none``) ``reader=auto`` is the CPU reader, which needs no fallback.

Ablations (Table 7): ``chunks_only`` (naive RAG: the top chunks of the Kd documents, no graph; with
``ranker=learned`` the passage ranker orders the cosine's first ``rerank_k`` of them as it orders mKG-RAG's),
``no_expansion`` (G_r^0 only), ``no_visual_graph`` (regions neither scored nor shown).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kgqa.methods.mkgrag import prompts as P
from kgqa.methods.mkgrag.evidence import chunk_evidence, figures_of, locate, render, support_of
from kgqa.methods.mkgrag.learned import learned_read
from kgqa.methods.mkgrag.reader import Reading, read
from kgqa.core.errors import BadModelReply, InvalidInput
from kgqa.core.kg import cos_from_neo4j
from kgqa.core.result import (CHUNK_SECTIONS, CONTEXT_TOKENS, DOCUMENT_IDS, Answer, EdgeRef, Fallback, NodeRef,
                              SubgraphEvidence)
from kgqa.core.method import BaseMethod


class MKGRAGOptions(BaseModel):
    """Hyperparameters (Section 4.1: Kd = 10, Kg = 10, l = 1) and the ablations of Table 7."""

    model_config = ConfigDict(extra="forbid")

    Kd: int = Field(10, ge=1, le=1000, description="documents recalled by stage 1 (Eq. 2)")
    Kg: int = Field(10, ge=1, le=1000, description="entities and relations retrieved from the query-specific graph")
    ef: int = Field(200, ge=1, le=10_000, description="stage 1: candidates asked of the document and chunk "
                                                       "vector indexes (HNSW's beam; at least Kd) before the "
                                                       "exact cosine ranks them")
    doc_score: Literal["maxp", "document"] = Field("maxp", description="stage 1's document score: maxp (the "
                                                   "better of the document's cosine and its best chunk's: MaxP, "
                                                   "arXiv:1905.09217; SQuAD dev open setting: document recall 90.0 "
                                                   "-> 98.1, EM 41.5 -> 45.0, docs/benchmarks.md) or document (the "
                                                   "paper's Eq. 2 alone: the cosine of the document's embedding, "
                                                   "which holds its title, captions and first 256 word pieces)")
    l: int = Field(1, ge=0, le=4, description="hops of subgraph expansion (Eq. 3)")
    threshold: float = Field(0.3, ge=-1.0, le=1.0, description="expansion keeps neighbours whose cosine to the "
                                                               "query exceeds this")
    budget: int = Field(800, ge=50, le=100_000, description="context tokens (LLM tokenizer): graph elements, "
                                                            "then source chunks")
    chunk_share: float = Field(0.75, ge=0.0, le=1.0, description="share of the budget kept for G_r's source "
                               "chunks (the paper's 'associated textual chunks'); the graph lines get the rest, and "
                               "the chunks take what the lines leave (0: lines first, as before 2026-12-05; 0.75 chosen with the "
                               "passage ranker and the learned reader on held-out SQuAD training articles, 0.5 "
                               "before 2026-12-06)")
    shared_norm_budget: int = Field(2400, ge=50, le=100_000, description="context tokens when the learned reader "
                                    "reads a shared-normalised checkpoint (its span scores compare across "
                                    "passages, so it can read more chunks): replaces budget; 2400 (with a share "
                                    "of 0.75: ~6 chunks) chosen on SQuAD dev articles 0-3 (docs/benchmarks.md)")
    shared_norm_chunk_share: float = Field(0.75, ge=0.0, le=1.0, description="chunk_share when the learned reader "
                                           "reads a shared-normalised checkpoint")
    ranker: Literal["learned", "none"] = Field("learned", description="the order of the candidate chunks: none "
                                               "(the paper's: the best citing element's rank, then the chunk's "
                                               "cosine; chunks-only: the cosine) or learned (the first rerank_k by the "
                                               "passage ranker, a cross-encoder fine-tuned on SQuAD training "
                                               "paragraphs, kgqa.models.passage_ranker; its checkpoint from "
                                               "ranker_checkpoint, else <data dir>/models/ranker/, else the shipped "
                                               "data/ranker/; one fallback line and the order of none when it cannot "
                                               "load). SQuAD dev open setting with the learned reader and "
                                               "chunk_share 0.75: EM 45.0 -> 49.2 (chunks-only, which it orders "
                                               "too, 38.1 -> 45.6), docs/benchmarks.md")
    ranker_checkpoint: str = Field("", description="passage ranker: its checkpoint file (empty: the default)")
    rank_weight: float = Field(2.0, ge=0.0, le=100.0, description="with ranker=learned, the learned reader: a "
                               "span's margin gains this times its chunk's ranker score minus the best chunk's (0: "
                               "the ranker only orders the chunks; 2 chosen among 0, 0.5, 2, 5 on the SQuAD training "
                               "sample's held-out articles, docs/benchmarks.md)")
    rank_abstain: float | None = Field(None, ge=-100.0, le=100.0, description="CPU readers, with ranker=learned: "
                                       "abstain when the passage ranker's best score over the candidate chunks is "
                                       "below this (no retrieved chunk answers the question); default off. For the "
                                       "shipped ranker, -0.5 (the highest at which EM on the SQuAD training sample's "
                                       "held-out articles falls at most 0.5 point) halves the answers given to "
                                       "questions no loaded document answers and costs 1.25 EM on SQuAD dev, "
                                       "docs/benchmarks.md; off (or none): never")
    abstain: bool = Field(True, description="CPU readers: abstain where the reader finds no answer it trusts "
                          "(below its threshold, where the question's names are absent, by rank_abstain); false "
                          "(--no-abstain): give the best candidate all the same, as the paper's MLLM always answers")
    rerank_k: int = Field(10, ge=1, le=200, description="candidate chunks the passage ranker reads (the rest keep "
                                                         "their order after them)")
    naive_k: int = Field(5, ge=1, le=100, description="chunks retrieved by the chunks-only baseline")
    max_tokens: int = Field(48, ge=4, le=512, description="answer tokens")
    reader: Literal["auto", "cpu", "learned", "rules", "llm"] = Field(
        "auto", description="who answers from the context: llm (the paper's generation); learned (the span "
        "reader, learned.py: all-MiniLM-L6-v2 fine-tuned on SQuAD, its checkpoint from reader_checkpoint, else "
        "<data dir>/models/reader/, else the shipped data/reader/; a checkpoint that cannot load falls back to "
        "rules in one line); rules or cpu (the rule reader, reader.py: word-cosine rules, the CPU default before "
        "2026-12-06); auto: llm when a chat server is configured (openai | vllm), else learned")
    reader_checkpoint: str = Field("", description="learned reader: its checkpoint file (empty: the default)")
    reader_threshold: float | None = Field(None, ge=-100.0, le=100.0, description="learned reader: abstain when "
                                           "the best span's margin over no-answer is lower (default: the "
                                           "checkpoint's, chosen on held-out training articles)")
    reader_passages: Literal["chunk", "paragraph"] = Field(
        "chunk", description="learned reader: what it reads as one passage: each chunk's prose, or each paragraph of "
        "it (the unit it was trained on), with the passage ranker's prior taken per paragraph; for documents loaded "
        "with --paragraphs (SQuAD dev open, 1,440 q: EM 46.25 -> 49.72; the bundled documents 82 percent "
        "either way on onnxruntime; docs/benchmarks.md). A table row is always a passage of its own")
    min_sentence_cos: float = Field(0.3, ge=-1.0, le=1.0, description="cpu reader: abstain when the supporting "
                                                                      "sentence's cosine to the question is lower")
    chunks_only: bool = Field(False, description="ablation: naive RAG over chunks of the Kd documents (no graph)")
    no_expansion: bool = Field(False, description="ablation: no subgraph expansion (G_r^0 only)")
    no_visual_graph: bool = Field(False, description="ablation: image regions neither scored nor put in context")

    @field_validator("rank_abstain", mode="before")
    @classmethod
    def _off(cls, v):
        """``-o rank_abstain=off`` (or none, null): no abstention by the ranker."""
        return None if isinstance(v, str) and v.strip().lower() in ("off", "none", "null") else v


@dataclass
class Element:
    """One graph element of G_r (an entity or a relation) with its cosine to the query."""

    kind: str                         # entity | relation
    id: str
    doc_id: str
    text: str                         # the line put in the context
    sim: float                        # cosine (converted from Neo4j's (1 + cos) / 2)
    chunk_ids: list[str]
    name: str = ""
    head_id: str | None = None
    tail_id: str | None = None
    region: dict | None = None
    hop: int = 0                      # 0 = G_r^0, k = added by expansion hop k
    phrase: str = ""                  # a relation's words that state it, and its relation catalogue name (CPU
    relation_name: str = ""           # extractor; empty from the LLM extractor)


@dataclass
class Retrieval:
    query_text: str
    image_note: str | None
    documents: list[dict] = field(default_factory=list)       # {id, title, cos}
    elements: list[Element] = field(default_factory=list)
    chunks: list[dict] = field(default_factory=list)          # in the context, best first
    context: str = ""
    context_tokens: int = 0
    fallbacks: list[Fallback] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    scope: list[str] = field(default_factory=list)             # the --doc/--docs scope, when given
    rank_scores: dict[str, float] = field(default_factory=dict)  # chunk id -> passage ranker's score (those ranked)


class MKGRAG(BaseMethod):
    """Dual-stage retrieval over per-document multimodal KGs, then generation (Section 3.2)."""

    name: ClassVar[str] = "mkgrag"
    title: ClassVar[str] = ("mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented "
                            "Generation for Knowledge-intensive VQA")
    arxiv: ClassVar[str | None] = None
    Options: ClassVar[type[BaseModel]] = MKGRAGOptions
    ablations: ClassVar[tuple[str, ...]] = ("chunks_only", "no_expansion", "no_visual_graph")
    grounds_start_entity: ClassVar[bool] = False     # retrieval starts from documents, not an entity
    scoped_by_documents: ClassVar[bool] = True       # Query.documents restricts stage 1 (--doc, --docs)

    def __init__(self, ctx, options: MKGRAGOptions | None = None):
        super().__init__(ctx, options)
        self._count_tokens = None

    # ========================================================================= Section 3.2
    @property
    def learned_reader(self) -> bool:
        """The CPU reader is the learned span reader (``reader=learned``, or ``auto`` without a chat server)."""
        return self.reader == "cpu" and self.opt.reader in ("learned", "auto")

    @property
    def reader(self) -> str:
        """cpu | llm (the ``reader`` option; auto: llm when a chat server is configured, else the learned CPU
        reader; learned and rules are CPU readers)."""
        if self.opt.reader in ("learned", "rules"):
            return "cpu"
        if self.opt.reader != "auto":
            return self.opt.reader
        return "llm" if getattr(self.settings, "chat_backend", None) in ("openai", "vllm") else "cpu"

    def span_reader(self):
        """The learned span reader (loaded once per process and checkpoint), or (None, why) when it cannot be used."""
        from kgqa.models.bert_runtime import runtime_of
        from kgqa.models.span_reader import SpanReaderUnavailable, default_checkpoint, load_reader

        path = self.opt.reader_checkpoint or default_checkpoint(self.settings)
        try:
            return load_reader(path, **runtime_of(self.settings)), None
        except SpanReaderUnavailable as e:
            return None, str(e)

    def passage_ranker(self):
        """The learned passage ranker (loaded once per process and checkpoint), or (None, why) when it cannot be used."""
        from kgqa.models.bert_runtime import runtime_of
        from kgqa.models.passage_ranker import PassageRankerUnavailable, default_checkpoint, load_ranker

        path = self.opt.ranker_checkpoint or default_checkpoint(self.settings)
        try:
            return load_ranker(path, **runtime_of(self.settings)), None
        except PassageRankerUnavailable as e:
            if self.opt.ranker_checkpoint:    # a file the user named is not ignored silently
                raise InvalidInput(f"mkgrag option ranker_checkpoint: {e}") from None
            return None, str(e)

    def context_budget(self) -> tuple[int, float]:
        """(context tokens, the chunks' share of them): ``budget`` and ``chunk_share``, or the ``shared_norm_``
        ones when the learned reader reads a checkpoint trained with shared normalisation (its metadata says
        so; ``kgqa.models.span_reader``): its span scores compare across passages, so more chunks may reach it.
        An older checkpoint, the rule reader and an LLM keep ``budget``."""
        o = self.opt
        if self.learned_reader:
            model, _ = self.span_reader()
            if model is not None and model.shared_norm:
                return o.shared_norm_budget, o.shared_norm_chunk_share
        return o.budget, o.chunk_share

    def solve(self, query) -> Answer:
        r = self.retrieve(query.question, query.image, scope=getattr(query, "documents", ()))
        t = time.perf_counter()
        if self.reader == "cpu":
            reading = self.read(query.question, r)
            r.timings["read"] = time.perf_counter() - t
            return self.to_answer(query.question, reading.answer, r, reading=reading)
        text, fb = self.generate(query.question, query.image, r)
        r.timings["generate"] = time.perf_counter() - t
        if fb:
            r.fallbacks.append(fb)
        return self.to_answer(query.question, text, r, answer_fallback=fb is not None)

    def read(self, question: str, r: Retrieval) -> Reading:
        """The CPU reader over the same context the LLM would get: the learned span reader (learned.py; the rule
        reader when its checkpoint cannot be used), or with ``reader=rules`` (or ``cpu``) the rule reader (reader.py)."""
        if self.learned_reader:
            model, why = self.span_reader()
            if model is not None:
                by_paragraph = self.opt.reader_passages == "paragraph"
                reading = learned_read(model, question, r.chunks, r.elements, image_note=r.image_note,
                                       titles={d["id"]: d["title"] for d in r.documents[:1]},
                                       doc_titles={d["id"]: d["title"] for d in r.documents},
                                       threshold=self.opt.reader_threshold, prior=r.rank_scores,
                                       prior_weight=self.opt.rank_weight,
                                       by_paragraph=by_paragraph,
                                       rank_passages=self._passage_scorer(r) if by_paragraph else None)
                reading.cpu_reader = "learned"
                return self._settle(reading, r)
            r.fallbacks.append(Fallback("reader", f"learned reader unavailable ({why}); the rule reader answers"))
        return self._settle(read(question, r.chunks, r.elements, self.kg.embed, image_note=r.image_note,
                                 titles={d["id"]: d["title"] for d in r.documents[:1]},
                                 doc_cos={d["id"]: d["cos"] for d in r.documents},
                                 doc_titles={d["id"]: d["title"] for d in r.documents},
                                 min_sentence_cos=self.opt.min_sentence_cos), r)

    def _passage_scorer(self, r: Retrieval):
        """The passage ranker's scoring of the reader's passages (its prior per passage), where the ranker ordered
        this question's chunks; else None (the reader keeps no prior or its chunk's)."""
        if not r.rank_scores:
            return None
        ranker, _ = self.passage_ranker()
        if ranker is None:
            return None

        def score(passages: list[str]):
            t = time.perf_counter()
            out = ranker.score(r.query_text, passages)        # as the chunks were: the question and the image's note
            r.timings["rank"] = r.timings.get("rank", 0.0) + time.perf_counter() - t
            return out
        return score

    def _settle(self, reading: Reading, r: Retrieval) -> Reading:
        """The CPU reader's abstentions beyond its own: with ``rank_abstain`` it abstains when the passage ranker
        finds no candidate chunk that answers the question (its best score below the bar: a span read there is
        a guess, "Who founded the company that builds the rocket?" over a page that never names a founder).
        With ``abstain=false`` (``--no-abstain``) it never abstains: the best candidate is the answer, and the
        reason says what it would have abstained for."""
        t, best = self.opt.rank_abstain, max(r.rank_scores.values(), default=None)
        if reading.answer is not None and t is not None and best is not None and best < t:
            reading = replace(reading, answer=None, reason=f"abstained: no retrieved chunk answers the question by "
                                                           f"the passage ranker (best score {best:.2f} < {t:.2f})")
        if not self.opt.abstain and reading.answer is None and reading.candidate is not None:
            reading = replace(reading, answer=reading.candidate.text,
                              reason=f"answered with abstention off (it would have {reading.reason})")
        return reading

    def retrieve(self, question: str, image=None, scope: tuple[str, ...] = ()) -> Retrieval:
        """Stages 1 and 2 and the context; ``scope``: stage 1 ranks only these documents (exact cosine)."""
        o = self.opt
        budget, chunk_share = self.context_budget()
        t = time.perf_counter()
        # the multimodal query (I_q, q): the question plus what the image shows
        note = None
        fallbacks: list[Fallback] = []
        if image is not None:
            try:
                note = self.vision.recognize(image, "the main subject of the image")
            except BadModelReply as e:
                fallbacks.append(Fallback(e.code, f"image not recognised; the query is the question alone ({e})"))
        qtext = f"{question} {note}" if note else question
        qvec = self.kg.embed([qtext])[0].tolist()
        r = Retrieval(query_text=qtext, image_note=note, fallbacks=fallbacks)
        r.timings["query"] = time.perf_counter() - t

        # ---- 3.2.1 stage 1 (Eq. 2): top Kd documents
        t = time.perf_counter()
        maxp = o.doc_score == "maxp"
        rows = (self.graph.read("mkgrag_document_search_scoped", vector=qvec, k=o.Kd, doc_ids=list(scope), maxp=maxp)
                if scope else self.graph.read("mkgrag_document_search", vector=qvec, k=o.Kd, ef=max(o.ef, o.Kd),
                                              maxp=maxp))
        r.scope = list(scope)
        r.documents = [{"id": d["id"], "title": d["title"], "cos": round(cos_from_neo4j(d["score"]), 4)} for d in rows]
        doc_ids = [d["id"] for d in r.documents]
        r.timings["stage1"] = time.perf_counter() - t
        if not doc_ids:
            r.fallbacks.append(Fallback("graph", "no documents loaded (kgqa load documents DIR)"))
            return r

        t = time.perf_counter()
        graph_lines: list[str] = []
        if o.chunks_only:
            # ablation "w/o graph retrieval": naive chunk retrieval over the same Kd documents
            k = max(o.naive_k, o.rerank_k) if o.ranker != "none" else o.naive_k
            chunks = self.graph.read("mkgrag_chunk_search", doc_ids=doc_ids, vector=qvec, k=k)
            chunks = self._rank_chunks(qtext, chunks, r)[:o.naive_k]
            r.chunks = self._fit_chunks(chunks, budget=budget)
            r.context = self._context([], r.chunks)
        else:
            # ---- 3.2.2 stage 2: G_r^0 = top Kg entities and relations of G_m (the Kd documents' KGs)
            visual = not o.no_visual_graph
            ents = self.graph.read("mkgrag_graph_entities", doc_ids=doc_ids, vector=qvec, k=o.Kg, visual=visual)
            rels = self.graph.read("mkgrag_graph_relations", doc_ids=doc_ids, vector=qvec, k=o.Kg, visual=visual)
            cands = [self._entity(e, 0) for e in ents] + [self._relation(x, 0) for x in rels]
            cands.sort(key=lambda el: (-el.sim, el.id))
            elements = cands[:o.Kg]          # Kg counts entities and relations together (interpretation)
            # ---- Eq. 3: l-hop BFS inside G_m, keeping neighbours above the threshold
            if not o.no_expansion and o.l > 0:
                elements = self._expand(elements, doc_ids, qvec)
            r.elements = elements
            # ---- context: graph elements first, then their source chunks, within the budget
            chunk_rank = self._chunk_order(elements)
            chunks = self.graph.read("mkgrag_chunks", ids=list(chunk_rank), vector=qvec) if chunk_rank else []
            chunks.sort(key=lambda c: (chunk_rank[c["id"]], -c["sim"]))
            chunks = self._rank_chunks(qtext, chunks, r)
            graph_lines = self._lines(elements)
            # the best source chunks keep their share of the budget: the graph lines, which restate them, are
            # cut to the rest (line k is element k: the evidence is what the context holds). Counted line by
            # line: an expansion in a large document can bring thousands of lines.
            sizes = {c["id"]: self._chunk_tokens(c) for c in chunks}              # counted once, fitted twice
            kept = self._fit_chunks(chunks, int(budget * chunk_share), sizes) if chunk_share > 0 else []
            room = budget - sum(sizes[c["id"]] for c in kept) - 4                  # 4: the two headers
            lines_tokens = [self.count_tokens(f"- {line}") + 1 for line in graph_lines]
            total = 3 + sum(lines_tokens)
            while graph_lines and total > room:
                total -= lines_tokens.pop()
                graph_lines.pop()
                elements.pop()
            used = self.count_tokens(self._context(graph_lines, [])) if graph_lines else 0
            r.chunks = self._fit_chunks(chunks, budget - used - 2, sizes)   # 2: the "Sources:" header
            r.context = self._context(graph_lines, r.chunks)
        # Token counts of the parts do not add up exactly to the joined text's (tokens merge at the
        # joins): measure the context itself and drop the last chunk, then the last graph line,
        # until it fits the budget.
        while r.context and self.count_tokens(r.context) > budget and (r.chunks or graph_lines):
            if r.chunks:
                r.chunks.pop()
            else:
                graph_lines.pop()
                r.elements.pop()         # the evidence is what the context holds: line k is element k
            r.context = self._context(graph_lines, r.chunks)
        r.context_tokens = self.count_tokens(r.context) if r.context else 0
        r.timings["stage2"] = time.perf_counter() - t
        return r

    def _expand(self, elements: list[Element], doc_ids: list[str], qvec) -> list[Element]:
        have = {el.id for el in elements}
        frontier = list(dict.fromkeys(
            [el.id for el in elements if el.kind == "entity"]
            + [x for el in elements if el.kind == "relation" for x in (el.head_id, el.tail_id)]))
        seen_entities = set(frontier)
        min_sim = (1.0 + self.opt.threshold) / 2.0        # the threshold as Neo4j's (1 + cos) / 2
        for hop in range(1, self.opt.l + 1):
            if not frontier:
                break
            rows = self.graph.read("mkgrag_expand", ids=frontier, doc_ids=doc_ids, vector=qvec, min_sim=min_sim)
            nxt = []
            for row in rows:
                if row["id"] not in seen_entities:
                    seen_entities.add(row["id"])
                    nxt.append(row["id"])
                    if row["id"] not in have:
                        elements.append(self._entity(row, hop))
                        have.add(row["id"])
                if row["rel_id"] not in have:
                    elements.append(self._relation({"id": row["rel_id"], "doc_id": row["doc_id"],
                                                    "head_id": row["head_id"], "head": row["head"],
                                                    "tail_id": row["tail_id"], "tail": row["tail"],
                                                    "summary": row["summary"], "chunk_ids": row["rel_chunk_ids"],
                                                    "phrase": row.get("rel_phrase"),
                                                    "relation_name": row.get("rel_relation_name"),
                                                    "sim": row["rel_sim"], "region": None}, hop))
                    have.add(row["rel_id"])
            frontier = nxt
        return elements

    # ------------------------------------------------------------------ elements
    def _entity(self, row: dict, hop: int) -> Element:
        desc = " ".join((row.get("description") or "").split())
        line = f"entity: {row['name']} ({row.get('type') or 'entity'}): {desc}"
        region = row.get("region") if not self.opt.no_visual_graph else None
        if region and region.get("bbox"):
            b = region["bbox"]
            line += f" [depicted in an image as {region.get('category')!r}, region ({b[0]:.2f}, {b[1]:.2f}, " \
                    f"{b[2]:.2f}, {b[3]:.2f})]"
        return Element("entity", row["id"], row["doc_id"], line, cos_from_neo4j(row["sim"]),
                       list(row.get("chunk_ids") or []), name=row["name"], region=region, hop=hop)

    def _relation(self, row: dict, hop: int) -> Element:
        line = f"relation: {row['head']} -> {row['tail']}: {' '.join((row.get('summary') or '').split())}"
        region = row.get("region") if not self.opt.no_visual_graph else None
        if region and region.get("bbox"):
            line += f" [depicted in an image as {region.get('category')!r}]"
        return Element("relation", row["id"], row["doc_id"], line, cos_from_neo4j(row["sim"]),
                       list(row.get("chunk_ids") or []), name=f"{row['head']} -> {row['tail']}",
                       head_id=row["head_id"], tail_id=row["tail_id"], region=region, hop=hop,
                       phrase=row.get("phrase") or "", relation_name=row.get("relation_name") or "")

    @staticmethod
    def _lines(elements: list[Element]) -> list[str]:
        """The context lines of G_r; a relation whose summary an earlier line already gave (the CPU extractor's
        relations of one sentence share it) is shortened to its head and tail, leaving budget for chunks."""
        seen: set[str] = set()
        out = []
        for el in elements:
            if el.kind == "relation":
                head, summary = el.text.split(": ", 2)[:2], el.text.split(": ", 2)[-1]
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

    @staticmethod
    def _chunk_order(elements: list[Element]) -> dict[str, int]:
        """Source chunks in the order of the best element citing them."""
        order: dict[str, int] = {}
        for rank, el in enumerate(sorted(elements, key=lambda e: -e.sim)):
            for cid in el.chunk_ids:
                order.setdefault(cid, rank)
        return order

    def _rank_chunks(self, query_text: str, chunks: list[dict], r: Retrieval) -> list[dict]:
        """The first ``rerank_k`` candidate chunks in the passage ranker's order, the rest after them in theirs
        (beyond the paper, whose context orders chunks by the graph elements citing them)."""
        o = self.opt
        if o.ranker == "none" or not chunks:
            return chunks
        ranker, why = self.passage_ranker()
        if ranker is None:
            r.fallbacks.append(Fallback("ranker", f"passage ranker unavailable ({why}); the chunks keep the "
                                                  "retrieval order"))
            return chunks
        t = time.perf_counter()
        head = chunks[:o.rerank_k]
        scores = ranker.score(query_text, [c["text"] for c in head])
        order = sorted(range(len(head)), key=lambda k: -float(scores[k]))
        r.timings["rank"] = time.perf_counter() - t
        r.rank_scores = {c["id"]: float(x) for c, x in zip(head, scores)}
        return [head[k] for k in order] + chunks[o.rerank_k:]

    # ------------------------------------------------------------------ context
    @property
    def count_tokens(self):
        if self._count_tokens is None:
            from kgqa.models.gguf import llm_token_counter

            self._count_tokens = llm_token_counter(self.settings)
        return self._count_tokens

    @count_tokens.setter
    def count_tokens(self, counter) -> None:
        """Another token counter for the budget (benchmarks that do not time the LLM's tokenizer)."""
        self._count_tokens = counter

    def _chunk_tokens(self, c: dict) -> int:
        return self.count_tokens(f"[{c['title']}] {c['text']}") + 1      # as the chunk appears in the context

    def _fit_chunks(self, chunks: list[dict], budget: int, sizes: dict[str, int] | None = None) -> list[dict]:
        """The chunks, best first, that fit ``budget`` tokens (``sizes``: their counts by id, when known)."""
        out, used = [], 0
        for c in chunks:
            n = sizes[c["id"]] if sizes is not None else self._chunk_tokens(c)
            if used + n > budget:
                continue                       # a later, shorter chunk may still fit
            out.append({**c, "cos": round(cos_from_neo4j(c["sim"]), 4)})
            used += n
        return out

    @staticmethod
    def _context(graph_lines: list[str], chunks: list[dict]) -> str:
        parts = []
        if graph_lines:
            parts.append("Knowledge graph:\n" + "\n".join(f"- {line}" for line in graph_lines))
        if chunks:
            parts.append("Sources:\n" + "\n\n".join(f"[{c['title']}] {c['text']}" for c in chunks))
        return "\n\n".join(parts)

    # ------------------------------------------------------------------ answer generation
    def generate(self, question: str, image, r: Retrieval) -> tuple[str | None, Fallback | None]:
        try:
            if image is not None:
                reply = self.vision.generate_json(image, P.answer_prompt(question, r.context), P.GeneratedAnswer,
                                                  system=P.ANSWER_SYSTEM, max_tokens=self.opt.max_tokens)
            else:
                reply = self.chat.generate_json(P.answer_prompt(question, r.context), P.GeneratedAnswer,
                                                system=P.ANSWER_SYSTEM, max_tokens=self.opt.max_tokens)
            return reply.answer.strip() or None, None
        except BadModelReply as e:
            # Fallback (interpretation, the paper has none): the best-ranked retrieved entity that the
            # question and the recognised image name do not already mention.
            asked = f"{question} {r.image_note or ''}".casefold()
            for el in sorted(r.elements, key=lambda x: -x.sim):
                if el.kind == "entity" and el.name.casefold() not in asked:
                    return el.name, Fallback(e.code, f"answer: best-ranked retrieved entity {el.name!r} ({e})")
            return None, Fallback(e.code, f"answer: abstained, no retrieved entity to fall back on ({e})")

    # ------------------------------------------------------------------ result
    def to_answer(self, question: str, text: str | None, r: Retrieval, answer_fallback: bool = False,
                  reading: Reading | None = None) -> Answer:
        evidence: list = []
        titles = {d["id"]: d["title"] for d in r.documents}
        support = support_of(text, r.chunks, reading)
        cited = support["chunk_id"] if support else None
        in_context = {c["id"]: c for c in r.chunks}
        figures = []
        if cited:
            rows = [] if cited in in_context else self.graph.read("mkgrag_chunk_pages", id=cited)
            support = locate(support, in_context.get(cited) or (rows[0] if rows else None))
            figures = figures_of(in_context.get(cited) or (rows[0] if rows else {}))
        for rank, c in enumerate(r.chunks, 1):
            ours = c["id"] == cited
            evidence.append(chunk_evidence(c, rank, f"{c['title']} / {', '.join(c.get('sections') or [])}",
                                           support["sentence"] if ours else None,
                                           support.get("section") if ours else None))
        if cited and cited not in in_context:
            # read from a node of G_r whose source chunk the budget left out of the context: cite it all the same
            row = {"id": cited, "doc_id": support["doc_id"], "text": support["sentence"], **(rows[0] if rows else {})}
            ev = chunk_evidence(row, len(r.chunks) + 1, titles.get(support["doc_id"]), support["sentence"],
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
                                             note=f"G_r over {len(r.documents)} documents (Kg={self.opt.Kg}, "
                                                  f"l={0 if self.opt.no_expansion else self.opt.l})"))
        answer_id = None
        if text and r.elements:
            ent_ids = [el.id for el in r.elements if el.kind == "entity"]
            for row in self.graph.read("mkgrag_same_as", ids=ent_ids) if ent_ids else []:
                if row["name"].strip().casefold() == text.strip().casefold():
                    answer_id = row["entity_id"]
                    break
        o = self.opt
        variant = "chunks only (naive RAG)" if o.chunks_only else "dual-stage graph retrieval"
        if reading is not None:
            why = reading.reason if (text or reading.reason.startswith("abstained")) else f"abstained: {reading.reason}"
            stop = f"{why} ({reading.cpu_reader} cpu reader, answer type {reading.answer_type})"
        else:
            stop = ("abstained" if not text else "fallback: best-ranked retrieved entity" if answer_fallback
                    else "answered from the retrieved context")
        return Answer(
            question=question, answer=text, method=self.name, answer_id=answer_id,
            evidence=evidence, sufficient=None,
            stop_reason=f"{stop} · {variant}",
            hops=0 if (o.no_expansion or o.chunks_only) else o.l, fallbacks=r.fallbacks,
            details={
                "query": r.query_text, "image_note": r.image_note,
                "query_encoder": "all-MiniLM-L6-v2 over question + recognised image name (text stand-in for "
                                 "the QM-Retriever)",
                "documents": r.documents, "scope": r.scope or None,
                DOCUMENT_IDS: [d["id"] for d in r.documents],
                "elements": [{"kind": el.kind, "id": el.id, "doc_id": el.doc_id, "name": el.name,
                              "cos": round(el.sim, 4), "hop": el.hop, "region": bool(el.region)}
                             for el in r.elements],
                "chunk_ids": [c["id"] for c in r.chunks],
                # the passage ranker's score of each context chunk it ordered (empty: the paper's order)
                "chunk_rank_scores": {c["id"]: round(r.rank_scores[c["id"]], 4) for c in r.chunks
                                      if c["id"] in r.rank_scores},
                CHUNK_SECTIONS: [{"id": c["id"], "doc_id": c["doc_id"], "sections": c.get("sections") or []}
                                   for c in r.chunks],
                CONTEXT_TOKENS: r.context_tokens, "budget": self.context_budget()[0],
                "timings": {k: round(v, 4) for k, v in r.timings.items()},
                "titles": titles,
                "reader": "cpu" if reading is not None else "llm",
                "cpu_reader": reading.cpu_reader if reading is not None else None,
                "answer_type": reading.answer_type if reading is not None else None,
                # the CPU reader's best candidate's score (the learned reader: its margin with the question's
                # adjustments), also when it abstained
                "reader_score": (reading.candidate.score if reading is not None and reading.candidate is not None
                                 else None),
                "support": support,
                "figures": figures,
            },
        )

    def render(self, answer: Answer) -> list[str]:
        """The mKG-RAG lines of ``kgqa ask`` (evidence.render): query, stage-1 documents, stage-2 elements,
        the supporting sentence and where it is, the context's size."""
        return render(answer)
