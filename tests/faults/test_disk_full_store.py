"""A full disk under NEO4J'S OWN STORE during a Bolt load (issue 36): a server of its own whose
``data/`` folder (stores and transaction logs) is a small tmpfs (``mount -t tmpfs -o size=…``, root only:
skipped with the reason elsewhere). The load stops with one line naming the store's folder, what is
free there and about how much the load needs there (exit 5, no traceback); once space is freed (the tmpfs
grown) and the server restarted, the database comes back (the half-appended transaction is cut off by recovery) and the same command completes
with exact counts: every entity and fact once, every entity with a vector.

The server's ports: ``KGQA_FAULTS_STORE_BOLT_PORT`` / ``KGQA_FAULTS_STORE_HTTP_PORT``, else free ones."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.conftest import run_kgqa
from tests.faults.test_disk_full import _mount, _needed_mb, _umount
from tests.faults.test_kill_neo4j import _kg_state, _synthetic_wd5m

pytestmark = pytest.mark.faults

N = 3000            # entities: their vectors and transaction log are well over what is left on the tmpfs


def _port(name: str) -> int:
    if os.environ.get(name):
        return int(os.environ[name])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def small_store(tmp_path):
    """(env, server) for a server whose store lives on a 6 MB tmpfs (it starts with some 2.4 MB there)."""
    from kgqa.core.config import Settings
    from kgqa.core.neo4j_local import LocalNeo4j

    bolt, http = _port("KGQA_FAULTS_STORE_BOLT_PORT"), _port("KGQA_FAULTS_STORE_HTTP_PORT")
    data_dir = tmp_path / "kgqa"
    store = data_dir / "neo4j" / "data"
    _mount(store, "6m")
    env = {"KGQA_DATA_DIR": str(data_dir), "KGQA_NEO4J_BOLT_PORT": str(bolt), "KGQA_NEO4J_HTTP_PORT": str(http),
           "NEO4J_URI": f"bolt://127.0.0.1:{bolt}"}
    server = LocalNeo4j(Settings(data_dir=data_dir, neo4j_bolt_port=bolt, neo4j_http_port=http,
                                 neo4j_uri=env["NEO4J_URI"]))
    try:
        server.start(wait_s=300)
        yield env, server, store
    finally:
        server.stop()
        _umount(store)


def _used(store) -> int:
    return int(subprocess.run(["du", "-sb", str(store)], capture_output=True, text=True, check=True).stdout.split()[0])


def _graph(env):
    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph

    return Graph(Settings(data_dir=env["KGQA_DATA_DIR"], neo4j_bolt_port=int(env["KGQA_NEO4J_BOLT_PORT"]),
                          neo4j_http_port=int(env["KGQA_NEO4J_HTTP_PORT"]), neo4j_uri=env["NEO4J_URI"]))


def test_a_full_store_stops_the_load_in_one_line_and_a_rerun_after_freeing_space_is_exact(small_store, tmp_path):
    env, server, store = small_store
    folder = _synthetic_wd5m(tmp_path, N)
    triples = {tuple(ln.split("\t")) for ln in (folder / "wikidata5m_transductive_train.txt").read_text().splitlines()}
    cmd = ("load", "wikidata5m", "--path", str(folder), "--batch-size", "500", "--json")
    used = _used(store)
    p = run_kgqa(*cmd, env=env)
    assert p.returncode == 5, (p.returncode, p.stderr[-2000:])
    err = p.stderr.strip().splitlines()
    assert "Traceback" not in p.stderr and err[-1].startswith("kgqa: error: "), p.stderr[-2000:]
    assert [ln for ln in err if ln.startswith("kgqa: error")] == err[-1:]
    assert str(store) in err[-1] and "MB free there" in err[-1] and "no space left" in err[-1], err[-1]
    assert "MB needed" in err[-1] and "3,003 vectors" in err[-1], err[-1]      # the load's estimate of its store
    needed = _needed_mb(err[-1])
    print(err[-1])
    subprocess.run(["mount", "-o", "remount,size=256m", str(store)], check=True)      # space freed
    server.stop()
    server.start(wait_s=300)
    p = run_kgqa(*cmd, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    grown = (_used(store) - used) / 1e6
    print(f"the load took {grown:.1f} MB in the store; the line said about {needed:.1f} MB")
    assert 0.4 < needed / grown < 2.5, (needed, grown)          # "about": what the whole load took in the store
    g = _graph(env)
    try:
        assert _kg_state(g) == {"entities": N, "facts": len(triples), "duplicates": 0, "duplicate_facts": 0,
                                "without_vector": 0}
    finally:
        g.close()
