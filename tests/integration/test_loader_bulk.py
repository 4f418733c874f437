"""`kgqa load wikidata5m --bulk` end to end on a real, separate local Neo4j.

The bulk path stops and restarts the local server around `neo4j-admin database import`, so
this module runs its OWN server (own data dir and ports) and never touches the test server
the other tests share. Checked: strict validation refuses a bad file before anything is
written, the bulk load gives the same graph as the incremental loader (counts, the exact
facts, descriptions, images, embeddings), a non-empty database is refused in one line, and
a non-local Neo4j gets the importer command instead of a load.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, assert_one_line_error, run_kgqa

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SAMPLE = REPO / "tests" / "fixtures" / "wd5m_sample"


def _triples() -> set[tuple[str, str, str]]:
    out = set()
    for split in ("train", "valid", "test"):
        for ln in (SAMPLE / f"wikidata5m_transductive_{split}.txt").read_text(encoding="utf-8").splitlines():
            if ln.strip():
                out.add(tuple(ln.split("\t")))
    return out


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("bulk-neo4j")
    env = {"KGQA_DATA_DIR": str(data), "KGQA_NEO4J_BOLT_PORT": "17787", "KGQA_NEO4J_HTTP_PORT": "17574",
           "NEO4J_URI": "bolt://127.0.0.1:17787", "NEO4J_PASSWORD": "kgqa-local",
           "KGQA_NEO4J_HEAP": "512m", "KGQA_NEO4J_PAGECACHE": "256m"}
    start = run_kgqa("neo4j", "start", env=env)
    assert start.returncode == 0, start.stderr
    yield env
    run_kgqa("neo4j", "stop", env=env)


def _settings(env):
    from kgqa.core.config import Settings

    return Settings(neo4j_uri=env["NEO4J_URI"], data_dir=Path(env["KGQA_DATA_DIR"]),
                    neo4j_bolt_port=int(env["KGQA_NEO4J_BOLT_PORT"]))


def _read(env, query: str, write: bool = False, **params):
    from kgqa.core.graph import Graph

    with Graph(_settings(env)) as g:
        return g._run(query, params, write=write)


def test_bulk_strict_refuses_a_bad_line_and_writes_nothing(own_server, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(SAMPLE, bad)
    with open(bad / "wikidata5m_transductive_train.txt", "a", encoding="utf-8") as fh:
        fh.write("Q64\tP999\tQ515\n")
    n = sum(1 for ln in (bad / "wikidata5m_transductive_train.txt").read_text().splitlines())
    proc = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(bad), "--no-embeddings", env=own_server)
    assert_one_line_error(proc, f"wikidata5m_transductive_train.txt:{n}:", "P999", code=2)
    assert _read(own_server, "MATCH (n) RETURN count(n) AS n")[0]["n"] == 0


def test_bulk_against_another_neo4j_writes_the_csv_and_prints_the_importer_command(own_server, tmp_path):
    """NEO4J_URI is not the local kgqa server: no server is stopped, the CSVs and the exact command come back."""
    env = {**own_server, "KGQA_NEO4J_BOLT_PORT": "17788"}     # so NEO4J_URI (17787) is "another Neo4j"
    proc = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(SAMPLE), "--no-embeddings", "--json", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    steps = json.loads(proc.stdout)["next_steps"]
    assert len(steps) == 3 and steps[1].startswith("neo4j-admin database import full ")
    assert "--nodes=" in steps[1] and "--relationships=" in steps[1] and "kgqa load wikidata5m" in steps[2]
    facts_csv = Path(steps[1].split("--relationships=")[1].split()[0])
    assert sum(1 for _ in facts_csv.open(encoding="utf-8")) == 90 + 1          # header + every fact once
    assert _read(own_server, "MATCH (n) RETURN count(n) AS n")[0]["n"] == 0   # nothing loaded
    assert "kgqa load wikidata5m --bulk --path" in steps[2]

    # the same command before the import: one line saying what to run, nothing written
    again = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(SAMPLE), "--no-embeddings", env=env)
    assert_one_line_error(again, "not imported into", "neo4j-admin", code=2)
    # the user runs the printed importer where the database lives (here: this server, stopped), then the same
    # command: the rest is loaded over Bolt, the structure and descriptions are not written again, CSVs removed
    _import_as_printed(own_server, steps[1])
    rest = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(SAMPLE), "--no-embeddings", "--json", env=env)
    assert rest.returncode == 0, rest.stderr[-3000:]
    rep = json.loads(rest.stdout)
    assert rep["next_steps"] == [] and rep["counts"]["entities"] == 43 and rep["counts"]["facts"] == 90
    assert any("imported where the database lives" in w for w in rep["warnings"])
    assert not {"entity CSV", "neo4j-admin import", "descriptions"} & {p["phase"] for p in rep["phases"]}
    assert "schema" in {p["phase"] for p in rep["phases"]}
    assert not facts_csv.parent.exists()
    facts = _read(own_server, "MATCH (h:Entity)-[f]->(t:Entity) RETURN h.id AS h, type(f) AS p, t.id AS t")
    assert {(r["h"], r["p"], r["t"]) for r in facts} == _triples()
    assert _read(own_server, "MATCH (e:Entity {id: 'Q7186'}) RETURN e.description IS NOT NULL AS d")[0]["d"]
    _read(own_server, "MATCH (n) DETACH DELETE n", write=True)        # a sample: one transaction


def _import_as_printed(env, command: str) -> None:
    """Run ``neo4j-admin database import full …`` as printed, on the stopped own server's home."""
    import os
    import subprocess

    from kgqa.core.neo4j_local import LocalNeo4j

    s = _settings(env)
    server = LocalNeo4j(s)
    assert run_kgqa("neo4j", "stop", env=env).returncode == 0
    args = command.split()[3:]                                  # after "neo4j-admin database import"
    java = [s.java, "-cp", f"{s.neo4j_jars}/*", "org.neo4j.cli.AdminTool", "database", "import", *args]
    out = subprocess.run(java, env={**os.environ, "NEO4J_HOME": str(server.home), "NEO4J_CONF": str(server.conf_dir)},
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert run_kgqa("neo4j", "start", env=env).returncode == 0


def test_bulk_load_equals_the_incremental_graph_then_refuses_a_second_one(own_server):
    proc = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(SAMPLE), "--images", str(SAMPLE / "images"),
                    "--json", env=own_server, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(proc.stdout)
    assert rep["next_steps"] == []
    assert rep["counts"] == {"entities": 43, "relations": 18, "facts": 90, "images": 4}   # as the Bolt loader
    phases = {p["phase"]: p for p in rep["phases"]}
    assert {"validate + import CSV", "entity CSV", "neo4j-admin import", "schema", "build vector index"} <= set(phases)
    assert not {"descriptions", "embed entities"} & set(phases)     # imported with the entities, not over Bolt
    facts = {(r["h"], r["t"], r["p"]) for r in _read(
        own_server, "MATCH (h:Entity)-[f]->(t:Entity) RETURN h.id AS h, type(f) AS p, t.id AS t")}
    assert {(h, p, t) for h, t, p in facts} == _triples()
    row = _read(own_server, "MATCH (e:Entity {id: 'Q7186'}) RETURN e.name AS name, e.aliases AS aliases, "
                            "e.label_keys AS keys, e.description IS NOT NULL AS described, "
                            "size(e.name_embedding) AS dim")[0]
    assert row["name"] == "Marie Curie" and row["described"] and row["dim"] == 384
    _imported_columns_are_what_bolt_would_write(own_server)
    assert row["aliases"] == ["Maria Skłodowska-Curie", "Madame Curie"]
    assert row["keys"] == ["marie curie", "maria skłodowska curie", "madame curie"]     # as the Bolt loader's
    hit = _read(own_server, "CALL db.index.fulltext.queryNodes('entity_label_keys', '\"madame curie\"') "
                            "YIELD node RETURN node.id AS id")
    assert [r["id"] for r in hit] == ["Q7186"]                                          # linking by alias works
    cons = {r["name"] for r in _read(own_server, "SHOW CONSTRAINTS YIELD name RETURN name")}
    assert cons, "the schema is applied after the import"
    # the importer's store had no writer lease: taken again after it, given back at the end (no node left),
    # its constraint in place for the next writer, which takes it (and is refused for --bulk, not busy)
    assert "writer_lease_name" in cons
    assert _read(own_server, "MATCH (l:WriterLease) RETURN count(l) AS n")[0]["n"] == 0
    again = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(SAMPLE), env=own_server)
    assert_one_line_error(again, "--bulk is for a first load into an empty database", "node(s)", code=2)


