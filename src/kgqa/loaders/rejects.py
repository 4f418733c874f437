"""What a loader does with a bad input line, file or image: ``--strict`` or ``--lenient``.

Strict (the default) raises ``InvalidInput("where: why")`` at the first problem, before anything
is written. Lenient counts it by reason and goes on; given a ``path`` (Wikidata5M), it also
appends ``where<TAB>why<TAB>line`` to that rejects file, and it remembers which line of which
input file was bad, so that the write pass skips it.
"""

from __future__ import annotations

from pathlib import Path

from kgqa.core.errors import InvalidInput, cap, no_space

#: The most characters of a bad line copied into the rejects file.
REJECT_LINE_CHARS = 1000


class Rejects:
    """``reject(where, why, raw="", reason=None)``: raise (strict), or count and go on (lenient).

    ``by_reason`` counts lenient rejects by ``reason`` (by default the part of ``why`` before its
    first colon; a caller may pass its report's dict). ``why_limit`` caps the ``why`` echoed
    (a 10 MB id is not a 10 MB message); ``path`` is the rejects file, opened at the first reject.
    """

    def __init__(self, strict: bool, path: Path | None = None, *, by_reason: dict[str, int] | None = None,
                 why_limit: int | None = None):
        self.strict = strict
        self.path = path
        self.why_limit = why_limit
        self.count = 0
        self.by_reason: dict[str, int] = by_reason if by_reason is not None else {}
        self.lines: dict[Path, set[int]] = {}  # bad line numbers per file, skipped by the write pass
        self._fh = None

    def __call__(self, where: str, why: str, raw: str | bytes = "", reason: str | None = None) -> None:
        if self.why_limit is not None:
            why = cap(why, self.why_limit)
        if self.strict:
            raise InvalidInput(f"{where}: {why}")
        if self.path is not None:
            if isinstance(raw, bytes):
                raw = raw.decode("utf-8", "replace")
            raw = cap(raw.rstrip("\r\n").replace("\t", "\\t"), REJECT_LINE_CHARS)
            try:
                if self._fh is None:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._fh = open(self.path, "w", encoding="utf-8")
                    self._fh.write("where\twhy\tline\n")
                self._fh.write(f"{where}\t{why}\t{raw}\n")
            except OSError as e:
                self._full(e)
        self.count += 1
        reason = reason or why.split(":", 1)[0]
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1

    def line(self, path: Path, lineno: int, why: str, raw) -> None:
        """A bad line of an input file: rejected, and remembered for ``skip``."""
        self(f"{path}:{lineno}", why, raw)
        self.lines.setdefault(path, set()).add(lineno)

    def skip(self, path: Path, lineno: int) -> bool:
        s = self.lines.get(path)
        return bool(s) and lineno in s

    def _full(self, e: OSError):
        """A full disk while writing the rejects file: one line naming it (validation writes nothing to the
        graph before it ends, so the graph is untouched); any other OSError goes on as it is."""
        err = no_space(e, self.path, what="the rejects file")
        if err is None:
            raise e
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError:
                pass
        raise err from None

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.close()
            except OSError as e:
                self._full(e)
