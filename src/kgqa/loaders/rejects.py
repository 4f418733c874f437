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
#: The most rejects remembered by name for the report (all of them go to the rejects file).
NAMED_LIMIT = 10_000


def shown(text: str) -> str:
    """``text`` as it can be printed and written: a file name's undecodable bytes (surrogate escapes) as
    ``\\xNN``."""
    if not isinstance(text, str):
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:                # a lone surrogate that is no escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


class Rejects:
    """``reject(where, why, raw="", reason=None)``: raise (strict), or count and go on (lenient).

    ``by_reason`` counts lenient rejects by ``reason`` (by default the part of ``why`` before its
    first colon; a caller may pass its report's dict). ``why_limit`` caps the ``why`` echoed
    (a 10 MB id is not a 10 MB message); ``path`` is the rejects file, opened at the first reject.
    ``inputs``: the input files in the order they are validated, for the space a full disk's line says the
    rejects file needs (its bytes so far, extrapolated over the rest of the input).
    """

    def __init__(self, strict: bool, path: Path | None = None, *, by_reason: dict[str, int] | None = None,
                 why_limit: int | None = None, inputs: list[Path] | None = None):
        self.strict = strict
        self.path = path
        self.why_limit = why_limit
        self.count = 0
        self.by_reason: dict[str, int] = by_reason if by_reason is not None else {}
        self.lines: dict[Path, set[int]] = {}  # bad line numbers per file, skipped by the write pass
        self.named: list[tuple[str, str]] = []  # (where, why) of each lenient reject, the first NAMED_LIMIT
        self.inputs = [Path(p) for p in inputs or () if p is not None]
        self.written = 0                       # bytes written to the rejects file
        self._first: tuple[Path, int] | None = None   # the input line of the first reject, and of the last
        self._last: tuple[Path, int] | None = None
        self._fh = None

    def __call__(self, where: str, why: str, raw: str | bytes = "", reason: str | None = None) -> None:
        where, why = shown(where), shown(why)
        if self.why_limit is not None:
            why = cap(why, self.why_limit)
        if self.strict:
            raise InvalidInput(f"{where}: {why}")
        if self.path is not None:
            if isinstance(raw, bytes):
                raw = raw.decode("utf-8", "replace")
            raw = cap(shown(raw).rstrip("\r\n").replace("\t", "\\t"), REJECT_LINE_CHARS)
            try:
                if self._fh is None:           # first opened, or again after close(): appended to
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._fh = open(self.path, "a" if self.written else "w", encoding="utf-8")
                    if not self.written:
                        self.written += self._fh.write("where\twhy\tline\n")
                record = f"{where}\t{why}\t{raw}\n"
                self._fh.write(record)
                self.written += len(record.encode("utf-8", "replace"))
            except OSError as e:
                self._full(e)
        self.count += 1
        if len(self.named) < NAMED_LIMIT:
            self.named.append((where, why))
        reason = reason or why.split(":", 1)[0]
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1

    def line(self, path: Path, lineno: int, why: str, raw) -> None:
        """A bad line of an input file: rejected, and remembered for ``skip``."""
        self._last = (Path(path), lineno)
        self._first = self._first or self._last
        self(f"{path}:{lineno}", why, raw)
        self.lines.setdefault(path, set()).add(lineno)

    def skip(self, path: Path, lineno: int) -> bool:
        s = self.lines.get(path)
        return bool(s) and lineno in s

    def _full(self, e: OSError):
        """A full disk while writing the rejects file: one line naming it (validation writes nothing to the
        graph before it ends, so the graph is untouched); any other OSError goes on as it is."""
        need = self._need()
        err = no_space(e, self.path, need_bytes=need[0] if need else None, what="the rejects file",
                       basis=need[1] if need else "")
        if err is None:
            raise e
        fh, self._fh = self._fh, None
        if fh is not None:
            try:
                fh.close()
            except OSError:
                pass
        raise err from None

    def _need(self) -> tuple[int, str] | None:
        """(bytes, how estimated) the whole rejects file needs: what it took from the first reject to the line
        being rejected, at that rate over the rest of the input; None when that cannot be had (no input list,
        a reject outside it, nothing written yet)."""
        if not (self.inputs and self._first and self._last and self.written):
            return None
        try:
            sizes = [p.stat().st_size for p in self.inputs]
            (p0, n0), (p1, n1) = self._first, self._last
            first = sum(sizes[:self.inputs.index(p0)]) + _offset(p0, n0 - 1)      # where the first reject begins
            last = sum(sizes[:self.inputs.index(p1)]) + _offset(p1, n1)           # where this one ends
        except (ValueError, OSError):
            return None
        total = sum(sizes)
        if last <= first or total <= first:
            return None
        return (int(self.written * (total - first) / (last - first)),
                f"its {self.written / 1e6:,.1f} MB so far, at that rate over the rest of the input")

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.close()
            except OSError as e:
                self._full(e)


def _offset(path: Path, lineno: int) -> int:
    """The byte offset in ``path`` just after its line ``lineno`` (1-based; 0 for 0; its size past its end)."""
    pos = 0
    if lineno <= 0:
        return 0
    with open(path, "rb") as fh:
        for n, line in enumerate(fh, 1):
            pos += len(line)
            if n >= lineno:
                break
    return pos
