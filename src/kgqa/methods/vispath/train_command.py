"""``kgqa train terminal``: VisPath's own training subcommand (``VisPath.train_commands``): learning its
terminal selection under the chain reader on the loaded KG (``kgqa.methods.vispath.terminal``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer

from kgqa.core.report import Report, TrainSession


class TerminalReport(Report):
    """The fit's report (groups, fixed_top1, learned_top1, l2, ...; weights, file, ends_split, seconds)."""

    def lines(self) -> list[str]:
        return ["weights: " + ", ".join(f"{k} {v:+.3f}" for k, v in self["weights"].items())
                + (" · a chain's score shared among its ends (ends_split)" if self["ends_split"] else ""),
                f"gold answer ranked first on the {self['groups']} questions whose answer was kept: fixed sum "
                f"{100 * self['fixed_top1']:.1f} %, learned {100 * self['learned_top1']:.1f} % (L2 {self['l2']}, "
                f"chosen on a held-out fifth)",
                f"weights: {self['file']} · {self['seconds']} s"]


def train_terminal_command(
    session: TrainSession,
    questions: int = typer.Option(300, "--questions", min=10, help="Questions generated from the KG's walks "
                                  "(2–4 facts) and answered by VisPath to learn from."),
    exclude: Optional[list[Path]] = typer.Option(None, "--exclude", help="A question file whose topic entities "
                                                 "generated questions must not use (e.g. the eval set); repeatable."),
    reader: Optional[Path] = typer.Option(None, "--reader", help="The chain reader's checkpoint (default: the one "
                                          "VisPath loads); the weights are written beside it."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generated questions and the held-out split."),
) -> TerminalReport:
    """Learn VisPath's terminal selection under the chain reader on the loaded KG: how much the reader, the rules'
    σ, the answer type, the depth and the kind of thing asked for each count (kgqa.methods.vispath.terminal)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.method import parse_options
    from kgqa.core.qa_examples import topics_of
    from kgqa.core.walk_questions import generate_walk_questions
    from kgqa.methods.vispath.algorithm import VisPath
    from kgqa.methods.vispath.terminal import FEATURES, TerminalWeights, collect, fit, sha256, terminal_path

    t0 = time.perf_counter()
    with session.context() as ctx:
        opts = {"path_scorer": "reader", **({"reader_checkpoint": str(reader)} if reader else {})}
        method = VisPath(ctx, parse_options(VisPath, opts))
        slot = method.reader
        if slot.get() is None:
            raise InvalidInput(f"kgqa train terminal: {slot.error}")
        excl: set[str] = set()
        for f in exclude or []:
            excl |= topics_of(f)
        gen = generate_walk_questions(ctx.graph, ctx.kg, questions, seed, excl, hop_weights=(0.0, 0.4, 0.4, 0.2))
        items = [(g.example.question, g.example.topic_id, g.example.answer_id) for g in gen]
        session.say(f"{len(items)} generated questions · VisPath with the chain reader {slot.path} · torch threads "
                    f"{session.settings.torch_threads}")

        def tick(k: int, n: int) -> None:
            if k % 50 == 0 or k == n:
                session.say(f"answered {k}/{n} · {time.perf_counter() - t0:.0f} s")

        groups = collect(method, items, tick)
    w, rep = fit(groups, seed)
    split = method.opt.ends_split
    out = TerminalWeights(w, sha256(slot.path), {"questions": len(items), "seed": seed, **rep, "ends_split": split,
                                                 "exclude": [str(f) for f in exclude or []]}
                          ).save(terminal_path(slot.path))
    return TerminalReport({**rep, "weights": dict(zip(FEATURES, (round(float(x), 4) for x in w))), "file": str(out),
                           "ends_split": split, "seconds": round(time.perf_counter() - t0, 1)})
