"""A fifth method, a test's own, with its own training subcommand: ``Toy`` answers with a number it learned
(``kgqa train toy`` fits it: the mean of the ``--value``s), registered with ``register()``. No file of
``kgqa.app`` names it (tests/unit/test_train_command.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar, Optional

import typer
from pydantic import BaseModel, ConfigDict, Field

from kgqa.core.method import BaseMethod, Query
from kgqa.core.report import Report, TrainSession
from kgqa.core.result import Answer
from kgqa.methods import registry


class ToyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    checkpoint: str = Field("", description="the number kgqa train toy learned (a JSON file)")


class Toy(BaseMethod):
    """Answers every question with the number ``kgqa train toy`` learned."""

    name: ClassVar[str] = "toy"
    title: ClassVar[str] = "A learned constant (a test's method)"
    Options: ClassVar[type[BaseModel]] = ToyOptions

    def solve(self, query: Query) -> Answer:
        mean = json.loads(Path(self.opt.checkpoint).read_text())["mean"]
        return Answer(question=query.question, answer=str(mean), method=self.name, stop_reason="learned")


class ToyReport(Report):
    hidden = ("values",)

    def lines(self) -> list[str]:
        return [f"toy: mean {self['mean']} of {self['count']} values", f"checkpoint: {self['checkpoint']}"]


def train_toy(
    session: TrainSession,
    value: list[float] = typer.Option(..., "--value", help="A number to learn from; repeatable."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Where the learned number goes (JSON)."),
) -> ToyReport:
    """Learn the toy method's number: the mean of the values."""
    session.say(f"fitting {len(value)} values")
    mean = sum(value) / len(value)
    out = checkpoint or Path(session.settings.models_dir) / "toy" / "toy.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"mean": mean}))
    return ToyReport(values=list(value), count=len(value), mean=mean, checkpoint=str(out))


def register() -> None:
    registry.register_method(Toy)
    registry.register_train_command("toy", train_toy)


def unregister() -> None:
    registry.unregister_train_command("toy")
    registry.unregister_method(Toy.name)
