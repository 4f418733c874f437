"""One writer per database (kgqa.core.writer_lock), with real processes and no Neo4j: the refusal comes
before anything connects. A holder process takes the lock; ``kgqa load documents``, ``kgqa load
wikidata5m`` and ``kgqa docs rm`` are then one line naming its pid and command, exit 3; a reader
(``kgqa docs list``) is not held up; after kill -9 of the holder the next writer takes the lock over.
(With Neo4j: tests/integration/test_writers.py.)"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import KGQA

HOLDER = textwrap.dedent("""
    import sys, time
    from kgqa.core.config import Settings
    from kgqa.core.writer_lock import WriterLock
    lock = WriterLock(Settings(), "kgqa load documents /the/holder").acquire()
    print("held", flush=True)
    time.sleep(300)
""")


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def env(tmp_path):
    import kgqa

    src = str(Path(kgqa.__file__).resolve().parents[1])
    e = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path), "NEO4J_URI": f"bolt://127.0.0.1:{_dead_port()}",
         "KGQA_DATA_DIR": str(tmp_path / "data"), "KGQA_NEO4J_TIMEOUT_S": "2",
         "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    e.pop("KGQA_DEBUG", None)
    return e


def _kgqa(env, *args):
    return subprocess.run([KGQA, *args], env=env, capture_output=True, text=True, timeout=120)


def _holder(env):
    p = subprocess.Popen([sys.executable, "-c", HOLDER], env=env, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_second_writer_is_one_line_naming_the_holder_and_readers_go_on(env, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nA is a letter.\n")
    holder = _holder(env)
    try:
        for args in (("load", "documents", str(docs)), ("docs", "rm", "a"),
                     ("load", "wikidata5m", "--path", str(tmp_path))):
            p = _kgqa(env, *args)
            assert p.returncode == 3, (args, p.returncode, p.stderr)
            err = p.stderr.strip()
            assert len(err.splitlines()) == 1 and "Traceback" not in err, err
            assert f"pid {holder.pid}" in err and "`kgqa load documents /the/holder`" in err, err
            assert "another kgqa writer holds 127.0.0.1:" in err, err
        p = _kgqa(env, "docs", "list")                 # a reader: not held up (it fails on the dead port instead)
        assert "writer" not in p.stderr and "not reachable" in p.stderr, p.stderr
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
    # the holder died without releasing the lock: the next writer takes it over and goes on to connect
    p = _kgqa(env, "docs", "rm", "a")
    assert "another kgqa writer" not in p.stderr, p.stderr
    assert f"took over the writer lock of pid {holder.pid}" in p.stderr and "not reachable" in p.stderr, p.stderr
    p = _kgqa(env, "docs", "rm", "a")                   # released at its exit: nothing to take over now
    assert "took over" not in p.stderr and "not reachable" in p.stderr, p.stderr


def test_the_lock_is_per_database(tmp_path, monkeypatch):
    from kgqa.core.config import Settings
    from kgqa.core.writer_lock import WriterBusy, WriterLock, database_key

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    a = Settings(neo4j_uri="bolt://localhost:7687")
    b = Settings(neo4j_uri="bolt://127.0.0.1:7688")
    assert database_key(a) == "127.0.0.1:7687/neo4j"
    with WriterLock(a, "kgqa load documents x"), WriterLock(b, "kgqa load documents y"):
        with pytest.raises(WriterBusy, match=f"pid {os.getpid()}"):
            WriterLock(Settings(neo4j_uri="neo4j://127.0.0.1:7687"), "kgqa docs rm z").acquire()
    with WriterLock(a, "kgqa docs rm z") as again:              # released: free again, nothing taken over
        assert again.took_over is None
