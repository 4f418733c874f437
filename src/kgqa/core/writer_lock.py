"""One writer at a time per database: ``kgqa load wikidata5m``, ``kgqa load documents`` and ``kgqa docs rm``
hold a lock for the database they write (its Bolt address and database name); a second writer is refused
with one line naming the holder's pid and command (``WriterBusy``, exit 3). Readers (``ask``, ``serve``,
``docs list``, ``trace``) take no lock and are never held up.

The lock is an exclusive ``flock`` on a file in the user's runtime folder
(``$XDG_RUNTIME_DIR/kgqa-locks``, else ``<tmp>/kgqa-<uid>/locks``), one file per database, so every
kgqa process of this user on this machine that writes that database sees it, whatever its data dir.
The kernel releases the lock when its holder exits, however it exits (kill -9 included): a lock left by
a dead pid is simply taken over, and the file then names the new holder. The file holds the holder's
pid, command, start time and database, for the refusal line.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

from kgqa.core.errors import GraphUnavailable, cap
from kgqa.core.neo4j_local import pid_alive

try:
    import fcntl
except ImportError:  # not POSIX: no lock (said once by WriterLock)
    fcntl = None  # type: ignore[assignment]


class WriterBusy(GraphUnavailable):
    """Another kgqa process is writing this database."""


def database_key(settings) -> str:
    """``host:port/database`` of the Bolt URI (the same database under any spelling of the loopback and any
    case of its name, which Neo4j ignores). Another spelling of the host still passes this lock: the lease in
    the database (``kgqa.core.writer_lease``) is the one every spelling and every machine sees."""
    u = urlparse(str(settings.neo4j_uri))
    try:
        port = u.port or 7687
    except ValueError:              # not a port: the graph's own check says so in its line; keyed as written
        return f"{u.netloc or settings.neo4j_uri}/{settings.neo4j_database.lower()}"
    host = (u.hostname or "127.0.0.1").lower()
    if host in ("localhost", "::1", "0.0.0.0"):
        host = "127.0.0.1"
    return f"{host}:{port}/{settings.neo4j_database.lower()}"


def lock_dir() -> Path:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        return Path(runtime) / "kgqa-locks"
    return Path(tempfile.gettempdir()) / f"kgqa-{os.getuid() if hasattr(os, 'getuid') else 'user'}" / "locks"


def lock_path(settings) -> Path:
    key = database_key(settings)
    return lock_dir() / f"writer-{hashlib.sha256(key.encode()).hexdigest()[:16]}.lock"


class WriterLock:
    """``with WriterLock(settings, command):`` the database's writer lock, or ``WriterBusy`` at once."""

    def __init__(self, settings, command: str):
        self.settings = settings
        self.command = cap(" ".join(command.split()), 200)
        self.path = lock_path(settings)
        self.fd: int | None = None
        self.took_over: dict | None = None      # the dead holder whose lock this one took over, if any

    def _holder(self) -> dict:
        try:
            return json.loads(Path(self.path).read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return {}

    def acquire(self) -> WriterLock:
        if fcntl is None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            h = self._holder()
            pid, cmd = h.get("pid", "?"), h.get("command", "?")
            since = time.strftime("%H:%M:%S", time.localtime(h["started"])) if isinstance(h.get("started"), (int, float)) else "?"
            held_by = h.get("pid")
            gone = "" if isinstance(held_by, int) and held_by > 0 and pid_alive(held_by) else " (that pid has exited; a process it started still holds the lock)"
            raise WriterBusy(f"another kgqa writer holds {database_key(self.settings)}: pid {pid}, `{cmd}`, "
                             f"since {since}{gone}; wait for it to finish, or stop it, then run this again "
                             f"(lock: {self.path})") from None
        except OSError as e:
            os.close(fd)
            raise GraphUnavailable(f"cannot lock {self.path} for writing {database_key(self.settings)}: "
                                   f"{e.strerror}") from None
        previous = self._holder()
        if previous.get("pid") not in (None, os.getpid()):
            self.took_over = previous           # its holder died without releasing it (kill -9): taken over
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": self.command, "started": time.time(),
                                  "database": database_key(self.settings)}).encode(), 0)
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            os.ftruncate(self.fd, 0)            # no holder named any more (the file itself stays)
        except OSError:
            pass
        os.close(self.fd)                       # closing the descriptor releases the flock
        self.fd = None

    def __enter__(self) -> WriterLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
