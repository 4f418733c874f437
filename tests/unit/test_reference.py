"""docs/reference/ is generated from the code by one command (``make reference``); a committed page that the
code no longer gives fails here, naming the page and the command that regenerates it."""

from __future__ import annotations

import difflib
from pathlib import Path

from kgqa.app import reference

REPO = Path(__file__).resolve().parents[2]
COMMITTED = REPO / "docs" / "reference"


def test_the_committed_reference_is_what_the_code_gives(tmp_path):
    assert reference.main([str(tmp_path)]) == 0
    stale = []
    for page in sorted(reference.PAGES):
        new = (tmp_path / page).read_text(encoding="utf-8")
        old = (COMMITTED / page).read_text(encoding="utf-8") if (COMMITTED / page).is_file() else ""
        if new != old:
            diff = "".join(list(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                     f"committed {page}", f"generated {page}", n=0))[:12])
            stale.append(f"docs/reference/{page} is stale:\n{diff}")
    assert not stale, "\n".join(stale) + "\nrun `make reference` and commit docs/reference/"


def test_the_reference_covers_every_command_setting_option_and_error_class():
    pages = reference.generate()
    for command in ("## kgqa ask", "## kgqa load wikidata5m", "## kgqa train reader", "## kgqa neo4j start"):
        assert command + "\n" in pages["cli.md"]
    assert "`--chunk-tokens <int range>` | Chunk size" in pages["cli.md"]
    assert "| `KGQA_SERVE_QUEUE` | int (≥ 1) | `32` |" in pages["settings.md"]
    assert "| `M1` | `30` | int" in pages["methods.md"] and "## grasp" in pages["methods.md"]
    assert "| 2 | `InvalidInput` |" in pages["errors.md"] and "| 5 | `NoSpace` |" in pages["errors.md"]
    assert "trace rm takes exactly one of: ID, --older-than DAYS, --all" in pages["errors.md"]


def test_the_reference_does_not_depend_on_the_terminal_or_the_machine(monkeypatch):
    first = reference.generate()
    monkeypatch.setenv("COLUMNS", "37")
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("XDG_DATA_HOME", "/elsewhere")
    assert reference.generate() == first
    assert "/elsewhere" not in "".join(first.values()) and str(Path.home()) not in "".join(first.values())
