"""kill -9 of Neo4j at a seeded random moment of a ``kgqa load wikidata5m --bulk``: whichever Neo4j process
runs at that moment, the server (while the CSVs are written, while it stops, while it restarts, while the
schema and the embeddings go in over Bolt) or ``neo4j-admin import`` (while the server is stopped). The load
ends in one line and a non-zero exit (no traceback); after ``kgqa neo4j start`` the SAME command completes,
and the graph is that of a clean ``--bulk`` load: same counts, 0 duplicates, 0 entities without a vector.
(A server killed just before the load stops it for the importer is never needed again: that load ends well,
and its graph must then be the clean load's too.)

The kill points are drawn along the load's own phases, not as seconds from its start: a clean load is watched
once (its phases read from the --bulk state file, ``PHASES``) and each point takes one phase in turn and a
seeded fraction of that phase's measured length; the kill comes that long after the phase is seen to begin.
A point whose load still ends before its kill time (the load ran faster than the clean one) is a miss of the
drawing, not of the invariants: the finished load is checked against the clean one, and the point is drawn
again, earlier in the same phase (``REDRAWS`` times, then skipped with "missed"; never a pass)."""

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
from tests.faults.test_kill_neo4j import _env, _kg_state, _one_line, _synthetic_wd5m, _wipe

pytestmark = pytest.mark.faults

#: the phases of a --bulk load as seen from outside, in order: before its state file (imports, the empty
#: check), validation + CSVs (server up), the server's stop, the importer, the server's start, the Bolt phases
PHASES = ("start-up", "CSVs", "server stop", "neo4j-admin import", "server start", "Bolt")
REDRAWS = 3


def _state_file(server):
    return server.home.parent / "import" / "bulk-state.json"


def _admin_alive(pid) -> bool:
    try:
        return isinstance(pid, int) and b"AdminTool" in open(f"/proc/{pid}/cmdline", "rb").read() \
            and open(f"/proc/{pid}/stat").read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def _phase(server) -> str | None:
    """The running --bulk load's phase, from its state file (``None``: the file was being replaced)."""
    try:
        st = json.loads(_state_file(server).read_text())
    except FileNotFoundError:
        return PHASES[0]
    except (OSError, ValueError):
        return None
    if st.get("imported"):
        return "Bolt"
    if st.get("importer"):
        return "neo4j-admin import" if _admin_alive(st["importer"]) else "server start"
    return "server stop" if st.get("server_stopped") else "CSVs"


def _neo4j_pid(server) -> tuple[int | None, str]:
    """The Neo4j process running now: the importer while the --bulk state file names a live one, else the server."""
    try:
        imp = json.loads(_state_file(server).read_text()).get("importer")
        if _admin_alive(imp):
            return imp, "neo4j-admin import"
    except (OSError, ValueError):
        pass
    return server.status().pid, "server"


def _state_after_import(graph) -> dict:
    """``_kg_state`` on a new connection: the importer replaces the store, so the transaction ids a connection
    saw before it (its bookmarks) are ahead of the new store's."""
    graph.close()
    return _kg_state(graph)


#: (the clean load's state, each phase's length in seconds), measured once per session
_CLEAN: dict[str, tuple[dict, dict[str, float]]] = {}


def _watch(server, proc, seen: dict[str, float], t0: float, until=None) -> None:
    """Poll the load's phase every 20 ms, noting in ``seen`` when each was first seen (seconds after ``t0``), and
    as "done" when its state file is gone again (its work done, its report still to come), until the load
    ends or ``until()`` holds."""
    while proc.poll() is None and not (until and until()):
        ph = _phase(server)
        if ph == PHASES[0] and any(p != PHASES[0] for p in seen):
            ph = "done"
        if ph is not None and ph not in seen:
            seen[ph] = time.monotonic() - t0
        time.sleep(0.02)


def clean_bulk_load(graph, server, args: list[str], runs: int = 2) -> tuple[dict, dict[str, float]]:
    """Clean --bulk loads into the wiped graph, watched: the state after one, and each phase's shortest length
    over ``runs`` (the first load of a session is the slowest: files and the encoder not yet in the page cache)."""
    if "bulk" not in _CLEAN:
        lengths: dict[str, float] = {}
        for _ in range(runs):
            graph.close()
            _wipe(graph)
            assert not _state_file(server).exists(), "a --bulk state file left by an earlier point"
            t0 = time.monotonic()
            proc = subprocess.Popen([KGQA, *args], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True)
            seen: dict[str, float] = {}
            _watch(server, proc, seen, t0)
            _, err = proc.communicate()
            end = time.monotonic() - t0
            assert proc.returncode == 0, err[-3000:]
            # a phase shorter than the 20 ms poll (the CSVs of this small input) is not seen: it began where the
            # next one seen did, and lasted 0 s
            assert {"start-up", "neo4j-admin import", "Bolt"} <= set(seen), f"phases seen: {seen}"
            bounds = [seen.get("done", end)]
            for ph in reversed(PHASES):
                bounds.insert(0, seen.get(ph, bounds[0]))
            assert bounds == sorted(bounds), f"phases seen: {seen}"
            for i, ph in enumerate(PHASES):
                lengths[ph] = min(lengths.get(ph, float("inf")), bounds[i + 1] - bounds[i])
            print(f"clean --bulk load: {end:.1f} s; phases began at (done: its state file removed) "
                  + ", ".join(f"{k} {v:.1f} s" for k, v in seen.items()))
        _CLEAN["bulk"] = (_state_after_import(graph), lengths)
    return _CLEAN["bulk"]


