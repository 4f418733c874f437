"""Every ``kgqa`` command line that README.md, docs/ARCHITECTURE.md and docs/guide/ show names commands, flags,
method options, option values and ablations that the CLI has: a renamed flag, a dropped subcommand or a changed
option fails here instead of in a reader's terminal. And every command line of README.md is run by a test: a test
(with the helpers and fixtures it uses) passes that command, as adjacent words, and every flag the README line
shows to the CLI; a README command that no test runs fails here, naming itself.

Read from the documents: the indented command lines (with their ``[...]`` continuation lines) and the inline
``kgqa …`` code spans. ``a | b`` alternatives are each checked; a word after ``|`` that names a sibling
command (``docs list | show ID``) switches to it. Placeholders (``ID``, ``DIR``, ``…``, ``a,b``) are skipped.
Nothing connects: the CLI's click tree and each method's ``Options`` are read, not run.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import typer

from kgqa.app.cli import app
from kgqa.core.method import parse_options
from kgqa.methods.registry import method_classes

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCUMENTS = [README, REPO / "docs" / "ARCHITECTURE.md", *sorted((REPO / "docs" / "guide").glob("*.md"))]
TOKEN = re.compile(r'"[^"]*"|\'[^\']*\'|“[^”]*”|[^\s"\']+')


def command_lines(path: Path) -> list[tuple[str, str]]:
    """(where, command text) of every ``kgqa`` command line of a Markdown file."""
    out: list[list] = []
    fenced, last = False, -1
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        s = line.strip()
        if fenced:
            continue
        if line.startswith("    ") and s.startswith("kgqa "):
            out.append([f"{path.name}:{n}", s.split("  #")[0]])
            last = n
        elif line.startswith("    ") and last == n - 1 and s[:1] in "[-":
            out[-1][1] += " " + s.split("  #")[0]
            last = n
        else:
            out += [[f"{path.name}:{n}", m.group(1)] for m in re.finditer(r"`(kgqa [^`]+)`", line)]
    return [(w, c) for w, c in out]


def _is_group(cmd) -> bool:
    return hasattr(cmd, "commands")                         # typer's (vendored) click group


def _params(cmd) -> set[str]:
    return {o for p in cmd.params if getattr(p, "param_type_name", "") == "option"
            for o in (*p.opts, *p.secondary_opts)}


def _placeholder(value: str) -> bool:
    return (not value or value in ("…", "...") or value.isupper() or value.startswith("[")
            or all(len(part) <= 1 for part in value.split(",")))


def _check_option(where: str, methods: dict, method: str | None, pair: str) -> None:
    key, sep, value = pair.strip("[]").partition("=")
    if not sep or key.endswith("KEY"):
        return                                              # -o KEY=VALUE, -o [METHOD.]KEY=VALUE
    if "." in key:
        method, key = key.split(".", 1)
    owners = [methods[method]] if method in methods else list(methods.values())
    assert any(key in c.Options.model_fields for c in owners), f"{where}: -o {key}: no such option"
    for v in value.strip("]").split("|"):
        if not _placeholder(v):
            cls = next(c for c in owners if key in c.Options.model_fields)
            parse_options(cls, {key: v})                    # raises InvalidInput naming the value


def check_command(where: str, text: str, root, methods: dict) -> None:
    method_flags = {f for c in methods.values() for f in c.cli_flags}
    words = TOKEN.findall(text)[1:]                         # after "kgqa"
    cmd, parent, i = root, None, 0
    while _is_group(cmd) and i < len(words):
        w = words[i]
        if not re.fullmatch(r"[a-z][a-z0-9-]*", w):
            break
        assert w in cmd.commands, f"{where}: kgqa … {w}: no such command (known: {sorted(cmd.commands)})"
        parent, cmd, i = cmd, cmd.commands[w], i + 1
    method = "vispath" if cmd.name in ("ask", "eval") else None
    rest = words[i:]
    for j, w in enumerate(rest):
        nxt = rest[j + 1] if j + 1 < len(rest) else ""
        if w == "|" and parent is not None and nxt in parent.commands:
            cmd = parent.commands[nxt]                      # docs list | show ID: the sibling command
            continue
        for flag in re.findall(r"(?:^|[\[|])(--?[A-Za-z][\w-]*)", w):
            if _is_group(cmd):
                continue                                    # kgqa load … : no leaf named
            allowed = _params(cmd) | (method_flags if cmd.name in ("ask", "eval") else set())
            assert flag in allowed, f"{where}: kgqa {cmd.name} {flag}: no such flag (known: {sorted(allowed)})"
            value = nxt.strip("[]")
            if flag in ("--method", "--methods") and not _placeholder(value):
                for name in value.split(","):
                    assert name == "all" or name in methods, f"{where}: {flag} {name}: no such method"
                method = value if value in methods else None
            elif flag in ("-o", "--option") and cmd.name in ("ask", "eval", "compare"):
                _check_option(where, methods, method, nxt)
            elif flag == "--ablate" and not _placeholder(value):
                owners = [methods[method]] if method in methods else list(methods.values())
                assert any(value in c.ablations for c in owners), f"{where}: --ablate {value}: no such ablation"


LINES = [(w, c) for doc in DOCUMENTS for w, c in command_lines(doc)]


def test_the_documents_show_commands():
    assert len(LINES) > 40
    assert any("load wikidata5m" in c for _, c in LINES) and any("train reader" in c for _, c in LINES)


@pytest.mark.parametrize("where,text", LINES, ids=[w for w, _ in LINES])
def test_every_documented_command_exists(where, text):
    check_command(where, text, typer.main.get_command(app), method_classes())


def test_the_check_fails_on_drift():
    root, methods = typer.main.get_command(app), method_classes()
    for bad in ("kgqa evaluate q.jsonl", "kgqa train paths --learning-rate 5e-5", "kgqa ask \"q\" -o M7=3",
                "kgqa ask \"q\" --method mkgrag -o reader=psychic", "kgqa docs list | show ID --yaml",
                "kgqa ask \"q\" --ablate no_such_thing"):
        with pytest.raises(Exception):
            check_command("test", bad, root, methods)


def test_a_slow_rate_is_not_printed_as_zero():
    """kgqa train grasp --head softprompt on a CPU trains ~0.2 examples/s: README promises examples/s, not 0."""
    from kgqa.core.report import per_second

    assert per_second(0.195) in ("0.2", "0.19") and per_second(91.3) == "91" and per_second(12_345.6) == "12,346"


# --- every README command is run by a test ---------------------------------------------------------------------

TESTS = REPO / "tests"
#: test modules that only read the documents (they name commands without running them)
READERS = {"test_readme_commands.py", "test_reference.py", "test_option_texts.py", "test_doc_links.py"}


def _word_runs(fn) -> list[list[str]]:
    """The string literals of each call's arguments and of each list or tuple in ``fn``, as runs of words (a
    value that is not a literal breaks a run)."""
    runs = []
    for node in ast.walk(fn):
        items = (node.args if isinstance(node, ast.Call)
                 else node.elts if isinstance(node, (ast.List, ast.Tuple)) else None)
        if not items:
            continue
        run: list[str] = []
        for item in items:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                run += item.value.split()
            else:
                runs.append(run)
                run = []
        runs.append(run)
    return [r for r in runs if r]


def _functions(tree) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def runners() -> list[tuple[str, list[list[str]]]]:
    """(test id, word runs) of every test function under tests/, each with the runs of the same module's helpers
    it calls and of the fixtures (its module's or a conftest's) it takes."""
    shared = {}
    for conf in sorted(TESTS.rglob("conftest.py")):
        shared.update(_functions(ast.parse(conf.read_text(encoding="utf-8"))))
    out = []
    for path in sorted(TESTS.rglob("test_*.py")):
        if path.name in READERS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        local = {**shared, **_functions(tree)}
        for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")):
            used = {c.func.id for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
            used |= {a.arg for a in fn.args.args}
            runs = _word_runs(fn) + [r for name in sorted(used & local.keys() - {fn.name})
                                     for r in _word_runs(local[name])]
            out.append((f"{path.relative_to(REPO)}::{fn.name}", runs))
    return out


def path_and_flags(text: str, root) -> tuple[list[str], set[str]]:
    """The subcommand words of a ``kgqa …`` line (``["load", "documents"]``) and the flags it shows."""
    words = TOKEN.findall(text)[1:]
    cmd, path = root, []
    while _is_group(cmd) and words[len(path):] and words[len(path)] in cmd.commands:
        cmd = cmd.commands[words[len(path)]]
        path.append(cmd.name)
    flags = {f for w in words[len(path):] for f in re.findall(r"(?:^|[\[|])(--?[A-Za-z][\w-]*)", w)}
    return path, flags


def running_tests(path: list[str], flags: set[str], tests) -> list[str]:
    """The tests that pass ``path`` (adjacent words) and every one of ``flags`` to the CLI."""
    def has_path(runs):
        n = len(path)
        return any(r[i:i + n] == path for r in runs for i in range(len(r) - n + 1))

    def words(runs):
        return {w.split("=")[0] for r in runs for w in r}

    return [t for t, runs in tests if has_path(runs) and flags <= words(runs)]


README_LINES = command_lines(README)


@pytest.fixture(scope="module")
def all_tests():
    return runners()


@pytest.mark.parametrize("where,text", README_LINES, ids=[w for w, _ in README_LINES])
def test_every_readme_command_is_run_by_a_test(where, text, all_tests):
    path, flags = path_and_flags(text, typer.main.get_command(app))
    assert path, f"{where}: `{text}` names no kgqa command"
    found = running_tests(path, flags, all_tests)
    assert found, (f"{where}: no test runs `kgqa {' '.join(path)}` with {sorted(flags) or 'no flags'} "
                   f"(from `{text}`): add one under tests/ that runs it")


def test_the_run_check_fails_on_an_untested_command():
    root, tests = typer.main.get_command(app), runners()
    path, flags = path_and_flags("kgqa load documents DIR --paragraphs", root)
    assert path == ["load", "documents"] and flags == {"--paragraphs"}
    assert running_tests(path, flags, tests)
    for untested in ("kgqa load documents DIR --no-such-flag", "kgqa train ranker --time-limit 60",
                     "kgqa serve --workers 2"):
        assert not running_tests(*path_and_flags(untested, root), tests), untested
    assert len(README_LINES) >= 15
