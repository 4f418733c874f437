"""mKG-RAG's options: the hyperparameters of Section 4.1, the ablations of Table 7, the readers' settings.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA". ``MKGRAGOptions`` is what ``-o KEY=VALUE`` sets.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class MKGRAGOptions(BaseModel):
    """Hyperparameters (Section 4.1: Kd = 10, Kg = 10, l = 1) and the ablations of Table 7."""

    model_config = ConfigDict(extra="forbid")

    Kd: int = Field(10, ge=1, le=1000, description="documents recalled by stage 1 (Eq. 2)")
    Kg: int = Field(10, ge=1, le=1000, description="entities and relations retrieved from the query-specific graph")
    ef: int = Field(200, ge=1, le=10_000, description="stage 1: candidates asked of the document and chunk "
                                                       "vector indexes (HNSW's beam; at least Kd) before the "
                                                       "exact cosine ranks them")
    doc_score: Literal["maxp", "document"] = Field("maxp", description=("stage 1's document score: maxp (the better of the document's cosine and its best chunk's, MaxP of "
                                                                        "'Deeper Text Understanding for IR with Contextual Neural Language Modeling', so a long document is "
                                                                        "recalled by its best chunk) or document (the paper's Eq. 2 alone: the cosine of the document's "
                                                                        'embedding, which holds its title, captions and first 256 word pieces)'))
    l: int = Field(1, ge=0, le=4, description="hops of subgraph expansion (Eq. 3)")
    threshold: float = Field(0.3, ge=-1.0, le=1.0, description="expansion keeps neighbours whose cosine to the "
                                                               "query exceeds this")
    budget: int = Field(800, ge=50, le=100_000, description="context tokens (LLM tokenizer): graph elements, "
                                                            "then source chunks")
    chunk_share: float = Field(0.75, ge=0.0, le=1.0, description=("share of the budget kept for G_r's source chunks (the paper's 'associated textual chunks'), 0 to 1; "
                                                                  'the graph lines get the rest, and the chunks take what the lines leave (0: lines first)'))
    shared_norm_budget: int = Field(2400, ge=50, le=100_000, description=('context tokens when the learned reader reads a shared-normalised checkpoint (its span scores compare'
                                                                          ' across passages, so it can read more chunks); replaces budget (2400 with a share of 0.75 is about 6'
                                                                          ' chunks)'))
    shared_norm_chunk_share: float = Field(0.75, ge=0.0, le=1.0, description="chunk_share when the learned reader "
                                           "reads a shared-normalised checkpoint")
    ranker: Literal["learned", "none"] = Field("learned", description=("the order of the candidate chunks: none (the paper's: the best citing element's rank, then the "
                                                                       "chunk's cosine; chunks-only: the cosine) or learned (the first rerank_k by the passage ranker, a "
                                                                       'cross-encoder fine-tuned on SQuAD training paragraphs; its checkpoint from ranker_checkpoint, else '
                                                                       '<data dir>/models/ranker/, else the shipped data/ranker/; one fallback line and the order of none '
                                                                       'when it cannot load)'))
    ranker_checkpoint: str = Field("", description="passage ranker: its checkpoint file (empty: the default)")
    rank_weight: float = Field(2.0, ge=0.0, le=100.0, description=("with ranker=learned, the learned reader: a span's margin gains this times its chunk's ranker score "
                                                                   "minus the best chunk's, 0 or more (0: the ranker only orders the chunks)"))
    rank_abstain: float | None = Field(None, ge=-100.0, le=100.0, description=("CPU readers, with ranker=learned: abstain when the passage ranker's best score over the candidate "
                                                                               'chunks is below this, i.e. no retrieved chunk seems to answer (about -0.5 for the shipped ranker; a '
                                                                               'ranker you train scores on its own scale); off (or none, the default): never'))
    abstain: bool = Field(True, description="CPU readers: abstain where the reader finds no answer it trusts "
                          "(below its threshold, where the question's names are absent, by rank_abstain); false "
                          "(--no-abstain): give the best candidate all the same, as the paper's MLLM always answers")
    rerank_k: int = Field(10, ge=1, le=200, description="candidate chunks the passage ranker reads (the rest keep "
                                                         "their order after them)")
    naive_k: int = Field(5, ge=1, le=100, description="chunks retrieved by the chunks-only baseline")
    max_tokens: int = Field(48, ge=4, le=512, description="answer tokens")
    reader: Literal["auto", "cpu", "learned", "rules", "llm"] = Field(
        "auto", description=("who answers from the context: llm (the paper's generation); learned (the span reader: all-"
                             'MiniLM-L6-v2 fine-tuned on SQuAD, its checkpoint from reader_checkpoint, else <data '
                             'dir>/models/reader/, else the shipped data/reader/; a checkpoint that cannot load falls back to '
                             'rules in one line); rules or cpu (the word-cosine rule reader); auto: llm when a chat server is '
                             'configured (openai | vllm), else learned'))
    reader_checkpoint: str = Field("", description="learned reader: its checkpoint file (empty: the default)")
    reader_threshold: float | None = Field(None, ge=-100.0, le=100.0, description="learned reader: abstain when "
                                           "the best span's margin over no-answer is lower (default: the "
                                           "checkpoint's, chosen on held-out training articles)")
    reader_passages: Literal["chunk", "paragraph"] = Field(
        "chunk", description=("learned reader: what it reads as one passage: chunk (each chunk's prose) or paragraph (each "
                              "paragraph of it, the unit it was trained on, with the passage ranker's prior taken per paragraph; "
                              'for documents loaded with --paragraphs); a table row is always a passage of its own'))
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
