"""Errors kgqa raises on purpose.

Every error a user can cause or meet (bad input, a service down, a model missing)
is a KgqaError subclass carrying one clear line. The CLI prints that line to
stderr and exits with the class's exit code; it never shows a traceback for them.
Raise them ``from`` the underlying exception so that ``--debug`` still has it.
"""

from __future__ import annotations

#: The most characters of one user-supplied value an error message or a rejects file echoes.
ECHO_LIMIT = 200
#: The most characters of one whole error line (the CLI and ``kgqa serve`` cap what they print).
MESSAGE_LIMIT = 2000


def cap(value, limit: int = ECHO_LIMIT) -> str:
    """``value`` as text, cut to ``limit`` characters with its full size said: a 10 MB id in
    an input file must not become a 10 MB error line (``'Q111…' (10,485,760 chars)``)."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} chars)"


def cap_repr(value, limit: int = ECHO_LIMIT) -> str:
    """``repr(value)`` for a message, capped like ``cap`` (the cut is made before quoting)."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} chars)"


class KgqaError(Exception):
    """Base class: ``str(err)`` is the one line shown to the user."""

    exit_code = 1


class InvalidInput(KgqaError):
    """The user's input is wrong: a file, a line, a field, an id. Name which."""

    exit_code = 2


class GraphUnavailable(KgqaError):
    """Neo4j cannot be reached, refuses the credentials, or lacks the schema."""

    exit_code = 3


class ModelUnavailable(KgqaError):
    """A model backend cannot be loaded or reached, or timed out.

    Never caught by a method: a server that cannot be reached is an error (exit 4),
    not a reason to answer from a fallback.
    """

    exit_code = 4


class BadModelReply(KgqaError):
    """A model answered, but not usably: no valid JSON after the retries, a declined
    recognition, or the graph-only setting (no chat model on purpose).

    This is the one model error a method catches: it then takes the paper's documented
    fallback and records a ``kgqa.core.result.Fallback`` with this ``code``:

    * ``schema``      no reply fitting the schema after ``KGQA_JSON_RETRIES`` retries
    * ``declined``    the model (e.g. the reference-image grounder) recognised nothing
    * ``graph_only``  ``KGQA_CHAT_BACKEND=none``: every LLM step takes its fallback
    """

    exit_code = 4

    def __init__(self, message: str, code: str = "schema"):
        super().__init__(message)
        self.code = code


class LocalServerError(KgqaError):
    """The local Neo4j server (``kgqa neo4j``) cannot be started or stopped."""

    exit_code = 5


class NoSpace(KgqaError):
    """A file could not be written: the disk (or the quota) is full. Names the path and the space needed."""

    exit_code = 5


def no_space(e: BaseException, path, need_bytes: int | None = None, what: str = "", basis: str = "") -> NoSpace | None:
    """``e`` as a ``NoSpace`` line when it is a full disk or quota (ENOSPC, EDQUOT), else None: the path being
    written (``path``, else the error's file name), the filesystem it is on (its mount point) and what is free
    there, and about how much the work needs (``basis``: how that was estimated), or that this is unknown. When
    neither names the path (a write to an open file), the line names the fullest of the filesystems kgqa
    writes to (the data dir's, the temporary folder's, the working folder's), never the working folder by
    default."""
    import errno
    import os

    if not isinstance(e, OSError) or e.errno not in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return None
    label = f" ({what})" if what else ""
    tail = f"{space_needed(need_bytes, basis)}; free space (or point KGQA_DATA_DIR elsewhere) and run the same command again"
    target = path or getattr(e, "filename", None)
    if target is not None:
        mount, room = filesystem_room(target)
        return NoSpace(f"no space left writing {os.fspath(target)}{label}: the filesystem at {mount}, {room}, {tail}")
    import tempfile

    data_dir = os.environ.get("KGQA_DATA_DIR") or os.path.join(
        os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "kgqa")   # core/config's default
    candidates = {"the data dir": data_dir, "the temporary folder": tempfile.gettempdir(),
                  "the working folder": os.getcwd()}
    rooms = {name: (where, *filesystem_room(where), _free(where)) for name, where in candidates.items()}
    name, (where, mount, room, _) = min(rooms.items(), key=lambda kv: kv[1][3])
    return NoSpace(f"no space left writing{label} on the filesystem at {mount} ({name}, {os.fspath(where)}): "
                   f"{room}, {tail}")


def _free(path) -> float:
    import shutil

    try:
        return shutil.disk_usage(_existing(path)).free
    except OSError:
        return float("inf")


def _existing(path):
    from pathlib import Path

    probe = Path(str(path))
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def filesystem_room(path) -> tuple[str, str]:
    """(the mount point of the filesystem ``path`` is on, "N MB free there" or that it is unknown)."""
    import os
    import shutil

    probe = _existing(path).resolve()
    mount = probe
    while not os.path.ismount(mount) and mount != mount.parent:
        mount = mount.parent
    try:
        room = f"{shutil.disk_usage(probe).free / 1e6:,.1f} MB free there"
    except OSError:
        room = "its free space unknown"
    return str(mount), room


def space_needed(need_bytes: int | None, basis: str = "") -> str:
    """"about N MB needed[ (basis)]", or plainly that the space needed is unknown (every full-disk line says one)."""
    if not need_bytes:
        return "the space needed unknown"
    return f"about {need_bytes / 1e6:,.1f} MB needed" + (f" ({basis})" if basis else "")


def first_error(e, default_loc: str = "") -> tuple[str, str]:
    """(field, message) of a pydantic ``ValidationError``'s first error, for a one-line message.

    The field is the dotted location (``""`` → ``default_loc``); the message loses pydantic's
    ``Value error, `` prefix. Every place that turns a ValidationError into one line uses this."""
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ()) if x != "__root__") or default_loc
    return loc, str(err.get("msg", "invalid")).removeprefix("Value error, ")
