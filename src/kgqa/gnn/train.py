"""GraSP Section 4.4: train the GNN and the projector with the LLM frozen.

The loop is generic: ``loss_fn(encoder, example)`` returns the differentiable loss of one
example (for GraSP: the frozen soft-prompt LLM's cross-entropy on the gold answer tokens,
given the soft prompt the encoder made from the example's subgraph). Settings follow the
public code's reading: AdamW, lr 2e-4, 3 epochs, one subgraph per step.

Deterministic: the example order of epoch k is a permutation drawn from ``seed + k``, so a run
resumed from a checkpoint (``resume=True``) replays exactly the steps it had not done yet.
A checkpoint is written every ``save_every`` steps and at the end of every epoch.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from kgqa.gnn import checkpoint as ckpt
from kgqa.models.plot import plot_losses  # noqa: F401 - re-exported: GraSP's trainer draws its curve with it


@dataclass
class TrainConfig:
    epochs: int = 3
    lr: float = 2e-4
    weight_decay: float = 0.01
    seed: int = 0
    save_every: int = 25
    grad_clip: float = 1.0


@dataclass
class TrainReport:
    checkpoint: Path
    epochs_done: int
    steps: int
    epoch_losses: list[float] = field(default_factory=list)   # mean loss per completed epoch
    step_losses: list[float] = field(default_factory=list)    # every step, in order
    resumed_from: tuple[int, int] | None = None               # (epoch, step in epoch) read at start
    encoder: Any = None                                       # the trained module (the loaded one on resume)


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    order = list(range(n))
    random.Random(seed * 1_000_003 + epoch).shuffle(order)
    return order


def make_optimizer(params, cfg: TrainConfig):
    import torch

    return torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)


def train(encoder, examples: Sequence[Any], loss_fn: Callable, *, variant: str, checkpoint: Path,
          config: TrainConfig | None = None, resume: bool = False, meta: dict | None = None,
          on_step: Callable[[int, int, float], None] | None = None,
          on_epoch: Callable[[int, float], None] | None = None,
          on_start: Callable[[tuple[int, int] | None], None] | None = None) -> TrainReport:
    """Train ``encoder`` on ``examples``; returns what happened. ``on_step(epoch, step, loss)`` for a progress bar."""
    import torch

    cfg = config or TrainConfig()
    checkpoint = Path(checkpoint)
    torch.manual_seed(cfg.seed)
    epoch0, step0, steps_total = 0, 0, 0
    epoch_losses: list[float] = []
    step_losses: list[float] = []
    partial: list[float] = []
    resumed = None
    if resume and checkpoint.is_file():
        encoder, info, opt = ckpt.load(checkpoint, variant=variant,
                                       optimizer_for=lambda p: make_optimizer(p, cfg))
        epoch0, step0 = int(info.get("epoch", 0)), int(info.get("step_in_epoch", 0))
        steps_total = int(info.get("steps", 0))
        epoch_losses = list(info.get("epoch_losses", []))
        step_losses = list(info.get("step_losses", []))
        partial = list(info.get("partial_losses", []))
        resumed = (epoch0, step0)
    else:
        opt = make_optimizer(encoder.parameters(), cfg)
    if on_start:
        on_start(resumed)
    base_meta = {**(meta or {}), "train_config": cfg.__dict__, "n_examples": len(examples)}

    def save(epoch: int, step_in_epoch: int):
        ckpt.save(checkpoint, encoder, variant=variant, optimizer=opt, meta={
            **base_meta, "epoch": epoch, "step_in_epoch": step_in_epoch, "steps": steps_total,
            "epoch_losses": epoch_losses, "step_losses": step_losses, "partial_losses": partial})

    encoder.train()
    for epoch in range(epoch0, cfg.epochs):
        order = epoch_order(len(examples), cfg.seed, epoch)
        start = step0 if epoch == epoch0 else 0
        if start == 0:
            partial = []
        for k in range(start, len(order)):
            loss = loss_fn(encoder, examples[order[k]])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip:
                torch.nn.utils.clip_grad_norm_(encoder.parameters(), cfg.grad_clip)
            opt.step()
            v = float(loss.detach())
            if not math.isfinite(v):
                raise FloatingPointError(f"training loss is {v} at epoch {epoch + 1} step {k + 1}")
            partial.append(v)
            step_losses.append(v)
            steps_total += 1
            if on_step:
                on_step(epoch, k, v)
            if cfg.save_every and (k + 1) % cfg.save_every == 0 and k + 1 < len(order):
                save(epoch, k + 1)
        epoch_losses.append(sum(partial) / max(len(partial), 1))
        partial = []
        save(epoch + 1, 0)
        if on_epoch:
            on_epoch(epoch, epoch_losses[-1])
    if not checkpoint.is_file():     # nothing left to do (resumed a finished run): keep the file
        save(cfg.epochs, 0)
    encoder.eval()
    return TrainReport(checkpoint=checkpoint, epochs_done=cfg.epochs, steps=steps_total,
                       epoch_losses=epoch_losses, step_losses=step_losses, resumed_from=resumed,
                       encoder=encoder)


__all__ = ["TrainConfig", "TrainReport", "train", "plot_losses", "epoch_order", "make_optimizer"]
