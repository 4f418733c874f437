"""Training the relation-path retriever's head (``kgqa train paths --kind retriever``; the model is
``kgqa.models.heads.path_retriever``): two objectives per example, summed (SR scores a path relation by relation,
so a prefix must rank too): the gold chains against every chain of the neighbourhood, and per hop below the gold
length the gold prefixes against the chains of that length; AdamW in a seeded order, a checkpoint after every
epoch (resumable)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from kgqa.models.heads.path_retriever import load_checkpoint, new_head, save_checkpoint


@dataclass
class RetrieverExample:
    """One training item: the question's vector row, its candidate chains (rows of the chain table) by
    length, and which of them reach the answer."""
    q_row: int
    chains: list[int]                 # rows in the chain table, all lengths
    lengths: list[int]                # the chain length of each
    gold: set[int]                    # rows of gold chains (shortest chains that reach the answer)
    prefixes: dict[int, set[int]] = field(default_factory=dict)   # length t → rows of gold prefixes


@dataclass
class TrainResult:
    epoch_losses: list[float]
    epochs_done: int
    resumed_from: int
    seconds: float
    examples: int


def example_tensors(ex: RetrieverExample):
    """(chain rows, gold mask, [(chains of length t, gold prefixes among them)]) of one example, built once."""
    import torch

    rows = torch.tensor(ex.chains)
    pos = torch.tensor([r in ex.gold for r in ex.chains])
    lengths = torch.tensor(ex.lengths)
    hops = []
    for t, pref in sorted(ex.prefixes.items()):
        at = lengths == t
        p = torch.tensor([r in pref for r in ex.chains]) & at
        if p.any() and int(at.sum()) > int(p.sum()):
            hops.append((at, p))
    return rows, pos, hops


def example_loss(head, qv, cv, ex: RetrieverExample, mapped=None, tensors=None):
    """−log of the softmax mass on the gold chains (whole chains), plus the same per hop for gold prefixes.
    ``mapped``: ``head.chain(cv)`` when the caller computed it once for a batch; ``tensors``: example_tensors(ex)."""
    import torch

    rows, pos, hops = tensors or example_tensors(ex)
    q = head.question(qv[ex.q_row:ex.q_row + 1])[0]
    c = mapped[rows] if mapped is not None else head.chain(cv[rows])
    logits = head.log_scale.exp() * (c @ q)
    loss = torch.logsumexp(logits, 0) - torch.logsumexp(logits[pos], 0)
    for at, p in hops:
        loss = loss + torch.logsumexp(logits[at], 0) - torch.logsumexp(logits[p], 0)
    return loss


def train_head(q_vecs: np.ndarray, chain_vecs: np.ndarray, examples: list[RetrieverExample], *, checkpoint: Path,
               epochs: int = 10, lr: float = 1e-3, batch: int = 16, seed: int = 0, resume: bool = False,
               meta: dict | None = None, on_epoch: Callable[[int, float], None] | None = None,
               prior: float = 0.0) -> TrainResult:
    """AdamW over the head, mini-batches in a seeded order per epoch; a checkpoint after every epoch
    (``resume``: continue after the checkpoint's last epoch, with its optimizer state and losses). ``prior``:
    the weight of the squared norm of the head's maps added to each batch's loss (the losses reported per epoch
    are the ranking loss alone)."""
    import time

    import torch

    t0 = time.perf_counter()
    dim = q_vecs.shape[1]
    losses: list[float] = []
    start = 0
    if resume and Path(checkpoint).is_file():
        head, info, opt_state = load_checkpoint(checkpoint, with_optimizer=True)
        start, losses = int(info.get("epochs_done", 0)), list(info.get("epoch_losses", []))
        opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=0.0)
        if opt_state is not None:
            opt.load_state_dict(opt_state)
    else:
        head = new_head(dim, seed)
        opt = torch.optim.AdamW(head.parameters(), lr=lr, weight_decay=0.0)
    qv = torch.from_numpy(np.asarray(q_vecs, dtype=np.float32))
    cv = torch.from_numpy(np.asarray(chain_vecs, dtype=np.float32))
    head.train()
    prepared = [example_tensors(ex) for ex in examples]
    for epoch in range(start, epochs):
        order = list(range(len(examples)))
        random.Random(seed * 1_000_003 + epoch).shuffle(order)
        total = 0.0
        for b in range(0, len(order), batch):
            opt.zero_grad()
            part = order[b:b + batch]
            mapped = head.chain(cv)                 # every chain once per batch (a few hundred × 384)
            loss = sum(example_loss(head, qv, cv, examples[k], mapped, prepared[k]) for k in part) / len(part)
            if prior > 0:
                (loss + prior * (head.q.weight.pow(2).sum() + head.c.weight.pow(2).sum())).backward()
            else:
                loss.backward()
            opt.step()
            total += loss.item() * len(part)
        losses.append(total / max(1, len(examples)))
        save_checkpoint(checkpoint, head, {**(meta or {}), "epochs_done": epoch + 1, "epoch_losses": losses,
                                           "seed": seed, "lr": lr, "batch": batch, "prior": prior}, optimizer=opt)
        if on_epoch:
            on_epoch(epoch, losses[-1])
    return TrainResult(losses, epochs, start, time.perf_counter() - t0, len(examples))
