"""What a ``kgqa train`` run returns: a report that prints itself, as text or as JSON, the same way for every
trainer (the CLI prints it; it never reads a report's fields)."""

from __future__ import annotations

import json
from typing import Any, ContextManager, Protocol


def per_second(rate: float) -> str:
    """A rate as the CLI prints it: whole numbers from 10 up, two significant digits below (0.2, never 0)."""
    return f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"


class Report(dict):
    """A run's figures (a dict: what ``--json`` prints, less the ``hidden`` keys) and its text form
    (``lines()``, which a trainer's report class writes). ``show(as_json)`` prints one or the other."""

    #: keys ``--json`` leaves out (long per-step lists)
    hidden: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        return [f"{k}: {v}" for k, v in self.items() if k not in self.hidden]

    def as_json(self) -> str:
        return json.dumps({k: v for k, v in self.items() if k not in self.hidden}, indent=2, ensure_ascii=False,
                          default=str)

    def show(self, as_json: bool = False) -> None:
        if as_json:
            print(self.as_json())
            return
        for line in self.lines():
            print(line)


class TrainSession(Protocol):
    """What ``kgqa train`` hands a training command (the app's, or a method's own: ``BaseMethod.train_commands``)."""

    #: the environment's Settings (``kgqa.core.config.Settings``)
    settings: Any
    #: whether the report is printed as JSON (``say`` is then silent)
    as_json: bool

    def say(self, msg: str) -> None:
        """A progress line on stdout (flushed), unless the report is printed as JSON."""

    def context(self) -> ContextManager[Any]:
        """The graph, models and KG over the settings as one ``kgqa.core.method.Context``, closed after use."""
