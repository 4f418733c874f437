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
               the default when a chat server is configured); without one, a CPU reader: the learned
               reader (learned_reader.py; the rule reader, rule_reader.py, when its checkpoint cannot load or
               with ``reader=rules``): a typed span of the context, with its supporting sentence, or abstention

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
  (``kgqa.models.heads.passage_ranker``: a cross-encoder over question and chunk, monoBERT, arXiv:1901.04085, on
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

Where the pieces live: the options (``options``), the per-question records (``records``: ``Document``, ``Chunk``,
``Element``, ``Retrieval``, ``Reading``), stage 1 (``documents``), stage 2 and Eq. 3 (``subgraph``), the context
and its budget (``context``), the readers behind one interface (``reading``: ``Reader``, ``ReadRequest``; the
``llm_reader``, ``learned_reader`` and ``rule_reader``, the question's answer type in ``answer_types``), the
CPU readers' abstention and the ``Answer`` (``answer``), evidence and the ``kgqa ask`` lines (``evidence``), the
prompt (``prompts``). All state of one question is in its ``Retrieval``.
"""

from __future__ import annotations

import time
from typing import ClassVar

from pydantic import BaseModel

from kgqa.core.errors import BadModelReply, InvalidInput
from kgqa.core.method import BaseMethod
from kgqa.core.result import Answer, Fallback
from kgqa.methods.mkgrag.answer import settle, to_answer
from kgqa.methods.mkgrag.context import fit_context, fit_chunks, pack, rank_chunks, source_chunks
from kgqa.methods.mkgrag.documents import recall_documents
from kgqa.methods.mkgrag.evidence import render
from kgqa.methods.mkgrag.learned_reader import LearnedReader
from kgqa.methods.mkgrag.llm_reader import LLMReader
from kgqa.methods.mkgrag.options import MKGRAGOptions
from kgqa.methods.mkgrag.reading import Reader, ReadRequest
from kgqa.methods.mkgrag.records import Chunk, Reading, Retrieval
from kgqa.methods.mkgrag.rule_reader import RuleReader
from kgqa.methods.mkgrag.subgraph import retrieve_subgraph


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
    def solve(self, query) -> Answer:
        r = self.retrieve(query.question, query.image, scope=getattr(query, "documents", ()))
        t = time.perf_counter()
        reading = self.read(query.question, r, query.image)
        r.timings["generate" if reading.reader_name == "llm" else "read"] = time.perf_counter() - t
        return to_answer(query.question, reading, r, method=self.name, graph=self.graph, opt=self.opt,
                         budget=self.context_budget()[0])

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
        r.documents = recall_documents(self.graph, qvec, o, scope)
        r.scope = list(scope)
        doc_ids = [d.id for d in r.documents]
        r.timings["stage1"] = time.perf_counter() - t
        if not doc_ids:
            r.fallbacks.append(Fallback("graph", "no documents loaded (kgqa load documents DIR)"))
            return r

        t = time.perf_counter()
        lines: list[str] = []
        if o.chunks_only:
            # ablation "w/o graph retrieval": naive chunk retrieval over the same Kd documents
            k = max(o.naive_k, o.rerank_k) if o.ranker != "none" else o.naive_k
            rows = self.graph.read("mkgrag_chunk_search", doc_ids=doc_ids, vector=qvec, k=k)
            chunks = rank_chunks(qtext, [Chunk.from_row(c) for c in rows], r, o, self.passage_ranker)[:o.naive_k]
            r.chunks = fit_chunks(chunks, budget, self.count_tokens)
        else:
            # ---- 3.2.2 stage 2 and Eq. 3: G_r = the top Kg elements of the Kd documents' KGs, expanded l hops
            r.elements = retrieve_subgraph(self.graph, qvec, doc_ids, o)
            # ---- context: graph elements first, then their source chunks, within the budget
            chunks = rank_chunks(qtext, source_chunks(self.graph, r.elements, qvec), r, o, self.passage_ranker)
            lines, r.chunks = pack(r.elements, chunks, budget, chunk_share, self.count_tokens)
        fit_context(r, lines, budget, self.count_tokens)
        r.timings["stage2"] = time.perf_counter() - t
        return r

    def read(self, question: str, r: Retrieval, image=None) -> Reading:
        """The answer from the context by the reader the options choose (``reader``); a CPU reader's reading with
        the abstention options applied (``answer.settle``)."""
        reading = self.reader(r).read(ReadRequest.of(question, r, image))
        if reading.fallback is not None:
            r.fallbacks.append(reading.fallback)
        return reading if reading.reader_name == "llm" else settle(reading, r.rank_scores, self.opt)

    def reader(self, r: Retrieval) -> Reader:
        """The reader of this question: the LLM (``reader=llm``, or ``auto`` with a chat server), the learned
        reader (``learned``, or ``auto`` without one; the rule reader, with one line in ``r.fallbacks``, when its
        checkpoint cannot load) or the rule reader (``rules`` or ``cpu``)."""
        o = self.opt
        if self.reader_name == "llm":
            return LLMReader(self.vision, self.chat, o.max_tokens)
        if self.reader_name == "learned":
            model, why = self.span_model()
            if model is not None:
                by_paragraph = o.reader_passages == "paragraph"
                return LearnedReader(model, threshold=o.reader_threshold, prior_weight=o.rank_weight,
                                     by_paragraph=by_paragraph,
                                     rank_passages=self._passage_scorer(r) if by_paragraph else None)
            r.fallbacks.append(Fallback("reader", f"learned reader unavailable ({why}); the rule reader answers"))
        return RuleReader(self.kg.embed, o.min_sentence_cos)

    @property
    def reader_name(self) -> str:
        """llm | learned | rules: the ``reader`` option with ``auto`` resolved (llm when a chat server is configured,
        openai | vllm; else learned) and ``cpu`` read as rules."""
        if self.opt.reader in ("learned", "rules", "llm"):
            return self.opt.reader
        if self.opt.reader == "cpu":
            return "rules"
        return "llm" if getattr(self.settings, "chat_backend", None) in ("openai", "vllm") else "learned"

    # ------------------------------------------------------------------ the learned models and the budget
    def span_model(self):
        """The learned reader's span model (loaded once per process and checkpoint), or (None, why) when it
        cannot be used."""
        from kgqa.models.heads.span_reader import SpanReaderUnavailable, default_checkpoint, load_span_reader
        from kgqa.models.runtime.backend import runtime_of

        path = self.opt.reader_checkpoint or default_checkpoint(self.settings)
        try:
            return load_span_reader(path, **runtime_of(self.settings)), None
        except SpanReaderUnavailable as e:
            return None, str(e)

    def passage_ranker(self):
        """The learned passage ranker (loaded once per process and checkpoint), or (None, why) when it cannot be used."""
        from kgqa.models.heads.passage_ranker import PassageRankerUnavailable, default_checkpoint, load_passage_ranker
        from kgqa.models.runtime.backend import runtime_of

        path = self.opt.ranker_checkpoint or default_checkpoint(self.settings)
        try:
            return load_passage_ranker(path, **runtime_of(self.settings)), None
        except PassageRankerUnavailable as e:
            if self.opt.ranker_checkpoint:    # a file the user named is not ignored silently
                raise InvalidInput(f"mkgrag option ranker_checkpoint: {e}") from None
            return None, str(e)

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

    def context_budget(self) -> tuple[int, float]:
        """(context tokens, the chunks' share of them): ``budget`` and ``chunk_share``, or the ``shared_norm_``
        ones when the learned reader reads a checkpoint trained with shared normalisation (its metadata says
        so; ``kgqa.models.heads.span_reader``): its span scores compare across passages, so more chunks may reach it.
        An older checkpoint, the rule reader and an LLM keep ``budget``."""
        o = self.opt
        if self.reader_name == "learned":
            model, _ = self.span_model()
            if model is not None and model.shared_norm:
                return o.shared_norm_budget, o.shared_norm_chunk_share
        return o.budget, o.chunk_share

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

    def render(self, answer: Answer) -> list[str]:
        """The mKG-RAG lines of ``kgqa ask`` (evidence.render): query, stage-1 documents, stage-2 elements,
        the supporting sentence and where it is, the context's size."""
        return render(answer)
