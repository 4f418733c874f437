"""Progress of a load: what the user sees while the loaders work.

* ``Bars``: one rich bar per phase of a Wikidata5M load (rows, rows/s) on a terminal's stderr;
  ``LogProgress`` lines on stdout when stderr is not a terminal; or nothing.
* ``DocumentProgress``: one bar over the documents of ``kgqa load documents``, its description
  naming the document and the stage running; with ``log=True`` (stderr not a terminal) lines on
  stdout instead: one per document done and, inside a long document, one every 30 s for the step
  running (text graph, embeddings, write: done/total, its rate since the step began, ETA), plus one
  when a document's step over at least ``big`` units ends; or nothing.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def _rate(per_s: float) -> str:
    """A rate as people read it: whole units from 10 a second, one decimal below (a percent a second)."""
    return f"{per_s:,.0f}" if per_s >= 10 else f"{per_s:.1f}"


class LogProgress:
    """Progress for a log (stderr not a terminal: CI, nohup, a service): a line when a phase starts
    and ends, and every ``interval`` seconds a line with rows, rate and ETA. Written to stdout, so
    that stderr keeps the one-line error contract and ``kgqa load … > load.log`` keeps the progress."""

    def __init__(self, interval: float = 30.0, out=None):
        self.interval = interval
        self.out = out or sys.stdout
        self.tasks: dict[int, dict] = {}

    def _say(self, text: str) -> None:
        print(f"kgqa load: {text}", file=self.out, flush=True)

    def add(self, name: str, total: int | None, unit: str = "rows") -> int:
        tid = len(self.tasks)
        now = time.monotonic()
        self.tasks[tid] = {"name": name, "total": total, "done": 0, "t0": now, "last": now, "unit": unit}
        self._say(f"{name}: started" + (f" ({total:,} {unit})" if total else ""))
        return tid

    def advance(self, tid: int, n: int) -> None:
        t = self.tasks[tid]
        t["done"] += n
        now = time.monotonic()
        if now - t["last"] >= self.interval:
            t["last"] = now
            rate = t["done"] / max(now - t["t0"], 1e-9)
            eta = (f" · ETA {(t['total'] - t['done']) / rate:,.0f} s" if t["total"] and rate > 0
                   and t["total"] > t["done"] else "")
            of = f"/{t['total']:,}" if t["total"] else ""
            self._say(f"{t['name']}: {t['done']:,}{of} {t['unit']} · {_rate(rate)} {t['unit']}/s{eta}")

    def finish(self, tid: int, rows: int) -> None:
        t = self.tasks[tid]
        el = time.monotonic() - t["t0"]
        self._say(f"{t['name']}: done, {rows:,} {t['unit']} in {el:,.1f} s "
                  f"({_rate(rows / el if el > 0 else 0)} {t['unit']}/s)")


class Bars:
    """Rich progress bars (one per phase, with rows/s) on a terminal, log lines otherwise, or nothing."""

    def __init__(self, enabled: bool):
        self._progress = None
        self._log = None
        if enabled and not sys.stderr.isatty():
            self._log = LogProgress()
            enabled = False
        if enabled:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn,
                                       TextColumn, TimeElapsedColumn)
            from rich.text import Text

            class RateColumn(ProgressColumn):
                def render(self, task):
                    el = task.elapsed or 0
                    unit = task.fields.get("unit", "rows")
                    return Text(f"{_rate(task.completed / el)} {unit}/s" if el > 0 else "", style="cyan")

            self._progress = Progress(TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(),
                                      RateColumn(), TimeElapsedColumn(),
                                      console=Console(stderr=True), transient=False, refresh_per_second=4)

    def __enter__(self):
        if self._progress:
            self._progress.start()
        return self

    def __exit__(self, *exc):
        if self._progress:
            self._progress.stop()

    def add(self, name: str, total: int | None, unit: str = "rows") -> Any:
        if self._log:
            return self._log.add(name, total, unit)
        return self._progress.add_task(name, total=total, unit=unit) if self._progress else None

    def advance(self, task, n: int) -> None:
        if self._log and task is not None:
            self._log.advance(task, n)
        if self._progress and task is not None:
            self._progress.advance(task, n)

    def finish(self, task, rows: int) -> None:
        if self._log and task is not None:
            self._log.finish(task, rows)
        if self._progress and task is not None:
            self._progress.update(task, total=rows, completed=rows)
            self._progress.stop_task(task)


class DocumentProgress:
    """One bar over documents; its description names the document and the stage running. With
    ``log`` (no terminal), lines with rate and ETA instead. Disabled, it shows nothing."""

    def __init__(self, total: int, enabled: bool = True, log: bool = False, interval: float = 30.0, out=None,
                 big: int = 1000):
        self.p = None
        self.name = ""
        self.total, self.done = total, 0
        self.log = log and not enabled
        self.interval, self.out, self.big = interval, out or sys.stdout, big
        self.t0 = self.doc_t0 = self.last = self.mark = time.monotonic()
        self.step, self.step_t0 = "", self.t0
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                              transient=True)
            self.task = self.p.add_task("documents", total=total)

    def _say(self, text: str) -> None:
        print(f"kgqa load documents: {text}", file=self.out, flush=True)

    def __enter__(self):
        if self.p:
            self.p.__enter__()
        if self.log and self.total:
            self._say(f"{self.total:,} document(s) to load")
        return self

    def __exit__(self, *exc):
        return self.p.__exit__(*exc) if self.p else False

    def doc(self, name):
        self.name = name
        self.doc_t0 = self.last = self.mark = time.monotonic()
        self.step = ""
        if self.p:
            self.p.update(self.task, description=f"{name}")

    def stage(self, name):
        self.mark = time.monotonic()
        if self.p:
            self.p.update(self.task, description=f"{self.name}: {name}")

    def say(self, text: str) -> None:
        """A line about the load, whatever the document's size: above the bar on a terminal, in the log."""
        if self.p:
            self.p.console.print(text, markup=False, highlight=False)
        elif self.log:
            self._say(text)

    def note(self, text: str, size: int) -> None:
        """A log line about the current document when it is a big one (``size`` ≥ ``big``), e.g. its chunks."""
        if self.log and size >= self.big:
            self._say(f"{self.name}: {text}")

    def chunks(self, what: str, done: int, total: int, unit: str = "chunks") -> None:
        """Inside a document: ``done`` of ``total`` ``unit`` through the step ``what``; a log line every
        ``interval`` s (rate since the step began), and one when a step over ``big`` units ends. A step's
        first report may already count units (an encoder reports after its first batch): the step began at
        the document's previous event (its start, a stage, the previous step's last report), not now."""
        now = time.monotonic()
        if what != self.step:
            self.step, self.step_t0 = what, self.mark
        self.mark = now
        if self.p:
            self.p.update(self.task, description=f"{self.name}: {what} {done:,}/{total:,} {unit}")
        if not self.log or not done:
            return
        rate = done / max(now - self.step_t0, 1e-9)
        if done >= total and total >= self.big:
            self.last = now
            self._say(f"{self.name}: {what} done, {total:,} {unit} in {now - self.step_t0:,.1f} s · "
                      f"{rate:,.1f} {unit}/s")
        elif now - self.last >= self.interval:
            self.last = now
            self._say(f"{self.name}: {what} {done:,}/{total:,} {unit} · {rate:,.1f} {unit}/s · "
                      f"ETA {_eta((total - done) / rate)}")

    def advance(self):
        self.done += 1
        if self.p:
            self.p.advance(self.task)
        if self.log:
            now = time.monotonic()
            rate = self.done / max(now - self.t0, 1e-9) * 60
            left = self.total - self.done
            self._say(f"{self.done:,}/{self.total:,} documents · {self.name} in {now - self.doc_t0:,.1f} s · "
                      f"{rate:,.1f} documents/min" + (f" · ETA {_eta(left / rate * 60)}" if left else ""))


def _eta(seconds: float) -> str:
    return f"{seconds:,.0f} s" if seconds < 120 else f"{seconds / 60:,.1f} min"
