"""The ``kgqa`` command line.

One Typer sub-app per group, one module per group of commands (``common``: the app and
shared helpers; ``admin``: neo4j, doctor; ``load``: load, docs; ``ask``: methods, ask,
compare; ``evaluation``: eval; ``train``; ``trace``; ``serve``). Imports of anything heavy
(the Neo4j driver, torch, models) happen inside the commands, so ``kgqa --help`` is
instant. Every KgqaError becomes one line on stderr and its exit code; ``KGQA_DEBUG=1``
shows the traceback instead.
"""

from __future__ import annotations

import os
import sys

# the command modules register their commands on the app when imported (this order is --help's)
from kgqa.app.cli import admin, ask, evaluation, load, serve, trace, train  # noqa: F401
from kgqa.app.cli.common import app


def main() -> None:
    from kgqa.core.errors import KgqaError

    try:
        app()
    except KgqaError as e:
        if os.environ.get("KGQA_DEBUG"):
            raise
        from kgqa.core.errors import MESSAGE_LIMIT, cap

        print(f"kgqa: error: {cap(str(e), MESSAGE_LIMIT)}", file=sys.stderr)  # one line, never megabytes
        sys.exit(e.exit_code)
    except OSError as e:          # a full disk anywhere (a model export, a state file): one line, exit 5
        from kgqa.core.errors import no_space

        full = no_space(e, getattr(e, "filename", None))
        if full is None or os.environ.get("KGQA_DEBUG"):
            raise
        print(f"kgqa: error: {full}", file=sys.stderr)
        sys.exit(full.exit_code)
    except KeyboardInterrupt:
        print("kgqa: interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit as e:  # Typer turns Ctrl-C into a silent exit 130: say so, as the README promises
        if e.code == 130:
            print("kgqa: interrupted", file=sys.stderr)
        raise

