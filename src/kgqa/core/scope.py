"""A question scoped to chosen documents (``kgqa ask --doc ID --docs GLOB``, the HTTP API's ``docs`` and
``docs_glob``, ``Pipeline.answer(docs=…, docs_glob=…)``): the ids and patterns resolved against the loaded
documents before anything is answered. An id that is not loaded, or a pattern that matches none, is one line
(``InvalidInput``, exit 2). A pattern (``fnmatch``: ``*``, ``?``, ``[...]``) matches a document's id, its
source path or that path's file name (``--docs 'flag_*'``, ``--docs '*.pdf'``, ``--docs 'manuals/*'``)."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import PurePath

from kgqa.core.errors import InvalidInput
from kgqa.core.inputs import check_text

MAX_SCOPE_ITEMS = 1000          # ids and patterns in one question


def check_scope(ids=None, globs=None) -> tuple[list[str], list[str]]:
    """The ids and patterns as lists, each through the input gate (text, valid UTF-8, no control character),
    at most ``MAX_SCOPE_ITEMS``: checked where they enter, before anything connects."""
    ids = [ids] if isinstance(ids, str) else list(ids or [])
    globs = [globs] if isinstance(globs, str) else list(globs or [])
    if len(ids) + len(globs) > MAX_SCOPE_ITEMS:
        raise InvalidInput(f"--doc/--docs: {len(ids) + len(globs):,} given, over the limit of {MAX_SCOPE_ITEMS:,}")
    for x in ids + globs:
        check_text(x, "--doc/--docs: a document id or pattern")
    return ids, globs


def resolve_scope(graph, ids=None, globs=None) -> tuple[str, ...]:
    """The document ids a question is restricted to, in the order given (ids, then each pattern's matches by
    id); () when neither is given."""
    ids, globs = check_scope(ids, globs)
    if not ids and not globs:
        return ()
    out: list[str] = []
    if ids:
        found = {r["id"] for r in graph.read("docs_scope", ids=ids, all=False)}
        missing = [i for i in ids if i not in found]
        if missing:
            raise InvalidInput(f"--doc {missing[0]}: no such document loaded"
                               + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                               + "; kgqa docs list shows the loaded ones")
        out += ids
    if globs:
        rows = graph.read("docs_scope", ids=[], all=True)
        for g in globs:
            hits = sorted(r["id"] for r in rows if _matches(r, g))
            if not hits:
                raise InvalidInput(f"--docs {g!r}: matches no loaded document (by id, path or file name); "
                                   "kgqa docs list shows the loaded ones")
            out += hits
    return tuple(dict.fromkeys(out))


def _matches(row: dict, pattern: str) -> bool:
    """A document (``docs_scope`` row) matches by id, source path, the path's end or its file name."""
    src = row.get("source") or ""
    return (fnmatchcase(row["id"], pattern)
            or bool(src) and (fnmatchcase(src, pattern) or fnmatchcase(src, f"*/{pattern}")
                              or fnmatchcase(PurePath(src).name, pattern)))
