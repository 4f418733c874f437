"""kill -9 of the Neo4j process at a seeded random point of a Bolt load of Wikidata5M, a document load and
a ``docs rm``; the interrupted command ends in one line and a non-zero exit (no traceback), the server is
started again, the command rerun; then: counts equal to a clean run's, 0 duplicates, 0 entities without a
vector, 0 orphan chunks, every document complete."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import KGQA, REPO, run_kgqa
from tests.faults.conftest import POINTS

pytestmark = pytest.mark.faults

ENV = {"KGQA_DOC_EXTRACTOR": "cpu", "KGQA_CHAT_BACKEND": "none"}
DOCS = REPO / "data" / "docs" / "corpus"


def _count(graph, q: str, **p) -> int:
    return graph._run(q, p, write=False)[0]["n"]


def _wipe(graph) -> None:
    while graph._run("MATCH (n) WITH n LIMIT 5000 DETACH DELETE n RETURN count(*) AS n", {}, write=True)[0]["n"]:
        pass


def _kill_neo4j_when(server, cmd: list[str], ready, seed: int, timeout: float = 900, max_delay: float = 1.5):
    """Run ``cmd``; once ``ready()`` holds, wait a seeded random 0-``max_delay`` s and kill -9 the Neo4j process.
    Returns the command's CompletedProcess-like (returncode, stderr); asserts the kill came before its end."""
    rng = random.Random(seed)
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, f"the command ended before the kill point: {proc.communicate()}"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(rng.uniform(0, max_delay))
    pid = server.status().pid
    assert pid is not None
    killed_while_running = proc.poll() is None
    import os

    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=600)
    return proc.returncode, err, killed_while_running


def _env():
    import os

    e = {**os.environ, **ENV}
    e.pop("KGQA_DEBUG", None)
    return e


def _restart(server) -> None:
    deadline = time.monotonic() + 60
    while server.status().running and time.monotonic() < deadline:
        time.sleep(0.2)
    server.start(wait_s=300)


def _one_line(rc: int, err: str) -> None:
    assert rc != 0
    lines = [ln for ln in err.strip().splitlines() if ln.strip() and not ln.startswith("kgqa: note:")]
    assert "Traceback" not in err, err[-3000:]
    assert len(lines) >= 1 and lines[-1].startswith("kgqa: error: "), err[-2000:]


def _synthetic_wd5m(root: Path, n: int = 1200) -> Path:
    d = root / "wd5m"
    d.mkdir()
    (d / "wikidata5m_relation.txt").write_text("P1\tlinked to\nP2\tpart of\nP3\tnamed after\n", encoding="utf-8")
    (d / "wikidata5m_entity.txt").write_text("".join(f"Q{i}\tentity number {i}\tthing {i}\n" for i in range(1, n + 1)),
                                             encoding="utf-8")
    (d / "wikidata5m_transductive_train.txt").write_text(
        "".join(f"Q{i}\tP{1 + i % 3}\tQ{1 + (i * 7) % n}\n" for i in range(1, n + 1))
        + "".join(f"Q{i}\tP1\tQ{1 + (i + 1) % n}\n" for i in range(1, n + 1)), encoding="utf-8")
    (d / "wikidata5m_transductive_valid.txt").write_text("", encoding="utf-8")
    (d / "wikidata5m_transductive_test.txt").write_text("", encoding="utf-8")
    return d


def _kg_state(graph) -> dict:
    return {
        "entities": _count(graph, "MATCH (e:Entity) RETURN count(e) AS n"),
        "facts": _count(graph, "MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS n"),
        "duplicates": _count(graph, "MATCH (e:Entity) WITH e.id AS id, count(*) AS c WHERE c > 1 RETURN count(id) AS n"),
        "duplicate_facts": _count(graph, "MATCH (a:Entity)-[r]->(b:Entity) WITH a, type(r) AS t, b, count(r) AS c "
                                         "WHERE c > 1 RETURN count(*) AS n"),
        "without_vector": _count(graph, "MATCH (e:Entity) WHERE e.name_embedding IS NULL RETURN count(e) AS n"),
    }


def _doc_state(graph) -> dict:
    return {
        "documents": _count(graph, "MATCH (d:Document) RETURN count(d) AS n"),
        "complete": _count(graph, "MATCH (d:Document {status: 'complete'}) RETURN count(d) AS n"),
        "chunks": _count(graph, "MATCH (c:Chunk) RETURN count(c) AS n"),
        "entities": _count(graph, "MATCH (e:DocEntity) RETURN count(e) AS n"),
        "duplicates": _count(graph, "MATCH (d:Document) WITH d.id AS id, count(*) AS c WHERE c > 1 RETURN count(id) AS n"),
        "orphan_chunks": _count(graph, "MATCH (c:Chunk) WHERE NOT (:Document)-[:HAS_CHUNK]->(c) RETURN count(c) AS n"),
    }


#: a clean load's state per kind of load, measured once per session (the inputs are the same at every point)
_CLEAN: dict[str, tuple[dict, float]] = {}


