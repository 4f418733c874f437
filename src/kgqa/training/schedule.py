"""The learning-rate schedule of the fine-tuning runs (the span reader, the passage ranker, the chain reader):
linear warm-up, then linear decay to 0 at the end of the run."""

from __future__ import annotations


def warmup_decay(step: int, total: int, warm: int, done: float | None = None,
                 warm_share: float | None = None) -> float:
    """The factor of the peak learning rate at ``step`` (from 0): ``(step + 1) / warm`` over the first ``warm``
    steps, then falling linearly to 0 when the run is ``done`` (its share finished: ``step / total`` unless the
    caller measures it otherwise, e.g. by a time limit). The decay runs over the share after the warm-up,
    ``warm_share`` (default ``warm / total``: the span reader passes its nominal 10 %)."""
    if done is None and warm_share is None:
        return min((step + 1) / warm, max(0.0, (total - step) / max(total - warm, 1)))
    done = step / max(1, total) if done is None else done
    share = warm / max(1, total) if warm_share is None else warm_share
    return min((step + 1) / warm, max(0.0, (1.0 - done) / max(1e-9, 1.0 - share)))


def set_lr(optimizer, lr: float) -> None:
    """Every parameter group of ``optimizer`` at ``lr``."""
    for g in optimizer.param_groups:
        g["lr"] = lr
