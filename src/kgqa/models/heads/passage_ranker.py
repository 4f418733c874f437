"""A learned passage ranker: all-MiniLM-L6-v2 fine-tuned end to end as a cross-encoder over (question, passage).

mKG-RAG hands its reader the source chunks of the retrieved graph elements, best first, within a token
budget; which chunks come first decides what the reader can find. Ordered by the cosines of the sentence
encoder (question and chunk encoded apart), the chunk holding the answer is first for two questions in three
on the training sample's held-out articles. A cross-encoder reads question and passage together
(``[CLS] question [SEP] passage [SEP]`` → one relevance logit): monoBERT (Nogueira and Cho, "Passage
Re-ranking with BERT", arXiv:1901.04085), here on the same small BERT as every other model of the CPU stack.

Training (``train_ranker``; ``kgqa train ranker``): each training question is one group, its own paragraph
(the positive) and ``negatives`` other paragraphs of its article that hold none of its answers: the
``hard`` ones the sentence encoder ranks highest for it (the confusions stage 2 makes), the rest drawn at
random. The loss is a softmax cross-entropy over the group (listwise: "localized contrastive estimation",
Gao, Dai and Callan, arXiv:2101.08751), so a score only has to rank passages, which is all the context
needs. Held-out articles (never trained on) measure recall@k of the sentence encoder's order and of the
ranker's, over all paragraphs of the question's article.

Checkpoint: as the span reader's (``kgqa.models.span_reader``): the word-piece embeddings stay frozen at the
package's values and are not stored; everything else is fp16 safetensors with JSON metadata (what it was
trained on, held-out figures) and the embeddings' fingerprint, so that a checkpoint of another base model is
refused with one line (``PassageRankerUnavailable``).
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.models.span_reader import (QA, _bf16_ok, base_model_path, inference, load_bert_checkpoint,
                                     load_onnx_head, others_without_answer, own_or_shipped, paragraphs_by_article,
                                     save_bert_checkpoint, set_dropout)

FORMAT = "kgqa-passage-ranker"
VERSION = 1
CHECKPOINT_NAME = "passage-ranker.safetensors"


class PassageRankerUnavailable(InvalidInput):
    """The ranker cannot be used (no checkpoint, a mismatched one): one line saying why."""


def _build(base: str):
    """(model, tokenizer): the base BERT with a fresh one-logit head, word-piece embeddings frozen."""
    import transformers
    from transformers import BertForSequenceClassification

    from kgqa.models.bert_runtime import wordpieces

    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()          # "classifier newly initialised" is the point
    transformers.logging.disable_progress_bar()
    try:
        model = BertForSequenceClassification.from_pretrained(base, num_labels=1)
    finally:
        transformers.logging.set_verbosity(level)
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    # no attention dropout: on a CPU its masks are a quarter of a step, and without it attention is one kernel
    set_dropout(model, attention=0.0)
    return model, wordpieces(base)


def _pairs(tok, questions: Sequence[str], passages: Sequence[str], max_length: int) -> dict:
    """The model's inputs for (question, passage) pairs as torch tensors (``bert_runtime.pair_batch``)."""
    import torch

    from kgqa.models.bert_runtime import pair_batch

    return {k: torch.from_numpy(v) for k, v in pair_batch(tok, questions, passages, max_length).items()}


