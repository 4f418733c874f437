"""kill -9 of Neo4j at a seeded random moment of a ``kgqa load wikidata5m --bulk``: whichever Neo4j process
runs at that moment, the server (while the CSVs are written, while it restarts, while the schema and the
embeddings go in over Bolt) or ``neo4j-admin import`` (while the server is stopped). The load ends in one
line and a non-zero exit (no traceback); after ``kgqa neo4j start`` the SAME command completes, and the
graph is that of a clean ``--bulk`` load: same counts, 0 duplicates, 0 entities without a vector. (A server
killed just before the load stops it for the importer is never needed again: that load ends well.)"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

import pytest

from tests.conftest import KGQA
from tests.faults.conftest import POINTS
from tests.faults.test_kill_neo4j import ENV, _env, _kg_state, _one_line, _restart, _synthetic_wd5m, _wipe, clean_load

pytestmark = pytest.mark.faults


def _neo4j_pid(server) -> tuple[int | None, str]:
    """The Neo4j process running now: the importer while the --bulk state file names a live one, else the server."""
    try:
        imp = json.loads((server.home.parent / "import" / "bulk-state.json").read_text()).get("importer")
        if imp and b"AdminTool" in open(f"/proc/{imp}/cmdline", "rb").read():
            return imp, "neo4j-admin import"
    except (OSError, ValueError):
        pass
    return server.status().pid, "server"


def _state_after_import(graph) -> dict:
    """``_kg_state`` on a new connection: the importer replaces the store, so the transaction ids a connection
    saw before it (its bookmarks) are ahead of the new store's."""
    graph.close()
    return _kg_state(graph)


def _kill_and_rerun(server, proc, args: list[str], after_s: float) -> str:
    """kill -9 of the Neo4j process running ``after_s`` into the load ``proc``; the load's end checked, then
    (unless it ended well) Neo4j started and the same command run again. Returns what was killed."""
    time.sleep(after_s)
    pid, what = None, ""
    deadline = time.monotonic() + 5            # between the server's stop and the importer's start: wait for one
    while pid is None and proc.poll() is None and time.monotonic() < deadline:
        pid, what = _neo4j_pid(server)
        time.sleep(0.02)
    assert pid is not None and proc.poll() is None, f"the load ended before the kill: {proc.communicate()}"
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=600)
    print(f"killed {what} (pid {pid}); the load said: {err.strip().splitlines()[-1:]}")
    if proc.returncode == 0:
        # the server was killed just as the load was about to stop it for the importer: the load never
        # needed it again, and started it after the import itself
        assert what == "server" and server.status().running, err[-2000:]
        return what
    _one_line(proc.returncode, err)
    assert "kgqa neo4j start" in err or "rerun" in err or "run the same command" in err, err[-500:]
    _restart(server)
    p = subprocess.run([KGQA, *args], env=_env(), capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return what


@pytest.mark.parametrize("point", range(POINTS))
def test_kill_neo4j_mid_bulk_load(graph, server, clean, tmp_path, point):
    folder = _synthetic_wd5m(tmp_path)
    args = ["load", "wikidata5m", "--path", str(folder), "--bulk", "--embed-chunk", "200", "--json"]
    expected, took = clean_load(graph, "bulk", args, _state_after_import)
    assert expected["without_vector"] == 0 and expected["entities"] > 0
    _wipe(graph)
    rng = random.Random(336 + point)
    proc = subprocess.Popen([KGQA, *args], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        what = _kill_and_rerun(server, proc, args, rng.uniform(0.05, 0.85) * took)
    finally:                                   # a failed point leaves no load running and the server up
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if not server.status().running:
            _restart(server)
    assert _state_after_import(graph) == expected, what
    assert not any((server.home.parent / "import").glob("wikidata5m-*/*.csv"))       # no CSVs left behind
