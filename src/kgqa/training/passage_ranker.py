"""Training the passage ranker (``kgqa train ranker``): each training question is one group, its own paragraph
(the positive) and ``negatives`` other paragraphs of its article that hold none of its answers: the ``hard``
ones the sentence encoder ranks highest for it (the confusions mKG-RAG's stage 2 makes), the rest drawn at
random. The loss is a softmax cross-entropy over the group (listwise: "localized contrastive estimation", Gao,
Dai and Callan, arXiv:2101.08751), so a score only has to rank passages, which is all the context needs.
Held-out articles (never trained on) measure recall@k of the sentence encoder's order and of the ranker's, over
all paragraphs of the question's article. The model is ``kgqa.models.heads.passage_ranker``.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.core.report import Report
from kgqa.models.heads.checkpoint import base_model_path
from kgqa.models.heads.passage_ranker import PassageRanker, build, save_checkpoint
from kgqa.models.runtime.backend import use_bf16
from kgqa.training.schedule import set_lr, warmup_decay
from kgqa.training.squad import QA, others_without_answer, paragraphs_by_article, squad_split


class PassageRankerReport(Report):
    """``train_passage_ranker``'s report: checkpoint, bytes, groups, steps, epochs, losses (not in ``--json``),
    curve, held_out, seconds, groups_per_s, pairs_per_s, threads, bf16_autocast."""

    hidden = ("losses",)

    def lines(self) -> list[str]:
        sec, h = self["seconds"], self["held_out"]
        out = [f"examples: {self['groups']} groups; {self['steps']} steps, {self['epochs']} epochs",
               f"time: prepare {sec['prepare']} s, train {sec['train']} s ({self['groups_per_s']} groups/s, "
               f"{self['pairs_per_s']} pairs/s), held-out {sec['held_out']} s · torch threads {self['threads']} · "
               f"bf16 autocast {self['bf16_autocast']}"]
        if h:
            fmt = lambda r: " ".join(f"{k} {v}" for k, v in r.items())  # noqa: E731
            out.append(f"held out ({h['questions']} questions, {h['articles']} articles; own paragraph among its "
                       f"article's): sentence encoder recall {fmt(h['encoder'])} · ranker (its top "
                       f"{h['reranked_top']}) recall {fmt(h['ranker'])}")
        return out + [f"checkpoint: {self['checkpoint']} ({self['bytes'] / 1e6:.1f} MB)"]


def _pairs(tok, questions: Sequence[str], passages: Sequence[str], max_length: int) -> dict:
    """The model's inputs for (question, passage) pairs as torch tensors (``runtime.tokens.pair_batch``)."""
    import torch

    from kgqa.models.runtime.tokens import pair_batch

    return {k: torch.from_numpy(v) for k, v in pair_batch(tok, questions, passages, max_length).items()}


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


def train_passage_ranker(train: list[QA], holdout: list[QA], *, checkpoint: str | Path, encode: Callable,
                 negatives: int = 3, hard: int = 2, epochs: int = 1, batch_size: int = 8, lr: float = 5e-5,
                 max_length: int = 224, read_length: int = 384, seed: int = 0, threads: int | None = None,
                 time_limit: float | None = None, rerank_top: int = 20, trained_on: dict | None = None,
                 say: Callable[[str], None] = print) -> PassageRankerReport:
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
    model, tok = build(base_model_path())
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    steps_total = epochs * math.ceil(len(groups) / batch_size)
    warm = max(1, steps_total // 10)
    bf16 = use_bf16()
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
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = model(**enc).logits.float().view(len(part), -1)
            loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(part), dtype=torch.long))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            set_lr(opt, lr * warmup_decay(step, steps_total, warm))
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
            "torch_threads": torch.get_num_threads(), "bf16_autocast": bf16, "loss_curve": curve}
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
    return PassageRankerReport(
        checkpoint=str(checkpoint), bytes=size, groups=len(groups), steps=step, epochs=meta["epochs_run"],
        losses=losses, curve=curve, held_out=held, seconds=meta["seconds"],
        groups_per_s=round(seen / max(t_train, 1e-9), 2),
        pairs_per_s=round(seen * (negatives + 1) / max(t_train, 1e-9), 2), threads=torch.get_num_threads(),
        bf16_autocast=bf16)


def train_passage_ranker_on_files(files: list[Path], *, checkpoint: Path, encode: Callable, holdout: int = 4,
                                  limit: int | None = None, seed: int = 0, threads: int = 1,
                                  say: Callable[[str], None] = print, **options) -> PassageRankerReport:
    """``kgqa train ranker``: the SQuAD-format ``files`` split by whole articles (``squad_split``, the span
    reader's split with the same seed), then ``train_passage_ranker`` (``options``: its own)."""
    train, held = squad_split(files, holdout, seed, limit, threads, say)
    return train_passage_ranker(train, held, checkpoint=checkpoint, encode=encode, seed=seed, threads=threads, say=say,
                                trained_on={"files": [p.name for p in files], "questions": len(train),
                                            "articles": len({q.article for q in train}), "limit": limit,
                                            "holdout_articles": sorted({q.article for q in held})}, **options)