class PassageRanker:
    """The loaded ranker: ``score(question, passages)`` → one relevance logit per passage (higher: better).
    ``model``: the torch network, or its ONNX export (``bert_runtime.OnnxHead``: the ``onnx`` runtime)."""

    def __init__(self, model, tok, meta: dict, path: Path | None = None):
        from kgqa.models.bert_runtime import OnnxHead

        self.onnx = isinstance(model, OnnxHead)
        self.model = model if self.onnx else model.eval()
        self.tok = tok
        self.meta = meta
        self.path = path
        self.max_length = int(meta.get("read_length", meta.get("max_length", 384)))
        self._lock = threading.Lock()

    def score(self, question: str, passages: Sequence[str], *, batch_size: int = 16,
              bf16: bool | None = None) -> np.ndarray:
        """Relevance logits of ``passages`` for ``question`` (a passage longer than ``max_length`` is read from
        its start). The ONNX export in fp32, or torch in bf16 autocast where the CPU multiplies bf16 natively."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        from kgqa.models.bert_runtime import pair_batch

        order = sorted(range(len(passages)), key=lambda k: len(passages[k]))
        out = np.zeros(len(passages), dtype=np.float32)
        with self._lock, inference(self.onnx, bf16):
            for b in range(0, len(order), batch_size):
                part = order[b:b + batch_size]
                out[part] = self._logits(pair_batch(self.tok, [question] * len(part), [passages[k] for k in part],
                                                    self.max_length))
        return out

    @property
    def runtime(self) -> str:
        return "onnx" if self.onnx else "torch"

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


# ----------------------------------------------------------------------------------------------- checkpoint
def save_checkpoint(model, meta: dict, path: str | Path) -> int:
    """fp16 safetensors of every trained parameter (not the frozen word-piece embeddings) + JSON metadata."""
    return save_bert_checkpoint(model, meta, path, FORMAT, VERSION)


def _rank_logit(model, input_ids, token_type_ids, attention_mask):
    """What the ``onnx`` runtime exports of the ranker: one relevance logit per row."""
    pooled = model.bert(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask).pooler_output
    return model.classifier(pooled).squeeze(-1)


_LOADED: dict[tuple, PassageRanker] = {}
_LOAD_LOCK = threading.Lock()


def load_ranker(path: str | Path, *, backend: str = "torch", cache_dir: str | Path | None = None,
                threads: int = 1) -> PassageRanker:
    """The ranker of a checkpoint (cached per path and runtime); ``PassageRankerUnavailable`` with one line
    when it is missing, not a passage-ranker checkpoint, or made for another base model. ``backend``: ``torch``
    or ``onnx`` (``kgqa.models.bert_runtime``; its export is cached in ``cache_dir``, run on ``threads``)."""
    path = Path(path)
    key = (str(path.resolve()) if path.exists() else str(path), backend, str(cache_dir) if backend == "onnx" else "")
    with _LOAD_LOCK:
        if key not in _LOADED:
            if backend == "onnx":
                model, tok, meta = load_onnx_head(
                    path, FORMAT, VERSION, _build, _rank_logit, ["logit"], PassageRankerUnavailable,
                    "passage-ranker", "kgqa train ranker", cache_dir, threads)
            else:
                model, tok, meta = load_bert_checkpoint(path, FORMAT, VERSION, _build, PassageRankerUnavailable,
                                                        "passage-ranker", "kgqa train ranker")
            _LOADED[key] = PassageRanker(model, tok, meta, path)
        return _LOADED[key]


def default_checkpoint(settings) -> Path:
    """<data dir>/models/ranker/ when `kgqa train ranker` wrote one there, else the shipped
    ``data/ranker/passage-ranker.safetensors`` of a source checkout."""
    return own_or_shipped(settings, "ranker", CHECKPOINT_NAME)


# -------------------------------------------------------------------------------------------------- training
@dataclass
class Group:
    """One training question: its own paragraph first, then paragraphs of its article without its answer."""

    question: str
    passages: list[str]


def encoder_order(encode: Callable[[list[str]], np.ndarray], qas: Sequence[QA]) -> list[list[str]]:
    """For each question, every paragraph of its article (among ``qas``' paragraphs), by the sentence encoder's
    cosine to the question, best first: the order stage 2 would give them."""
    paras = paragraphs_by_article(qas)
    flat = [p for lst in paras.values() for p in lst]
    pv = dict(zip(flat, encode(flat)))
    qv = encode([q.question for q in qas])
    out = []
    for q, v in zip(qas, qv):
        cands = paras[q.article]
        s = np.array([pv[c] @ v for c in cands])
        out.append([cands[k] for k in np.argsort(-s, kind="stable")])
    return out


def groups_of(qas: Sequence[QA], orders: Sequence[list[str]], negatives: int, hard: int,
              rng: random.Random) -> list[Group]:
    """One group per question with at least ``negatives`` paragraphs of its article that hold none of its
    answers: the positive, the ``hard`` best of those by the encoder, then random others."""
    out = []
    for q, order in zip(qas, orders):
        neg = others_without_answer(q, order)
        if len(neg) < negatives:
            continue
        k = min(hard, negatives)
        out.append(Group(q.question, [q.context] + neg[:k] + rng.sample(neg[k:], negatives - k)))
    return out


def recall_at(orders: Sequence[list[str]], qas: Sequence[QA], ks: Sequence[int] = (1, 2, 3, 5)) -> dict[str, float]:
    """Share (%) of questions whose own paragraph is among the first k of their order."""
    n = max(len(qas), 1)
    return {f"@{k}": round(100 * sum(q.context in o[:k] for q, o in zip(qas, orders)) / n, 1) for k in ks}


def rerank(ranker: PassageRanker, qas: Sequence[QA], orders: Sequence[list[str]], top: int) -> list[list[str]]:
    """The encoder's first ``top`` paragraphs of each question, reordered by the ranker (the rest after them)."""
    out = []
    for q, o in zip(qas, orders):
        head = o[:top]
        s = ranker.score(q.question, head)
        out.append([head[k] for k in np.argsort(-s, kind="stable")] + o[top:])
    return out


def train_ranker(train: list[QA], holdout: list[QA], *, checkpoint: str | Path, encode: Callable,
                 negatives: int = 3, hard: int = 2, epochs: int = 1, batch_size: int = 8, lr: float = 5e-5,
                 max_length: int = 224, read_length: int = 384, seed: int = 0, threads: int | None = None,
                 time_limit: float | None = None, rerank_top: int = 20, trained_on: dict | None = None,
                 say: Callable[[str], None] = print) -> dict:
    """Fine-tune, save, measure on the held-out articles; returns the report (counts, seconds, groups/s, loss
    curve, held-out recall of the encoder's order and of the ranker's)."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    t0 = time.perf_counter()
    rng = random.Random(seed)
    torch.manual_seed(seed)
    groups = groups_of(train, encoder_order(encode, train), negatives, hard, rng)
    if not groups:
        raise InvalidInput(f"kgqa train ranker: no question has {negatives} other paragraphs of its article without "
                           f"its answer among the paragraphs of the {len(train)} training questions (more questions: "
                           "a larger --limit; or fewer --negatives)")
    rng.shuffle(groups)
    t_prep = time.perf_counter() - t0
    say(f"{len(groups)} groups (a question, its paragraph, {negatives} others of its article: {hard} the "
        f"encoder ranks highest, {negatives - hard} at random) from {len(train)} questions; prepared in "
        f"{t_prep:.0f} s")
    model, tok = _build(base_model_path())
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    steps_total = epochs * math.ceil(len(groups) / batch_size)
    warm = max(1, steps_total // 10)
    use_bf16 = _bf16_ok()
    losses: list[float] = []
    curve: list[dict] = []
    model.train()
    t1 = time.perf_counter()
    step, seen, stopped = 0, 0, False
    for ep in range(epochs):
        order = list(range(len(groups)))
        random.Random(seed + ep).shuffle(order)
        for b in range(0, len(order), batch_size):
            part = [groups[k] for k in order[b:b + batch_size]]
            qs = [g.question for g in part for _ in g.passages]
            ps = [p for g in part for p in g.passages]
            enc = _pairs(tok, qs, ps, max_length)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
                logits = model(**enc).logits.float().view(len(part), -1)
            loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(part), dtype=torch.long))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            for pg in opt.param_groups:
                pg["lr"] = lr * min((step + 1) / warm, max(0.0, (steps_total - step) / max(steps_total - warm, 1)))
            opt.step()
            opt.zero_grad()
            step += 1
            seen += len(part)
            losses.append(float(loss.detach()))
            if step % 25 == 0 or step == steps_total:
                el = time.perf_counter() - t1
                curve.append({"step": step, "loss": round(float(np.mean(losses[-25:])), 4),
                              "groups_per_s": round(seen / el, 2)})
                say(f"step {step}/{steps_total}  loss {curve[-1]['loss']:.4f}  {seen / el:.1f} groups/s "
                    f"({seen * (negatives + 1) / el:.1f} pairs/s)  {el:.0f} s")
            if time_limit and time.perf_counter() - t1 > time_limit:
                say(f"time limit {time_limit:.0f} s reached at step {step}")
                stopped = True
                break
        if stopped:
            break
    t_train = time.perf_counter() - t1
    model.eval()
    meta = {"base": "all-MiniLM-L6-v2", "trained_on": trained_on or {}, "groups": len(groups),
            "negatives": negatives, "hard": hard, "epochs_run": round(seen / len(groups), 3), "steps": step,
            "batch_size": batch_size, "lr": lr, "max_length": max_length, "read_length": read_length, "seed": seed,
            "torch_threads": torch.get_num_threads(), "bf16_autocast": use_bf16, "loss_curve": curve}
    ranker = PassageRanker(model, tok, meta)
    t2 = time.perf_counter()
    held = {}
    if holdout:
        enc_orders = encoder_order(encode, holdout)
        held = {"questions": len(holdout), "articles": len({q.article for q in holdout}),
                "encoder": recall_at(enc_orders, holdout),
                "ranker": recall_at(rerank(ranker, holdout, enc_orders, rerank_top), holdout),
                "reranked_top": rerank_top}
        meta["held_out"] = held
    t_held = time.perf_counter() - t2
    meta["seconds"] = {"prepare": round(t_prep, 1), "train": round(t_train, 1), "held_out": round(t_held, 1)}
    size = save_checkpoint(model, meta, checkpoint)
    return {"checkpoint": str(checkpoint), "bytes": size, "groups": len(groups), "steps": step,
            "epochs": meta["epochs_run"], "losses": losses, "curve": curve, "held_out": held,
            "seconds": meta["seconds"], "groups_per_s": round(seen / max(t_train, 1e-9), 2),
            "pairs_per_s": round(seen * (negatives + 1) / max(t_train, 1e-9), 2),
            "threads": torch.get_num_threads(), "bf16_autocast": use_bf16}