def _kill_in_phase(server, proc, phase: str, delay: float) -> tuple[int, str, str] | None:
    """Wait for ``phase`` to begin (or a later one to be seen), then ``delay`` s, then kill -9 the Neo4j process
    running. Returns (pid, what, the phase it ran in), or None when the load ended before the kill (a miss)."""
    t0 = time.monotonic()
    seen: dict[str, float] = {}
    target = PHASES.index(phase)
    _watch(server, proc, seen, t0, until=lambda: any(PHASES.index(p) >= target for p in seen))
    t_kill = time.monotonic() + delay
    while proc.poll() is None and time.monotonic() < t_kill:
        time.sleep(0.01)
    pid, what = None, ""
    deadline = time.monotonic() + 5            # between the server's stop and the importer's start: wait for one
    while pid is None and proc.poll() is None and time.monotonic() < deadline:
        pid, what = _neo4j_pid(server)
        time.sleep(0.02)
    now = _phase(server)
    if proc.poll() is not None or "done" in seen or (now == PHASES[0] and any(p != PHASES[0] for p in seen)):
        return None                            # ended, or its state file is gone: done but for its report
    assert pid is not None, f"no Neo4j process while the load runs (phase {now})"
    os.kill(pid, signal.SIGKILL)
    return pid, what, now or "?"


@pytest.mark.parametrize("point", range(POINTS))
def test_kill_neo4j_mid_bulk_load(graph, server, clean, tmp_path, point):
    folder = _synthetic_wd5m(tmp_path)
    args = ["load", "wikidata5m", "--path", str(folder), "--bulk", "--embed-chunk", "200", "--json"]
    expected, lengths = clean_bulk_load(graph, server, args)
    assert expected["without_vector"] == 0 and expected["entities"] > 0
    rng = random.Random(336 + point)
    phase = PHASES[point % len(PHASES)]
    fraction = rng.uniform(0.05, 0.9)
    misses = []
    for attempt in range(REDRAWS + 1):
        graph.close()
        _wipe(graph)
        assert not _state_file(server).exists(), "a --bulk state file left by an earlier point"
        delay = fraction * 0.5 ** attempt * lengths[phase]
        proc = subprocess.Popen([KGQA, *args], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            killed = _kill_in_phase(server, proc, phase, delay)
            out, err = proc.communicate(timeout=900)
        except BaseException:                  # a failed point leaves no load running and the server up
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            _up(server)
            raise
        if killed is not None:
            break
        # a miss of the drawing: the load ended before the kill, and a load that ends well is a clean one
        assert proc.returncode == 0, err[-3000:]
        assert _state_after_import(graph) == expected, "a --bulk load that ended well"
        misses.append(f"{delay:.2f} s into {phase}")
        print(f"missed: the load ended before the kill ({misses[-1]}); drawn again, earlier")
    else:
        pytest.skip(f"test_kill_neo4j_mid_bulk_load[{point}]: missed {len(misses)} times, the load ended before "
                    f"the kill ({'; '.join(misses)})")
    pid, what, ran = killed
    print(f"killed {what} (pid {pid}) in phase {ran} (drawn: {phase}, {delay:.2f} s in); "
          f"the load said: {err.strip().splitlines()[-1:]}")
    try:
        if proc.returncode != 0:
            _one_line(proc.returncode, err)
            assert "kgqa neo4j start" in err or "rerun" in err or "run the same command" in err, err[-500:]
        # else the server was killed just as the load was about to stop it for the importer (never needed
        # again), or the process killed was on its way out: the load ended well, so its graph must be the clean one
        _up(server, pid)
        if proc.returncode != 0:
            p = subprocess.run([KGQA, *args], env=_env(), capture_output=True, text=True, timeout=900)
            assert p.returncode == 0, p.stderr[-3000:]
    finally:
        _up(server)
    assert _state_after_import(graph) == expected, (what, ran)
    assert not any((server.home.parent / "import").glob("wikidata5m-*/*.csv"))       # no CSVs left behind
    assert not _state_file(server).exists()                                          # nothing left to resume


def _up(server, killed: int | None = None) -> None:
    """The server running again: once the killed process is gone, started unless the load started it."""
    deadline = time.monotonic() + 60
    while killed and time.monotonic() < deadline:
        try:
            if open(f"/proc/{killed}/stat").read().rsplit(")", 1)[-1].split()[0] == "Z":
                break
        except OSError:
            break
        time.sleep(0.1)
    if not server.status().running:
        server.start(wait_s=300)
