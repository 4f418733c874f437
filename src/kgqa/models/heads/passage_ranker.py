"""A learned passage ranker: all-MiniLM-L6-v2 fine-tuned end to end as a cross-encoder over (question, passage).

mKG-RAG hands its reader the source chunks of the retrieved graph elements, best first, within a token
budget; which chunks come first decides what the reader can find. Ordered by the cosines of the sentence
encoder (question and chunk encoded apart), the chunk holding the answer is first for two questions in three
on the training sample's held-out articles. A cross-encoder reads question and passage together
(``[CLS] question [SEP] passage [SEP]`` → one relevance logit): monoBERT (Nogueira and Cho, "Passage
Re-ranking with BERT", arXiv:1901.04085), here on the same small BERT as every other model of the CPU stack.

Training (``kgqa.training.passage_ranker``; ``kgqa train ranker``) is listwise over each question's own
paragraph and other paragraphs of its article; held-out articles measure recall@k of the sentence encoder's
order and of the ranker's.

Checkpoint: as the span reader's (``kgqa.models.heads.checkpoint``): the word-piece embeddings stay frozen at the
package's values and are not stored; everything else is fp16 safetensors with JSON metadata (what it was
trained on, held-out figures) and the embeddings' fingerprint, so that a checkpoint of another base model is
refused with one line (``PassageRankerUnavailable``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.models.heads.checkpoint import (BertHead, build_bert, load_bert_head, load_once, save_bert_checkpoint,
                                          set_dropout)
from kgqa.models.runtime.backend import inference

FORMAT = "kgqa-passage-ranker"
VERSION = 1
CHECKPOINT_NAME = "passage-ranker.safetensors"


class PassageRankerUnavailable(InvalidInput):
    """The ranker cannot be used (no checkpoint, a mismatched one): one line saying why."""


def build(base: str):
    """(model, tokenizer): the base BERT with a fresh one-logit head, word-piece embeddings frozen."""
    model, tok = build_bert("BertForSequenceClassification", base, num_labels=1)
    # no attention dropout: on a CPU its masks are a quarter of a step, and without it attention is one kernel
    set_dropout(model, attention=0.0)
    return model, tok


class PassageRanker(BertHead):
    """The loaded ranker: ``score(question, passages)`` → one relevance logit per passage (higher: better).
    ``model``: the torch network, or its ONNX export (``runtime.onnx.OnnxHead``: the ``onnx`` runtime)."""

    def __init__(self, model, tok, meta: dict, path: Path | None = None):
        super().__init__(model, tok, meta, path)
        self.max_length = int(meta.get("read_length", meta.get("max_length", 384)))

    def score(self, question: str, passages: Sequence[str], *, batch_size: int = 16,
              bf16: bool | None = None) -> np.ndarray:
        """Relevance logits of ``passages`` for ``question`` (a passage longer than ``max_length`` is read from
        its start). The ONNX export in fp32, or torch in bf16 autocast where the CPU multiplies bf16 natively."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        from kgqa.models.runtime.tokens import pair_batch

        order = sorted(range(len(passages)), key=lambda k: len(passages[k]))
        out = np.zeros(len(passages), dtype=np.float32)
        with self._lock, inference(self.onnx, bf16):
            for b in range(0, len(order), batch_size):
                part = order[b:b + batch_size]
                out[part] = self._logits(pair_batch(self.tok, [question] * len(part), [passages[k] for k in part],
                                                    self.max_length))
        return out

    def _logits(self, enc: dict[str, np.ndarray]) -> np.ndarray:
        """One logit per row: the ONNX export in fp32, or the torch encoder under the caller's autocast with the
        pooler's output read by the head in fp32: a bf16 logit has 8 bits of precision (2.703125 for two
        different paragraphs), and its ties would decide the order."""
        if self.onnx:
            return self.model.run(enc["input_ids"], enc["token_type_ids"], enc["attention_mask"])[0]
        import torch

        pooled = self.model.bert(**{k: torch.from_numpy(v) for k, v in enc.items()}).pooler_output
        with torch.autocast("cpu", enabled=False):
            return self.model.classifier(pooled.float()).squeeze(-1).numpy()


def save_checkpoint(model, meta: dict, path: str | Path) -> int:
    """fp16 safetensors of every trained parameter (not the frozen word-piece embeddings) + JSON metadata."""
    return save_bert_checkpoint(model, meta, path, FORMAT, VERSION)


def _rank_logit(model, input_ids, token_type_ids, attention_mask):
    """What the ``onnx`` runtime exports of the ranker: one relevance logit per row."""
    pooled = model.bert(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask).pooler_output
    return model.classifier(pooled).squeeze(-1)


def load_passage_ranker(path: str | Path, *, backend: str = "torch", cache_dir: str | Path | None = None,
                        threads: int = 1) -> PassageRanker:
    """The ranker of a checkpoint (loaded once per path and runtime); ``PassageRankerUnavailable`` with one line
    when it is missing, not a passage-ranker checkpoint, or made for another base model. ``backend``: ``torch``
    or ``onnx`` (``kgqa.models.runtime``; its export is cached in ``cache_dir``, run on ``threads``)."""
    path = Path(path)
    return load_once("passage-ranker", path, backend, cache_dir, lambda: PassageRanker(*load_bert_head(
        path, FORMAT, VERSION, build, _rank_logit, ["logit"], PassageRankerUnavailable, "passage-ranker",
        "kgqa train ranker", backend, cache_dir, threads), path))


def default_checkpoint(settings) -> Path:
    """<data dir>/models/ranker/ when `kgqa train ranker` wrote one there, else the shipped
    ``data/ranker/passage-ranker.safetensors`` of a source checkout."""
    from kgqa.core.config import own_or_shipped

    return own_or_shipped(settings, "ranker", CHECKPOINT_NAME, shipped_in="data")
