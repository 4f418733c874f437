"""The ground floor: one import namespace, a lazy CLI, queries as files, clear errors."""

from __future__ import annotations

import re
import socket
import subprocess
import sys

import pytest

from tests.conftest import REPO, assert_one_line_error, free_port, run_kgqa


def _py(code: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)


def test_components_live_under_one_namespace(tmp_path):
    ok = _py("import kgqa.core, kgqa.models, kgqa.gnn, kgqa.loaders, kgqa.methods, kgqa.app, kgqa.cypher; "
             "print('ok')", tmp_path)
    assert ok.returncode == 0 and "ok" in ok.stdout, ok.stderr
    for top in ("engine", "gnn", "loaders", "cypher", "core", "methods", "app"):
        bad = _py(f"import {top}", tmp_path)
        assert bad.returncode != 0 and "ModuleNotFoundError" in bad.stderr, f"`import {top}` must fail"


def test_cli_import_loads_nothing_heavy(tmp_path):
    code = ("import sys; import kgqa.app.cli; "
            "heavy = [m for m in ('torch', 'neo4j', 'transformers', 'sentence_transformers', 'numpy') "
            "if m in sys.modules]; print(heavy)")
    out = _py(code, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_help_lists_groups():
    out = run_kgqa("--help")
    assert out.returncode == 0
    for group in ("neo4j", "doctor", "load"):
        assert group in out.stdout


def test_every_query_file_has_a_header_and_only_params():
    from kgqa import cypher

    names = cypher.names()
    assert "schema" in names and "entity_vector_search" in names
    for name in names:
        head = cypher.header(name)
        for key in ("purpose:", "params:", "returns:"):
            assert key in head, f"cypher/{name}.cypher lacks '{key}' in its header"
        body = "\n".join(cypher.statements(name))
        assert not re.search(r"\{[a-z_]+\}", body.replace("{indexConfig", "")), f"{name}: template hole"


def test_schema_declares_the_graph_model():
    from kgqa import cypher

    schema = "\n".join(cypher.statements("schema"))
    assert "FOR (e:Entity) REQUIRE e.id IS UNIQUE" in schema
    assert "FOR (r:Relation) REQUIRE r.id IS UNIQUE" in schema
    assert re.search(r"VECTOR INDEX entity_name_embedding.*?384.*?'cosine'", schema, re.S)
    assert all("IF NOT EXISTS" in s for s in cypher.statements("schema"))


def test_unknown_query_name_is_refused():
    from kgqa import cypher

    with pytest.raises(ValueError):
        cypher.load("../etc/passwd")
    with pytest.raises(KeyError):
        cypher.load("no_such_query")


@pytest.mark.parametrize("pid", ["P19", "P1376"])
def test_relation_type_accepts_property_ids(pid):
    from kgqa.core.graph import relation_type

    assert relation_type(pid) == pid


@pytest.mark.parametrize("bad", ["p19", "P19]->() DETACH DELETE n //", "Q5", "", "P", "P1 ", None])
def test_relation_type_rejects_anything_else(bad):
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import relation_type

    with pytest.raises(InvalidInput):
        relation_type(bad)


def test_neo4j_down_is_one_line(tmp_path):
    port = free_port()
    out = run_kgqa("neo4j", "init", env={"NEO4J_URI": f"bolt://127.0.0.1:{port}", "KGQA_DATA_DIR": str(tmp_path)})
    assert_one_line_error(out, "not reachable", f"127.0.0.1:{port}", code=3)


def test_java_missing_is_one_line(tmp_path):
    out = run_kgqa("neo4j", "start", env={"KGQA_JAVA": "no-such-java-binary", "KGQA_DATA_DIR": str(tmp_path),
                                          "JAVA_HOME": str(tmp_path)})
    assert_one_line_error(out, "Java not found", code=5)


def test_port_taken_is_one_line(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = run_kgqa("neo4j", "start", env={"KGQA_NEO4J_BOLT_PORT": str(port), "KGQA_DATA_DIR": str(tmp_path),
                                              "KGQA_NEO4J_HTTP_PORT": str(free_port())})
    assert_one_line_error(out, f"port {port}", "taken", code=5)
    assert not (tmp_path / "neo4j" / "run" / "neo4j.pid").exists()


def test_status_when_not_running_says_so(tmp_path):
    out = run_kgqa("neo4j", "status", env={"KGQA_DATA_DIR": str(tmp_path)})
    assert out.returncode == 1
    assert "not running" in out.stdout


def test_compose_file_is_valid():
    import shutil

    compose = REPO / "docker" / "compose.yaml"
    assert compose.exists()
    tool = shutil.which("docker-compose")
    if tool is None:
        pytest.skip("docker-compose not installed (make test installs it where apt is available)")
    out = subprocess.run([tool, "-f", str(compose), "config", "-q"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_the_demo_script_parses():
    """`make demo` runs scripts/demo.sh: a syntax error there is a broken README command."""
    out = subprocess.run(["bash", "-n", str(REPO / "scripts" / "demo.sh")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
