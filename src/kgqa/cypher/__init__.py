"""Every Cypher query kgqa runs, one file each, loaded by name.

A file starts with a header of ``//`` comment lines (purpose, params, returns);
the rest is the query. Values always arrive as ``$params``. A file may hold
several statements separated by a ``;`` at the end of a line (``schema.cypher``);
``statements(name)`` splits those.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def names() -> list[str]:
    """Names of all bundled queries."""
    return sorted(
        p.name[: -len(".cypher")]
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(".cypher")
    )


@lru_cache(maxsize=None)
def load(name: str) -> str:
    """The text of ``cypher/<name>.cypher`` (header comments included)."""
    if not _NAME.match(name):
        raise ValueError(f"bad query name {name!r}")
    path = resources.files(__name__) / f"{name}.cypher"
    if not path.is_file():
        raise KeyError(f"no query named {name!r} in kgqa.cypher")
    return path.read_text(encoding="utf-8")


def header(name: str) -> str:
    """The leading ``//`` comment block of a query, without the slashes."""
    lines = []
    for line in load(name).splitlines():
        if not line.startswith("//"):
            break
        lines.append(line[2:].strip())
    return "\n".join(lines)


def statements(name: str) -> list[str]:
    """The statements of a query file, comments removed, split on a final ``;``."""
    body = "\n".join(
        line for line in load(name).splitlines() if not line.lstrip().startswith("//")
    )
    return [s.strip() for s in re.split(r";\s*$", body, flags=re.M) if s.strip()]
