"""The state file of a ``--bulk`` load in progress (``<data_dir>/import/bulk-state.json``) and the process
helpers its recovery uses: who runs the load, its CSV folder, its importer, whether the import is done
(kgqa.loaders.wikidata5m.bulk describes the recovery after a kill -9)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

from kgqa.core.errors import InvalidInput

#: How long a --bulk waits for the local server to answer after the importer (or after a cleanup): a
#: store of millions of nodes opens slowly on a busy machine (1M twin at load 20: 100 s; 20k: over 120 s at load 28).
SERVER_START_WAIT_S = 900.0

#: The state of a --bulk load in progress, under <data_dir>/import: who runs it, its CSVs, its importer.
STATE_FILE = "bulk-state.json"
#: ``BulkState.recover()`` after a --bulk that imported, then was cut off (its Bolt phases were not done).
IMPORTED = "imported"
#: ``BulkState.recover()`` after a --bulk against another Neo4j that wrote the importer's CSVs for it: the import
#: is run where that database lives, then the same command loads the rest.
HANDED_OUT = "handed out"


def _pid_alive(pid, marker: bytes | None = None) -> bool:
    """Whether ``pid`` runs (and its command line holds ``marker``: a reused pid is not ours)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
        if stat and stat[0] == "Z":
            return False
        return marker is None or marker in Path(f"/proc/{pid}/cmdline").read_bytes()
    except (ProcessLookupError, PermissionError, FileNotFoundError):
        return False
    except OSError:
        return True


def _stop_process(pid: int, wait_s: float = 15.0) -> None:
    """SIGTERM, then SIGKILL after ``wait_s``, to ``pid``'s process group (the importer's JVM)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except (ProcessLookupError, PermissionError):
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:                                   # reap it when it is our child
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            except ChildProcessError:
                pass
            if not _pid_alive(pid):
                return
            time.sleep(0.2)


class BulkState:
    """``<data_dir>/import/bulk-state.json`` while a --bulk load runs: {owner pid, CSV folder,
    importer pid, server stopped}; removed once the import is done (or nothing was imported)."""

    def __init__(self, settings):
        self.settings = settings
        self.path = Path(settings.data_dir) / "import" / STATE_FILE
        self.data: dict = {}

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.data))
        tmp.replace(self.path)

    def begin(self, folder: Path, resumed: str = "") -> None:
        self.data = {"owner": os.getpid(), "folder": str(folder), "importer": None, "server_stopped": False,
                     "imported_over": bool(resumed)}
        self._write()

    def update(self, **kw) -> None:
        self.data.update(kw)
        self._write()

    def field(self, name: str):
        """A field of the file as it is on disk (None when absent or unreadable)."""
        try:
            return json.loads(self.path.read_text()).get(name)
        except (OSError, ValueError):
            return None

    def data_path(self) -> str | None:
        """The input folder of the --bulk that imported (or handed its CSVs out)."""
        return self.field("path")

    def imported_columns(self) -> list[str]:
        """The entity properties the import wrote besides the structure ("description", "name_embedding")."""
        return list(self.field("in_csv") or [])

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

    def release(self) -> None:
        """This run ends before its import: forgotten, unless the database still holds an earlier
        interrupted import (then the next --bulk must still import over it)."""
        if self.data.get("imported_over"):
            self.update(owner=None, folder=None, importer=None, server_stopped=False)
        else:
            self.clear()

    def recover(self) -> str:
        """Clean up after a --bulk that was killed; "" when there was none, else what was done. Refuses
        (one line) while another --bulk still runs."""
        from kgqa.core.neo4j_local import LocalNeo4j

        try:
            old = json.loads(self.path.read_text())
        except FileNotFoundError:
            return ""
        except (OSError, ValueError):
            old = {}
        owner = old.get("owner")
        if owner != os.getpid() and _pid_alive(owner, b"kgqa"):
            raise InvalidInput(f"another --bulk load (pid {owner}) is running on {self.settings.data_dir}: "
                               "wait for it, or stop it (it cleans up after itself)")
        if old.get("imported"):
            return IMPORTED                # the structure is in; what came after the import was cut off
        if old.get("handed_out"):
            return HANDED_OUT              # CSVs written for another Neo4j's importer
        done = []
        importer = old.get("importer")
        if _pid_alive(importer, b"AdminTool"):
            _stop_process(importer)
            done.append(f"importer pid {importer} stopped")
        folder = old.get("folder")
        if folder and Path(folder).exists():
            shutil.rmtree(folder, ignore_errors=True)
            done.append("its CSVs removed")
        server = LocalNeo4j(self.settings)
        if old.get("server_stopped") and not server.status().running:
            server.start(wait_s=SERVER_START_WAIT_S)
            done.append("the local server started")
        self.clear()
        if not (old.get("server_stopped") or old.get("imported_over")):
            return ""           # killed before the import: the database was not touched
        return ", ".join(done) or "nothing left running"
