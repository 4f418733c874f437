"""Issue 26 on the real Neo4j: one bad alias must not take the database down, and an interrupted
``--bulk`` must leave a server a rerun can load into.

* A 40 KB alias (over Lucene's 32,766-byte term limit of the ``entity_label_keys`` full-text index:
  before the byte limits it made Neo4j panic, and after a restart the index was FAILED): ``--strict``
  refuses it with ``file:line``, nothing written; ``--lenient`` loads the entity without that alias
  and counts it; the database stays up and a question is answered. Over Bolt (the shared test
  server) and with ``--bulk`` (a server of this module's own).
* ``--bulk`` interrupted while the importer runs (SIGTERM to kgqa, and kill -9 of kgqa): the server
  runs again, no importer is left, the CSVs are gone, and the rerun loads without a manual step.

The module's own server (``--bulk`` stops and restarts it) takes ports KGQA_TEST_RELIABILITY_BOLT /
_HTTP (default 17797 / 17584), next to tests/integration/test_loader_bulk.py's 17787 / 17574.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import KGQA, VISPATH_KG, assert_one_line_error, run_kgqa
from tests.integration.conftest import remove_kg

pytestmark = pytest.mark.integration

ALIAS = "x" * 40_000          # 40 KB: over Lucene's term limit
QUESTION = "Who manufactures the Falcon 9 rocket?"


def _with_long_alias(dst: Path) -> Path:
    """The VisPath fixture KG with a 40 KB alias on Falcon 9 (line 1 of the entity file)."""
    shutil.copytree(VISPATH_KG, dst, ignore=shutil.ignore_patterns("images", "photos", "entity_images.tsv"))
    path = dst / "wikidata5m_entity.txt"
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0].startswith("Q741925\tFalcon 9")
    lines[0] += "\t" + ALIAS
    path.write_text("\n".join(lines), encoding="utf-8")
    return dst


def _answered(env: dict | None = None) -> dict:
    p = run_kgqa("ask", QUESTION, "--json", env={"KGQA_CHAT_BACKEND": "none", **(env or {})}, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout[p.stdout.index("{"):])


# --------------------------------------------------------------------------- over Bolt (shared server)
@pytest.fixture()
def long_alias_kg(graph, tmp_path):
    data = _with_long_alias(tmp_path / "kg")
    remove_kg(graph, data)
    yield data
    remove_kg(graph, data)


def test_a_40kb_alias_is_refused_strict_and_left_out_lenient_and_the_database_stays_up(graph, long_alias_kg):
    strict = run_kgqa("load", "wikidata5m", "--path", str(long_alias_kg), "--no-embeddings", timeout=600)
    assert_one_line_error(strict, "wikidata5m_entity.txt:1: alias too long: 40,000 bytes", "Q741925", code=2)
    assert graph._run("MATCH (e:Entity {id: 'Q741925'}) RETURN count(e) AS n", {}, write=False)[0]["n"] == 0

    lenient = run_kgqa("load", "wikidata5m", "--path", str(long_alias_kg), "--lenient", "--json", timeout=900)
    assert lenient.returncode == 0, lenient.stderr[-2000:]
    report = json.loads(lenient.stdout[lenient.stdout.index("{"):])
    assert report["skipped"]["lines with aliases left out in wikidata5m_entity.txt"] == 1
    row = graph._run("MATCH (e:Entity {id: 'Q741925'}) RETURN e.aliases AS a, e.label_keys AS k", {},
                     write=False)[0]
    assert row["a"] == ["F9", "Falcon 9 rocket"] and "falcon 9 rocket" in row["k"]
    # before: a database panic here; status exit 0 all the same
    status = run_kgqa("neo4j", "status")
    assert status.returncode == 0, status.stdout + status.stderr
    states = {r["name"]: r["state"] for r in graph.read("schema_indexes")}
    assert states["entity_label_keys"] == "ONLINE"
    answer = _answered()
    assert (answer["start_entity_id"], answer["answer"]) == ("Q741925", "SpaceX")


# --------------------------------------------------------------------------- --bulk (own server)
@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    data = tmp_path_factory.mktemp("reliability-neo4j")
    bolt = os.environ.get("KGQA_TEST_RELIABILITY_BOLT", "17797")
    http = os.environ.get("KGQA_TEST_RELIABILITY_HTTP", "17584")
    env = {"KGQA_DATA_DIR": str(data), "KGQA_NEO4J_BOLT_PORT": bolt, "KGQA_NEO4J_HTTP_PORT": http,
           "NEO4J_URI": f"bolt://127.0.0.1:{bolt}", "NEO4J_PASSWORD": "kgqa-local",
           "KGQA_NEO4J_HEAP": "512m", "KGQA_NEO4J_PAGECACHE": "256m"}
    start = run_kgqa("neo4j", "start", env=env)
    assert start.returncode == 0, start.stderr
    yield env
    run_kgqa("neo4j", "stop", env=env)


def _graph(env):
    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph

    return Graph(Settings(neo4j_uri=env["NEO4J_URI"], data_dir=Path(env["KGQA_DATA_DIR"]),
                          neo4j_bolt_port=int(env["KGQA_NEO4J_BOLT_PORT"]),
                          neo4j_http_port=int(env["KGQA_NEO4J_HTTP_PORT"])))


def _count(env, query: str) -> int:
    with _graph(env) as g:
        return g._run(query, {}, write=False)[0]["n"]


def _empty(env) -> None:
    with _graph(env) as g:
        while g._run("MATCH (n) WITH n LIMIT 10000 DETACH DELETE n RETURN count(*) AS n", {}, write=True)[0]["n"]:
            pass


def test_bulk_a_40kb_alias_strict_refused_lenient_left_out_then_answered(own_server, tmp_path):
    data = _with_long_alias(tmp_path / "kg")
    strict = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(data), "--no-embeddings", env=own_server)
    assert_one_line_error(strict, "wikidata5m_entity.txt:1: alias too long: 40,000 bytes", code=2)
    assert _count(own_server, "MATCH (n) RETURN count(n) AS n") == 0
    assert not list((Path(own_server["KGQA_DATA_DIR"]) / "import").glob("wikidata5m-*/*.csv"))

    lenient = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(data), "--lenient", "--json",
                       env=own_server, timeout=900)
    assert lenient.returncode == 0, lenient.stderr[-2000:]
    report = json.loads(lenient.stdout[lenient.stdout.index("{"):])
    assert report["skipped"]["lines with aliases left out in wikidata5m_entity.txt"] == 1
    with _graph(own_server) as g:
        row = g._run("MATCH (e:Entity {id: 'Q741925'}) RETURN e.aliases AS a", {}, write=False)[0]
        states = {r["name"]: r["state"] for r in g.read("schema_indexes")}
    assert row["a"] == ["F9", "Falcon 9 rocket"] and states["entity_label_keys"] == "ONLINE"
    assert run_kgqa("neo4j", "status", env=own_server).returncode == 0
    answer = _answered(own_server)
    assert (answer["start_entity_id"], answer["answer"]) == ("Q741925", "SpaceX")
    _empty(own_server)


def _generated(root: Path, entities: int = 20_000, triples: int = 60_000) -> tuple[Path, int]:
    """A generated Wikidata5M folder (fixed seed); returns it and its distinct facts."""
    rnd = random.Random(26)
    root.mkdir(parents=True)
    (root / "wikidata5m_entity.txt").write_text("".join(f"Q{i}\tentity {i}\talias {i}\n"
                                                        for i in range(1, entities + 1)))
    (root / "wikidata5m_relation.txt").write_text("".join(f"P{i}\trelation {i}\n" for i in range(1, 21)))
    facts = [(rnd.randint(1, entities), rnd.randint(1, 20), rnd.randint(1, entities)) for _ in range(triples)]
    (root / "wikidata5m_all_triplet.txt").write_text("".join(f"Q{h}\tP{r}\tQ{t}\n" for h, r, t in facts))
    return root, len(set(facts))


def _interrupt_during_import(env, data: Path, sig: int) -> tuple[int, int, str]:
    """Start a --bulk load, send ``sig`` to kgqa 2 s after the importer started; (return code, importer
    pid, stderr)."""
    state = Path(env["KGQA_DATA_DIR"]) / "import" / "bulk-state.json"
    proc = subprocess.Popen([KGQA, "load", "wikidata5m", "--bulk", "--path", str(data), "--no-embeddings"],
                            env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    importer = None
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None and importer is None:
        try:
            importer = json.loads(state.read_text()).get("importer")
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    assert importer, "the importer never started"
    time.sleep(2)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode != 0, "the load finished before it could be interrupted"
    return proc.returncode, importer, err


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return b"AdminTool" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ProcessLookupError):
        return False


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "kill-9"])
def test_bulk_interrupted_during_the_importer_then_a_rerun_loads(own_server, tmp_path, sig):
    data, facts = _generated(tmp_path / "gen")
    imports = Path(own_server["KGQA_DATA_DIR"]) / "import"
    rc, importer, err = _interrupt_during_import(own_server, data, sig)
    if sig == signal.SIGTERM:   # kgqa cleaned up itself: server up, importer stopped, CSVs gone, exit 130
        assert rc == 130 and "Traceback" not in err, err
        assert "--bulk interrupted" in err
        assert not _alive(importer)
        assert not list(imports.glob("wikidata5m-*/*.csv"))
        # the server runs again; its database opens, or (the importer had begun writing the store) it is
        # reported DOWN in one line: what the interrupted importer wrote is replaced by the rerun below
        st = run_kgqa("neo4j", "status", env=own_server)
        assert st.stdout.startswith("running"), st.stdout + st.stderr
        assert st.returncode == 0 or (st.returncode == 3 and "unavailable" in st.stdout + st.stderr), st.stdout
    else:                       # killed outright: the rerun does the clean-up
        assert rc == -signal.SIGKILL
    rerun = run_kgqa("load", "wikidata5m", "--bulk", "--path", str(data), "--no-embeddings", "--json",
                     env=own_server, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "an interrupted --bulk was cleaned up" in rerun.stderr
    assert not _alive(importer)
    assert not (imports / "bulk-state.json").exists()
    assert not list(imports.glob("wikidata5m-*/*.csv"))
    assert _count(own_server, "MATCH (e:Entity) RETURN count(e) AS n") == 20_000
    assert _count(own_server, "MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS n") == facts
    _empty(own_server)


# --------------------------------------------------------------------------- a panic and a FAILED index
@pytest.mark.slow
def test_a_panicked_database_is_down_for_status_and_init_rebuilds_the_failed_index(own_server):
    """What an over-long label key written by an older kgqa (or by hand) does, and the way back."""
    from kgqa.core.errors import GraphUnavailable

    with _graph(own_server) as g:
        g.apply_schema()
        g.await_indexes()
        with pytest.raises(GraphUnavailable) as info:      # Lucene: "immense term"; Neo4j panics
            g._run("CREATE (:Entity {id: 'Q26000001', name: 'long', label_keys: [$k]})", {"k": "k" * 40_000},
                   write=True)
    assert "\n" not in str(info.value)
    status = run_kgqa("neo4j", "status", env=own_server)
    assert status.returncode == 3 and "database DOWN" in status.stderr, status.stdout + status.stderr
    assert run_kgqa("neo4j", "stop", env=own_server).returncode == 0
    assert run_kgqa("neo4j", "start", "--no-init", env=own_server).returncode == 0
    doctor = run_kgqa("doctor", "--no-models", "--json", env=own_server)
    schema = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "schema")
    assert doctor.returncode == 1 and not schema["ok"]
    assert schema["detail"] == "index(es) FAILED: entity_label_keys: run `kgqa neo4j init` to rebuild"
    init = run_kgqa("neo4j", "init", env=own_server)
    assert init.returncode == 0, init.stderr
    assert "rebuilt FAILED index(es) entity_label_keys" in init.stdout
    doctor = run_kgqa("doctor", "--no-models", "--json", env=own_server)
    assert doctor.returncode == 0, doctor.stdout
    _empty(own_server)
