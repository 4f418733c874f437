"""Two writers of one database (issue 62, items 1 and 10): the writer lock was a file keyed by the address as
typed, in the runtime folder of one machine, so a second ``kgqa load wikidata5m`` of the same KG with
``NEO4J_DATABASE=NEO4J``, another spelling of the host or another ``XDG_RUNTIME_DIR`` (or from another
machine) ran beside the first, and the graph held tens of thousands of duplicate facts. The lease in the
database itself (``kgqa.core.writer_lease``) refuses every one of them; no interleaving leaves a duplicate."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import KGQA
from tests.faults.test_kill_neo4j import _count

N = 6000          # entities and facts: a load that runs long enough on 2 shared cores to be joined


def _kg(root: Path) -> Path:
    d = root / "wd5m"
    d.mkdir()
    (d / "wikidata5m_relation.txt").write_text("P1\tlinked to\nP2\tnext to\n", encoding="utf-8")
    (d / "wikidata5m_entity.txt").write_text("".join(f"Q{i}\tentity {i}\n" for i in range(1, N + 1)),
                                             encoding="utf-8")
    (d / "wikidata5m_transductive_train.txt").write_text(
        "".join(f"Q{i}\tP{1 + i % 2}\tQ{i % N + 1}\n" for i in range(1, N + 1)), encoding="utf-8")
    for split in ("valid", "test"):
        (d / f"wikidata5m_transductive_{split}.txt").write_text("", encoding="utf-8")
    return d


def _duplicates(graph) -> int:
    return _count(graph, "MATCH (h:Entity)-[r]->(t:Entity) WITH h, type(r) AS ty, t, count(r) AS c WHERE c > 1 "
                         "RETURN coalesce(sum(c - 1), 0) AS n")


def _holder(graph):
    rows = graph._run("MATCH (l:WriterLease {name: 'writer'}) RETURN l.holder AS h, l.pid AS pid", {}, write=False)
    return rows[0] if rows and rows[0]["h"] else None


def _spellings(settings, tmp_path: Path) -> list[dict]:
    """Every spelling of the one server and database, each from a runtime folder of its own."""
    port = settings.neo4j_uri.rsplit(":", 1)[1]
    out = []
    for i, (uri, db) in enumerate([(f"neo4j://localhost:{port}", "neo4j"), (f"bolt://127.0.0.1:{port}", "NEO4J"),
                                   (f"bolt://localhost:{port}/", "Neo4j"), (f"bolt://127.0.0.1:{port}", "neo4j")]):
        run = tmp_path / f"run{i}"
        run.mkdir()
        out.append({"NEO4J_URI": uri, "NEO4J_DATABASE": db, "XDG_RUNTIME_DIR": str(run)})
    return out


def _env(extra: dict) -> dict:
    e = {**os.environ, **extra}
    e.pop("KGQA_DEBUG", None)
    return e


def test_two_loads_under_every_spelling_one_is_refused_and_no_fact_is_duplicated(graph, settings, clean, tmp_path):
    kg = _kg(tmp_path)
    first, *others = _spellings(settings, tmp_path)
    cmd = [KGQA, "load", "wikidata5m", "--path", str(kg), "--no-embeddings", "--batch-size", "200", "--json"]
    a = subprocess.Popen(cmd, env=_env(first), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        while _count(graph, "MATCH (e:Entity) RETURN count(e) AS n") == 0:     # the first is writing
            assert a.poll() is None, a.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        for spelling in others:
            b = subprocess.run(cmd, env=_env(spelling), capture_output=True, text=True, timeout=300)
            if a.poll() is not None:
                break                                          # the first finished: no longer a second writer
            assert b.returncode == 3, (spelling, b.returncode, b.stderr[-2000:])
            err = b.stderr.strip()
            assert len(err.splitlines()) == 1 and "Traceback" not in err, err
            assert "another kgqa writer holds database neo4j" in err and f"pid {a.pid}" in err, err
        else:
            assert a.poll() is None, "the first load ended before every spelling was tried: raise N"
        out, err = a.communicate(timeout=600)
        assert a.returncode == 0, err[-2000:]
    finally:
        if a.poll() is None:
            a.kill()
            a.wait()
    assert _count(graph, "MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS n") == N
    assert _duplicates(graph) == 0
    assert _holder(graph) is None                              # released at the end
    for spelling in others:                                    # one after another: each is a rerun, nothing added
        p = subprocess.run(cmd, env=_env(spelling), capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr[-2000:]
    assert _duplicates(graph) == 0 and _count(graph, "MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS n") == N


HOLD = """
import sys, time, socket
socket.gethostname = lambda: sys.argv[1]          # another machine
from kgqa.core.config import Settings
from kgqa.core.graph import Graph
from kgqa.core.writer_lease import WriterLease
g = Graph(Settings())
lease = WriterLease(g, "kgqa load wikidata5m --path /on/machine/b", ttl_s=float(sys.argv[2])).acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_a_writer_on_another_machine_is_seen_and_its_lease_expires_when_it_dies(graph, settings, clean):
    from kgqa.core.writer_lease import WriterLease
    from kgqa.core.writer_lock import WriterBusy

    b = subprocess.Popen([sys.executable, "-c", HOLD, "machine-b", "4"], env=_env({}), stdout=subprocess.PIPE,
                         text=True)
    try:
        assert b.stdout.readline().strip() == "held"
        time.sleep(5)                                          # past its time to live: renewed meanwhile
        with pytest.raises(WriterBusy, match=rf"pid {b.pid} on machine-b, `kgqa load wikidata5m --path /on/machine/b`"):
            WriterLease(graph, "kgqa docs rm x").acquire()
        b.send_signal(signal.SIGKILL)                          # machine b's writer dies: nothing releases its lease
        b.wait(30)
        with pytest.raises(WriterBusy):                        # not at once (another machine's pid cannot be checked)
            WriterLease(graph, "kgqa docs rm x").acquire()
        time.sleep(4.5)
        with WriterLease(graph, "kgqa docs rm x") as lease:    # expired: taken over
            assert lease.took_over["host"] == "machine-b"
    finally:
        if b.poll() is None:
            b.kill()
            b.wait()
    assert _holder(graph) is None
