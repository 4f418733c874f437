"""``kgqa train paths``' check: the new chain reader and the one it replaces, answering the held-out-template
questions of the loaded KG (``kgqa.training.heldout``) with VisPath, gold start, graph-only (no LLM), terminal
selection by the fixed sum for both (weights fitted by ``kgqa train terminal`` belong to one reader), the
readers on torch (a candidate is not exported to ONNX), EM overall and per hop. The trainer decides from these rows whether the new reader is installed."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable


def reader_check(settings, ctx, *, n: int, exclude: set[str], train_examples: int, train_seed: int,
                 depth: int, seed: int = 11, train_weights=None) -> Callable[[Path, Path | None], dict]:
    """``check(new, old)`` over ``n`` held-out-template questions of ``ctx``'s KG (``seed``), none on a walk that
    the training recipe (``train_examples``, ``train_seed``, walks up to ``depth`` facts, drawn uniformly or by
    ``train_weights``) draws; each row is
    ``{"checkpoint", "em", "hops": {hop: em}}`` in percent."""
    import time

    from kgqa.app.eval.questions import EvalQuestion
    from kgqa.app.eval.runner import run_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.models.null_chat import NullChat
    from kgqa.training.heldout import em, heldout_set

    rows, _ = heldout_set(ctx.graph, ctx.kg, n, seed, exclude, train_examples, train_seed, train_depth=depth,
                          train_weights=train_weights)
    questions = [EvalQuestion.model_validate(r) for r in rows]
    hops = sorted({q.hops for q in questions})
    models = dataclasses.replace(ctx.models, chat=NullChat()) if ctx.models is not None else None
    settings = settings.model_copy(update={"reader_backend": "torch"})      # no ONNX export of a candidate

    def measure(checkpoint: Path) -> dict:
        pipe = Pipeline(settings, "vispath", graph=ctx.graph, models=models, kg=ctx.kg, write_trace=False,
                        options={"path_scorer": "reader", "reader_checkpoint": str(checkpoint),
                                 "terminal_weights": "fixed"})
        res = run_questions(questions, pipe, gold_start=True)
        return {"checkpoint": str(checkpoint), "em": round(em(res), 1), "hops": {h: round(em(res, h), 1) for h in hops}}

    def check(new: Path, old: Path | None) -> dict:
        t0 = time.perf_counter()
        out = {"questions": len(questions), "by_hops": {h: sum(q.hops == h for q in questions) for h in hops},
               "old": measure(old) if old is not None and questions else None,
               "new": measure(new) if questions else {"checkpoint": str(new), "em": None, "hops": {}}}
        out["seconds"] = round(time.perf_counter() - t0, 1)
        return out

    return check


__all__ = ["reader_check"]