def clean_load(graph, kind: str, args: list[str], state, env: dict | None = ENV) -> tuple[dict, float]:
    """(``state(graph)`` after a clean run of ``kgqa *args`` into a wiped graph, its seconds), run once per kind."""
    if kind not in _CLEAN:
        _wipe(graph)
        t0 = time.monotonic()
        p = run_kgqa(*args, env=env)
        assert p.returncode == 0, p.stderr
        _CLEAN[kind] = (state(graph), time.monotonic() - t0)
    return _CLEAN[kind]


def _killed_mid_load_then_rerun(graph, server, cmd: list[str], started: str, state, *, seed: int,
                                first_env: dict | None = ENV) -> tuple[dict, dict]:
    """The expected ``state(graph)`` of a clean load (once per kind), then into a wiped graph a load killed once
    ``started`` (a count query) is > 0: the load must fail in one line; restart, load again; returns (expected,
    state after)."""
    expected, _ = clean_load(graph, cmd[1] + ":" + cmd[2], cmd[1:], state, env=first_env)
    _wipe(graph)
    rc, err, running = _kill_neo4j_when(server, cmd, lambda: _count(graph, started) > 0, seed=seed)
    assert running, "the load finished before the kill"
    _one_line(rc, err)
    _restart(server)
    p = run_kgqa(*cmd[1:], env=ENV)
    assert p.returncode == 0, p.stderr
    return expected, state(graph)


@pytest.mark.parametrize("point", range(POINTS))
def test_kill_neo4j_mid_bolt_load(graph, server, clean, tmp_path, point):
    folder = _synthetic_wd5m(tmp_path)
    cmd = [KGQA, "load", "wikidata5m", "--path", str(folder), "--batch-size", "100", "--embed-chunk", "200", "--json"]
    expected, state = _killed_mid_load_then_rerun(graph, server, cmd, "MATCH (e:Entity) RETURN count(e) AS n",
                                                  _kg_state, seed=36 + point, first_env=None)
    assert state == expected == {**expected, "duplicates": 0, "duplicate_facts": 0, "without_vector": 0}


@pytest.mark.parametrize("point", range(POINTS))
def test_kill_neo4j_mid_document_load(graph, server, clean, point):
    cmd = [KGQA, "load", "documents", str(DOCS), "--no-link", "--write-batch", "10", "--json"]
    expected, state = _killed_mid_load_then_rerun(graph, server, cmd, "MATCH (c:Chunk) RETURN count(c) AS n",
                                                  _doc_state, seed=136 + point)
    assert state == expected and state["duplicates"] == state["orphan_chunks"] == 0
    assert state["complete"] == state["documents"]


def _big_document(root: Path, sections: int = 800) -> Path:
    """A folder with one large document (some 1,600 chunks and 2,700 nodes at --chunk-tokens 32: its removal
    takes several transactions) and one small one that must stay untouched."""
    d = root / "rm"
    d.mkdir()
    with open(d / "big.md", "w", encoding="utf-8") as f:
        f.write("# Big document\n\n")
        for i in range(sections):
            f.write(f"## Section {i}\n\nItem {i} was made in {1800 + i % 200} by Maker {i % 50}. "
                    f"It is part of Group {i % 30}.\n\n")
    (d / "small.md").write_text("# Small\n\nThe small document was written in 1999 by Someone.\n", encoding="utf-8")
    return d


@pytest.mark.parametrize("point", range(POINTS))
def test_kill_neo4j_mid_docs_rm(graph, server, clean, tmp_path, point):
    load = ["load", "documents", str(_big_document(tmp_path)), "--no-link", "--chunk-tokens", "32", "--json"]
    p = run_kgqa(*load, env=ENV)
    assert p.returncode == 0, p.stderr
    before = _doc_state(graph)
    mine = _count(graph, "MATCH (:Document {id: 'big'})-[:HAS_CHUNK]->(c) RETURN count(c) AS n")
    # docs rm marks the document 'writing', then removes it 500 nodes per transaction: the kill lands in there
    rc, err, running = _kill_neo4j_when(
        server, [KGQA, "docs", "rm", "big"],
        lambda: _count(graph, "MATCH (d:Document {id: 'big'}) WHERE d.status = 'writing' RETURN count(d) AS n") > 0,
        seed=236 + point, max_delay=0.5)
    assert running, "docs rm finished before the kill"
    _one_line(rc, err)
    _restart(server)
    assert _count(graph, "MATCH (d:Document {status: 'complete'}) RETURN count(d) AS n") == before["complete"] - 1
    p = run_kgqa("docs", "rm", "big", env=ENV)
    assert p.returncode == 0, p.stderr
    state = _doc_state(graph)
    assert state["documents"] == before["documents"] - 1 and state["complete"] == state["documents"]
    assert state["chunks"] == before["chunks"] - mine and state["orphan_chunks"] == state["duplicates"] == 0
    p = run_kgqa(*load, env=ENV)                                 # loading again puts exactly it back
    assert p.returncode == 0, p.stderr
    rep = __import__("json").loads(p.stdout)
    assert (rep["written"], rep["unchanged"]) == (1, 1), rep
    assert _doc_state(graph) == before