def _imported_columns_are_what_bolt_would_write(env):
    """The importer read the entity CSV's description and float[] vector columns (issue 61): every entity has the
    text file's description and a vector of the type setNodeVectorProperty writes, equal to the encoder's to 4
    decimals, and the vector index built over them finds each name's own entity first."""
    from kgqa.core.config import Settings
    from kgqa.models.encoder import encoder_for

    text = dict(ln.split("\t", 1) for ln in (SAMPLE / "wikidata5m_text.txt").read_text(encoding="utf-8").splitlines()
                if ln.strip())
    rows = _read(env, "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.description AS d, "
                      "e.name_embedding AS v, valueType(e.name_embedding) AS t")
    assert len(rows) == 43 and {r["id"]: r["d"] for r in rows if r["id"] in text} == {
        q: d.strip() for q, d in text.items() if q in {r["id"] for r in rows}}
    assert {r["t"] for r in rows} == {"LIST<FLOAT NOT NULL> NOT NULL"}
    enc = encoder_for(Settings(data_dir=Path(env["KGQA_DATA_DIR"])))
    want = enc.encode([r["name"] for r in rows])
    got = np.array([r["v"] for r in rows])
    assert np.abs(got - want).max() <= 0.5e-4 + 1e-6
    for r in rows[:10]:
        hit = _read(env, "CALL db.index.vector.queryNodes('entity_name_embedding', 1, $v) YIELD node "
                         "RETURN node.name AS name", v=r["v"])
        assert hit[0]["name"] == r["name"]
