"""One writer per database, across every spelling of its address and every machine: a lease node in the
database itself, ``(:WriterLease {name: 'writer'})`` (unique by a constraint), taken by a writer and renewed
while it writes, expiring when its writer dies.

``core/writer_lock`` (a ``flock`` in the runtime folder) refuses a second writer on the same machine
before anything connects; it is keyed by the address as typed, so ``NEO4J_DATABASE=NEO4J``, another spelling
of the host or another ``XDG_RUNTIME_DIR`` (or another machine) passed it. The lease lives where all of them
look: in the database they write, whatever they called it.

* **take** (``WriterLease.acquire``): one write transaction locks the lease node (``MERGE`` on the
  constrained name, then a write to it: two takers are serialised by the node's lock), reads its holder and
  takes it when it is free, expired (the server's clock: ``timestamp()``), or held by a pid of this host that
  has exited (a ``kill -9``: taken over at once, as the ``flock`` is); else ``WriterBusy`` with one line naming
  the holder (host, pid, command, since), exit 3.
* **renew**: a daemon thread extends the expiry every ``TTL_S / 4`` seconds while the command runs.
* **release**: the lease node is deleted (only while this writer still holds it): a command leaves no node
  behind; the next writer's ``MERGE`` creates it again, the constraint keeping it one.
* **retake** (``WriterLease.retake``): ``kgqa load wikidata5m --bulk`` replaces the store (``neo4j-admin
  import``), lease node and constraint included; once the server is back it takes the lease again before it
  writes anything more. The lease node is no data: ``--bulk``'s emptiness check leaves it out.

The server's own name for the database (``db.info()``: name and store id) is what the refusal line names.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid

from kgqa.core.errors import KgqaError, cap
from kgqa.core.neo4j_local import pid_alive
from kgqa.core.writer_lock import WriterBusy

#: How long a lease lasts without renewal, in seconds (a writer that died frees it after this).
TTL_S = 60.0

class WriterLease:
    """``with WriterLease(graph, command):`` the database's writer lease, or ``WriterBusy`` at once."""

    def __init__(self, graph, command: str, ttl_s: float = TTL_S):
        self.graph = graph
        self.command = cap(" ".join(command.split()), 200)
        self.ttl_ms = int(ttl_s * 1000)
        self.holder = uuid.uuid4().hex
        self.host = socket.gethostname()
        self.took_over: dict | None = None     # the holder whose expired (or dead) lease this one took
        self.lost = False                      # a renewal found the lease taken by another writer
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def database(self) -> str:
        """The database as the server names it (``db.info()``), and where it is."""
        rows = self.graph.read("database_info")
        r = rows[0] if rows else {}
        return f"database {r.get('name', '?')} (store {str(r.get('id', '?'))[:12]}) at {self.graph.settings.neo4j_uri}"

    def acquire(self) -> WriterLease:
        h = self._take(mine=False)
        if h["holder"] is not None:
            self.took_over = h
        self._start_renewing()
        return self

    def retake(self) -> None:
        """Take the lease again after the store was replaced under it (``--bulk``: ``neo4j-admin import``
        writes a new store, without the lease node or its constraint): called once the server is back and
        before anything else is written, so that a second writer that came in between is refused, or refuses
        this one (``WriterBusy``)."""
        self._stop_renewing()
        self.graph.close()               # a new connection: the old one's bookmarks are ahead of the new store
        self._take(mine=True)
        self.lost = False
        self._start_renewing()

    def _take(self, mine: bool) -> dict:
        """One write transaction: the lease node locked, read, and set to this writer when it is free (``mine``:
        or already this writer's); ``WriterBusy`` naming its holder otherwise. Returns the holder as read."""
        from kgqa import cypher

        self.graph.write("writer_lease_constraint")

        def take(tx):
            h = tx.run(cypher.load("writer_lease_take")).single().data()
            free = (h["holder"] is None or h["expires"] is None or h["expires"] < h["now"]
                    or (mine and h["holder"] == self.holder)
                    or (h["host"] == self.host and isinstance(h["pid"], int) and not pid_alive(h["pid"])))
            if free:
                tx.run(cypher.load("writer_lease_set"), holder=self.holder, host=self.host, pid=os.getpid(), command=self.command,
                       ttl_ms=self.ttl_ms).consume()
            return free, h

        with self.graph.session() as s:
            free, h = self.graph._guard(lambda: s.execute_write(take))
        if not free:
            since = time.strftime("%H:%M:%S", time.localtime(h["since"] / 1000)) if h.get("since") else "?"
            left = max(0, round((h["expires"] - h["now"]) / 1000))
            raise WriterBusy(f"another kgqa writer holds {self.database()}: pid {h.get('pid', '?')} on "
                             f"{h.get('host', '?')}, `{h.get('command', '?')}`, since {since} (its lease is renewed "
                             f"while it writes; {left} s left if it stopped); wait for it to finish, or stop it, "
                             "then run this again")
        return h

    def _start_renewing(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._renew, name="kgqa-writer-lease", daemon=True)
        self._thread.start()

    def _stop_renewing(self) -> bool:
        """Stop the renewing thread; whether one was running (the lease was held)."""
        self._stop.set()
        if self._thread is None:
            return False
        self._thread.join(timeout=5)
        self._thread = None
        return True

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl_ms / 4000):
            try:
                rows = self.graph.write("writer_lease_renew", holder=self.holder, ttl_ms=self.ttl_ms)
            except KgqaError:
                continue                       # the server is away (a --bulk import restarts it): the next beat
            if not rows or not rows[0]["renewed"]:
                self.lost = True
                return

    def release(self) -> None:
        if self._stop_renewing():
            try:
                self.graph.write("writer_lease_release", holder=self.holder)
            except KgqaError:
                pass                           # the server is gone: the lease expires by itself

    def __enter__(self) -> WriterLease:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
