"""What ``kgqa methods`` and ``kgqa … --help`` print says what a value does and its range: never the history of a
default (no dates, no before/after figures, no "default until", no "measured"; those are in CHANGELOG.md and
docs/benchmarks.md). Each text is non-empty, has balanced brackets and ends cleanly."""

from __future__ import annotations

import re

import pytest
import typer

from kgqa.app.cli import app
from kgqa.methods.registry import method_classes

HISTORY = [
    (re.compile(r"\b\d{4}-\d\d(-\d\d)?\b"), "a date"),
    (re.compile(r"\b20[2-3]\d\b"), "a year"),
    (re.compile(r"\d[\d.,]*\s*%?\s*(->|→)\s*\d"), "a before -> after figure pair"),
    (re.compile(r"\d[\d.,]*\s*%?\s+against\s+\d"), "a figure against a figure"),
    (re.compile(r"\bdefault (until|since|before)\b|\bas before\b|\b(before|until|since) (the )?(change|20\d\d)", re.I),
     "a default's history"),
    (re.compile(r"\bmeasured\b|\bnot shipped\b|\bnot kept\b", re.I), "a measurement"),
    (re.compile(r"\bEM \d|\bF1 \d|\d+(\.\d+)? ?(EM|percent)\b"), "a score"),
    (re.compile(r"docs/benchmarks\.md|bench/"), "a pointer to measurements"),
]


def problems(text: str) -> list[str]:
    """Why ``text`` is not a clean option or help text (empty list: it is)."""
    out = [why for pattern, why in HISTORY if pattern.search(text)]
    stripped = text.strip()
    if not stripped:
        out.append("it is empty")
    elif stripped[-1] in ",;:(-–—/" or text != text.rstrip():
        out.append(f"it ends with {stripped[-1]!r}")
    for a, b in ("()", "[]", "{}"):
        if text.count(a) != text.count(b):
            out.append(f"unbalanced {a}{b}")
    return out


def option_texts():
    for name, cls in method_classes().items():
        for option, field in cls.Options.model_fields.items():
            yield f"{name}.{option}", field.description or ""


def help_texts():
    def walk(cmd, path):
        if cmd.help is not None or path == "kgqa":
            yield path, cmd.help or ""
        for p in cmd.params:
            if getattr(p, "param_type_name", "") == "option" and not getattr(p, "hidden", False):
                yield f"{path} {p.opts[0]}", p.help or ""
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, f"{path} {name}")
    yield from walk(typer.main.get_command(app), "kgqa")


@pytest.mark.parametrize("where,text", list(option_texts()), ids=[w for w, _ in option_texts()])
def test_every_method_option_says_what_it_does_not_its_history(where, text):
    assert not problems(text), f"-o {where}: {'; '.join(problems(text))}: {text!r}"


@pytest.mark.parametrize("where,text", list(help_texts()), ids=[w for w, _ in help_texts()])
def test_every_command_and_flag_help_says_what_it_does_not_its_history(where, text):
    assert not problems(text), f"{where}: {'; '.join(problems(text))}: {text!r}"


def test_the_check_catches_history():
    for bad in ("0.75 chosen on held-out articles, 0.5 before 2026-12-06", "EM 45.0 -> 49.2 with the ranker",
                "the rule reader, the CPU default until 2026", "measured to help", "paths kept per hop;",
                "recall 90.0 → 98.1", "(unclosed", ""):
        assert problems(bad), bad
    assert not problems("edges kept per frontier entity by Eq. 5 (Eq. 5–7)")
    assert not problems("edges per frontier entity ranked by relation score; 0 = no cap, 2000 at most")
