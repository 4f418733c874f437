"""The real local Neo4j: status, schema, vector search through kgqa/graph.py, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import assert_one_line_error, free_port, run_kgqa

pytestmark = pytest.mark.integration


def test_status_tells_the_truth(settings):
    out = run_kgqa("neo4j", "status", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    info = json.loads(out.stdout)
    assert info["running"] and info["bolt_answers"]
    assert info["version"].startswith("5.26") and "community" in info["version"]
    assert info["bolt"].endswith(f":{settings.neo4j_bolt_port}")


def test_second_start_is_a_noop():
    before = json.loads(run_kgqa("neo4j", "status", "--json").stdout)["pid"]
    out = run_kgqa("neo4j", "start")
    assert out.returncode == 0, out.stderr
    assert "already running" in out.stdout
    assert json.loads(run_kgqa("neo4j", "status", "--json").stdout)["pid"] == before


def test_schema_is_applied_and_online(graph):
    graph.apply_schema()  # idempotent: a second application changes nothing
    graph.await_indexes()
    idx = {r["name"]: r for r in graph.read("schema_indexes")}
    for name in ("entity_name_embedding", "relation_embedding"):
        assert idx[name]["type"] == "VECTOR" and idx[name]["state"] == "ONLINE"
    cons = {r["name"] for r in graph.read("schema_constraints")}
    assert {"entity_id", "relation_id", "image_sha256"} <= cons


def test_vector_search_through_named_query(graph):
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(3, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = ["QTEST1", "QTEST2", "QTEST3"]
    with graph.session() as s:
        s.run("UNWIND $rows AS r MERGE (e:Entity {id: r.id}) SET e.name = r.id, e.name_embedding = r.v",
              rows=[{"id": i, "v": v.tolist()} for i, v in zip(ids, vecs)]).consume()
    try:
        graph.await_indexes()
        query = vecs[1] + 0.05 * rng.normal(size=384).astype(np.float32)
        query /= np.linalg.norm(query)
        rows = graph.read("entity_vector_search", k=3, vector=query.tolist())
        mine = [r for r in rows if r["id"].startswith("QTEST")]
        assert mine[0]["id"] == "QTEST2"
        assert mine[0]["score"] > mine[-1]["score"]
    finally:
        with graph.session() as s:
            s.run("MATCH (e:Entity) WHERE e.id IN $ids DETACH DELETE e", ids=ids).consume()


def test_wrong_password_is_one_line():
    out = run_kgqa("neo4j", "init", env={"NEO4J_PASSWORD": "not-the-password"})
    assert_one_line_error(out, "refused user 'neo4j'", "wrong password", code=3)


@pytest.mark.slow
def test_full_lifecycle_in_its_own_data_dir(tmp_path):
    """start → status → stop on a second server: pid file, logs, clean stop."""
    env = {"KGQA_DATA_DIR": str(tmp_path), "KGQA_NEO4J_BOLT_PORT": str(free_port()),
           "KGQA_NEO4J_HTTP_PORT": str(free_port()), "KGQA_NEO4J_HEAP": "512m", "KGQA_NEO4J_PAGECACHE": "64m"}
    env["NEO4J_URI"] = f"bolt://127.0.0.1:{env['KGQA_NEO4J_BOLT_PORT']}"
    try:
        up = run_kgqa("neo4j", "start", env=env)
        assert up.returncode == 0, up.stderr
        assert (tmp_path / "neo4j" / "run" / "neo4j.pid").exists()
        assert (tmp_path / "neo4j" / "data" / "dbms" / "auth.ini").exists()
        st = json.loads(run_kgqa("neo4j", "status", "--json", env=env).stdout)
        assert st["running"] and st["bolt_answers"]
        # Neo4j Browser is served by the same process
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{env['KGQA_NEO4J_HTTP_PORT']}/browser/", timeout=5) as r:
            assert r.status == 200 and b"<html" in r.read(2000).lower()
    finally:
        down = run_kgqa("neo4j", "stop", env=env)
    assert down.returncode == 0 and "stopped" in down.stdout
    st = run_kgqa("neo4j", "status", "--json", env=env)
    assert st.returncode == 1 and not json.loads(st.stdout)["running"]
    assert not (tmp_path / "neo4j" / "run" / "neo4j.pid").exists()
