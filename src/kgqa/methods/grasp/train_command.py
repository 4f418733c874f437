"""``kgqa train grasp``: GraSP's own training subcommand (``GraSP.train_commands``): its arguments, a progress bar
on stderr, and the report of ``kgqa.methods.grasp.training.train_grasp``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from kgqa.core.report import Report, TrainSession, per_second


class GraspReport(Report):
    """``train_grasp``'s report (examples, how, used, dropped_answer_not_in_subgraph, seconds, kg_fingerprint,
    variant, parameters, steps, epoch_losses, checkpoint, bytes, plot, ...); ``epochs`` and ``threads`` are
    the run's, for the text."""

    epochs = 1
    threads = 1

    def lines(self) -> list[str]:
        sec = self["seconds"]
        return [
            f"examples: {self['examples']} ({self['how']}); {self['used']} used, "
            f"{self['dropped_answer_not_in_subgraph']} dropped (answer not in the extracted subgraph)",
            f"time: generate {sec['generate']:.1f} s, subgraphs {sec['prepare']:.1f} s, train {sec['train']:.1f} s "
            f"({per_second(self['used'] * self.epochs / max(sec['train'], 1e-9))} examples/s over {self.epochs} "
            f"epochs); KG fingerprint {self['kg_fingerprint']}",
            f"encoder: {self['variant']}, {self['parameters']:,} parameters · {self['steps']} steps in all · "
            f"torch threads {self.threads}",
            "loss per epoch: " + ", ".join(f"{v:.4f}" for v in self["epoch_losses"]),
            f"checkpoint: {self['checkpoint']} ({self['bytes'] / 1e6:.1f} MB)",
            f"loss curve: {self['plot']}"]


def train_grasp_command(
    session: TrainSession,
    data: Optional[Path] = typer.Option(None, "--data", help="Question/answer pairs (JSON lines: question, answer, "
                                        "topic.id; the kgqa eval format). Default: generated from the loaded KG; "
                                        "with --examples N as well, both."),
    head: str = typer.Option("auto", "--head", help="nodes (a node-scoring head on the GAT, no LLM: minutes on a "
                             "CPU) or softprompt (the paper's soft prompt, the small LLM frozen); auto = nodes unless "
                             "a soft-prompt server is configured."),
    examples: Optional[int] = typer.Option(None, "--examples", min=1, help="How many questions to generate from the "
                                           "KG (default 5000 for --head nodes, 64 for softprompt; with --data: "
                                           "added to the file's)."),
    exclude: Optional[Path] = typer.Option(None, "--exclude", help="A question file whose topic entities generated "
                                           "questions must not use (e.g. the eval set)."),
    variant: str = typer.Option("gat", "--variant", help="gat (GraSP) or text (the text soft-prompt ablation)."),
    epochs: int = typer.Option(3, "--epochs", min=1, help="Epochs (Section 4.4: 3)."),
    lr: Optional[float] = typer.Option(None, "--lr", help="AdamW learning rate (default: Section 4.4's 2e-4; "
                                       "1e-3 for --head nodes)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generated questions, the initial weights and the order."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Checkpoint file (safetensors). Default: "
                                              "<data dir>/models/grasp/grasp-<nodes|gat|text>.safetensors, what "
                                              "ask loads."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the checkpoint's last saved step."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Loss curve PNG (default: beside the checkpoint)."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="KEY=VALUE",
                                               help="A GraSP extraction option (k1, k2, hops, cap, scan_cap)."),
) -> GraspReport:
    """Train GraSP's GAT: a node-scoring head (--head nodes, no LLM) or the GAT + projector with the
    soft-prompt LLM frozen (Section 4.4); seeded, resumable."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from kgqa.core.errors import InvalidInput
    from kgqa.core.method import parse_kv, parse_options
    from kgqa.methods.grasp.algorithm import GraSP
    from kgqa.methods.grasp.training import train_grasp

    s = session.settings
    if head == "auto":
        head = "softprompt" if s.softprompt_backend in ("openai", "vllm") else "nodes"
    if head not in ("nodes", "softprompt"):
        raise InvalidInput(f"--head {head!r}: choose nodes or softprompt")
    if head == "nodes":
        if variant != "gat":
            raise InvalidInput("--variant text is a soft-prompt ablation; use --head softprompt")
        variant = "nodes"
    with_generated = data is not None and examples is not None
    examples = examples or (5000 if head == "nodes" else 64)
    lr = lr or (1e-3 if head == "nodes" else 2e-4)
    opts = parse_options(GraSP, {**parse_kv(option), "triples_only": True})      # extraction options only
    opts = opts.model_copy(update={"triples_only": False})
    say = session.say
    with session.context() as ctx:
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeRemainingColumn(), console=Console(stderr=True, highlight=False),
                      disable=not sys.stderr.isatty(), transient=True) as bar:
            prep = bar.add_task("subgraphs", total=None)
            steps = bar.add_task("training", total=None, visible=False)

            def on_step(epoch, k, loss):
                bar.update(steps, visible=True, description=f"epoch {epoch + 1}/{epochs} loss {loss:.3f}",
                           completed=k + 1)

            def on_epoch(epoch, mean):
                say(f"epoch {epoch + 1}/{epochs}: mean loss {mean:.4f}")

            rep = GraspReport(train_grasp(
                ctx, options=opts, variant=variant, data=data, with_generated=with_generated, examples=examples,
                exclude=exclude, epochs=epochs, lr=lr, seed=seed, checkpoint=checkpoint, resume=resume, plot=plot,
                on_prepare=lambda: bar.advance(prep), on_step=on_step, on_epoch=on_epoch,
                on_ready=lambda n, r: (bar.update(prep, visible=False), bar.update(steps, total=n),
                                       say(f"resumed after epoch {r[0]} (step {r[1]} of it)") if r else None)))
    rep.epochs, rep.threads = epochs, s.torch_threads
    return rep
