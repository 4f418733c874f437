"""Issue 26, without services: byte limits on what reaches an index (strict refuses with file:line,
lenient loads the row cut and counts it, Bolt and --bulk alike), label keys below Lucene's term
limit, every driver error one line, settings checked before anything runs, and the clean-up of an
interrupted --bulk (a killed kgqa's importer stopped, its CSVs removed, a running one refused)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from neo4j import exceptions as nx

from kgqa.core.errors import GraphUnavailable, InvalidInput
from tests.conftest import assert_one_line_error, run_kgqa
from tests.fakes.loader import SAMPLE, RecordingGraph


def _sample(tmp_path: Path, entity_tail: str = "", text_tail: str = "") -> Path:
    d = tmp_path / "wd"
    shutil.copytree(SAMPLE, d)
    if entity_tail:
        p = d / "wikidata5m_entity.txt"
        lines = p.read_text(encoding="utf-8").split("\n")
        lines[2] += entity_tail                       # line 3: Q64 Berlin
        p.write_text("\n".join(lines), encoding="utf-8")
    if text_tail:
        with open(d / "wikidata5m_text.txt", "a", encoding="utf-8") as fh:
            fh.write(f"Q64\t{text_tail}\n")
    return d


def _load(graph, path, **opts):
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    return load_wikidata5m(graph, path, options=LoadOptions(embeddings=False, **opts))


def _berlin(g: RecordingGraph) -> dict:
    return next(r for r in g.rows("load_entities") if r["id"] == "Q64")


# ------------------------------------------------------------------ byte limits
def test_a_40kb_alias_strict_names_file_and_line_and_nothing_is_written(tmp_path):
    d = _sample(tmp_path, "\t" + "x" * 40_000)
    g = RecordingGraph(tmp_path)
    with pytest.raises(InvalidInput, match=r"wikidata5m_entity.txt:3: alias too long: 40,000 bytes .* for Q64"):
        _load(g, d)
    assert not g.rows("load_entities") and not g.rows("load_relations")


def test_a_40kb_alias_lenient_loads_the_entity_without_it_and_counts_it(tmp_path):
    d = _sample(tmp_path, "\t" + "x" * 40_000)
    g = RecordingGraph(tmp_path)
    report = _load(g, d, strict=False)
    assert report.skipped["lines with aliases left out in wikidata5m_entity.txt"] == 1
    berlin = _berlin(g)
    assert berlin["aliases"] == ["Berlin, Germany"] and berlin["label_keys"] == ["berlin", "berlin germany"]


def test_10mb_of_short_aliases_keep_only_the_first_64kb(tmp_path):
    from kgqa.loaders.wikidata5m.files import MAX_NAMES_BYTES

    d = _sample(tmp_path, "".join(f"\talias number {i:08d}" for i in range(500_000)))   # ~11 MB
    with pytest.raises(InvalidInput, match=r"wikidata5m_entity.txt:3: aliases too long: .* past 65,536 bytes"):
        _load(RecordingGraph(tmp_path), d)
    g = RecordingGraph(tmp_path)
    _load(g, d, strict=False)
    berlin = _berlin(g)
    assert sum(len(a.encode()) for a in [berlin["name"], *berlin["aliases"]]) <= MAX_NAMES_BYTES
    assert berlin["aliases"][:2] == ["Berlin, Germany", "alias number 00000000"]


def test_a_10mb_description_strict_refused_lenient_cut_to_the_limit_on_a_character(tmp_path):
    from kgqa.loaders.wikidata5m.files import MAX_DESCRIPTION_BYTES

    d = _sample(tmp_path, text_tail="é" * 5_000_000)          # 10 MB of 2-byte characters
    n = len((d / "wikidata5m_text.txt").read_text(encoding="utf-8").splitlines())
    with pytest.raises(InvalidInput, match=rf"wikidata5m_text.txt:{n}: description too long: 10,000,000 bytes"):
        _load(RecordingGraph(tmp_path), d)
    g = RecordingGraph(tmp_path)
    report = _load(g, d, strict=False)
    assert report.skipped["descriptions cut to the byte limit"] == 1
    cut = [r["description"] for r in g.rows("load_descriptions") if r["id"] == "Q64"][-1]
    assert cut == "é" * (MAX_DESCRIPTION_BYTES // 2)


def test_bulk_csv_gets_the_same_limits(tmp_path):
    from kgqa.loaders.progress import Bars
    from kgqa.loaders.wikidata5m.bulk import BulkLoader
    from kgqa.loaders.wikidata5m.options import LoadOptions

    d = _sample(tmp_path, "\t" + "x" * 40_000)
    g = RecordingGraph(tmp_path)
    strict = BulkLoader(g, d, None, None, LoadOptions(embeddings=False, rejects_path=tmp_path / "r.tsv"))
    with pytest.raises(InvalidInput, match=r"wikidata5m_entity.txt:3: alias too long"), Bars(False) as bars:
        strict.validate_to_csv(tmp_path / "csv1", bars)
    lenient = BulkLoader(g, d, None, None, LoadOptions(embeddings=False, strict=False, rejects_path=tmp_path / "r.tsv"))
    with Bars(False) as bars:
        lenient.validate_to_csv(tmp_path / "csv2", bars)
    csv = (tmp_path / "csv2" / "entities.csv").read_text(encoding="utf-8")
    assert "xxxx" not in csv and "Q64,Berlin,"in csv
    assert lenient.report.skipped == {"lines with aliases left out in wikidata5m_entity.txt": 1}


def test_label_keys_stay_below_lucenes_term_limit():
    from kgqa.core.kg import LUCENE_MAX_TERM_BYTES, MAX_LABEL_KEY_BYTES, label_keys

    assert MAX_LABEL_KEY_BYTES < LUCENE_MAX_TERM_BYTES
    keys = label_keys("Berlin", ["x" * 40_000, "İ" * 3_000, "Berlin, Germany"])  # 'İ' lower-cases to 3 bytes
    assert keys == ["berlin", "berlin germany"] or all(len(k.encode()) <= MAX_LABEL_KEY_BYTES for k in keys)
    assert "x" * 40_000 not in keys and all(len(k.encode()) <= MAX_LABEL_KEY_BYTES for k in keys)


# ------------------------------------------------------------------ driver errors: one line
def _graph():
    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph

    return Graph(Settings(neo4j_uri="bolt://127.0.0.1:7687"))


@pytest.mark.parametrize("code,message,fragment", [
    ("Neo.ClientError.Security.AuthenticationRateLimit",
     "The client has provided incorrect authentication details too many times in a row.",
     "wait a few seconds (the server's dbms.security.auth_lock_time, 5 s by default), then retry with the right "
     "NEO4J_PASSWORD"),
    ("Neo.TransientError.General.DatabaseUnavailable", "Database 'neo4j' is unavailable.",
     "is unavailable (stopped, starting or failed to recover"),
    ("Neo.DatabaseError.General.UnknownError",
     "The database has encountered a critical error, and needs to be restarted. Please see database logs.",
     "down after a critical error (database panic"),
    ("Neo.ClientError.Security.CredentialsExpired", "The credentials have expired.", "CredentialsExpired"),
    ("Neo.DatabaseError.Statement.ExecutionFailed", "Lucene said:\n\tat org.apache...\n\tat more", "failed the query"),
])
def test_every_server_error_is_one_graph_unavailable_line(code, message, fragment):
    err = nx.Neo4jError._hydrate_neo4j(code=code, message=message)

    def fail():
        raise err

    with pytest.raises(GraphUnavailable) as info:
        _graph()._guard(fail)
    line = str(info.value)
    assert fragment in line and "\n" not in line and len(line) < 500, line


def test_a_driver_error_is_one_line_too():
    def fail():
        raise nx.ConnectionAcquisitionTimeoutError("failed to obtain a connection from the pool within 60s")

    with pytest.raises(GraphUnavailable, match="ConnectionAcquisitionTimeoutError: failed to obtain"):
        _graph()._guard(fail)


# ------------------------------------------------------------------ settings checked first
@pytest.mark.parametrize("env,fragment", [
    ({"KGQA_TORCH_THREADS": "-3"}, "KGQA_TORCH_THREADS='-3': Input should be greater than or equal to 1"),
    ({"KGQA_LOAD_THREADS": "-1"}, "KGQA_LOAD_THREADS='-1'"),
    ({"KGQA_NEO4J_BOLT_PORT": "70000"}, "KGQA_NEO4J_BOLT_PORT='70000'"),
    ({"KGQA_NEO4J_TIMEOUT_S": "0"}, "KGQA_NEO4J_TIMEOUT_S='0'"),
])
def test_bad_settings_are_one_line_exit_2(env, fragment):
    assert_one_line_error(run_kgqa("doctor", "--no-models", env=env, timeout=60), fragment, code=2)


def test_a_data_dir_that_is_a_file_fails_doctor_and_load_in_one_line(tmp_path):
    f = tmp_path / "afile"
    f.write_text("not a folder")
    assert_one_line_error(run_kgqa("doctor", "--no-models", env={"KGQA_DATA_DIR": str(f)}, timeout=60),
                          f"KGQA_DATA_DIR='{f}': {f} exists and is not a folder", code=2)
    p = run_kgqa("load", "wikidata5m", "--path", str(SAMPLE), env={"KGQA_DATA_DIR": str(f / "sub")}, timeout=60)
    assert_one_line_error(p, f"{f} is a file, not a folder", code=2)


# ------------------------------------------------------------------ an interrupted --bulk
def _settings(tmp_path):
    from kgqa.core.config import Settings

    return Settings(data_dir=tmp_path / "data")


def _fake(marker: str) -> subprocess.Popen:
    """A process whose command line holds ``marker`` (an importer's 'AdminTool', a kgqa's 'kgqa'), returned once
    /proc shows it: right after the fork its cmdline can still be empty (seen on a loaded machine)."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", marker], start_new_session=True)
    cmdline = Path(f"/proc/{p.pid}/cmdline")
    for _ in range(500):
        if marker.encode() in cmdline.read_bytes():
            break
        time.sleep(0.01)
    return p


def test_the_rerun_stops_a_killed_runs_importer_and_removes_its_csvs(tmp_path):
    from kgqa.loaders.wikidata5m.bulk import BulkState

    s = _settings(tmp_path)
    folder = s.data_dir / "import" / "wikidata5m-1"
    folder.mkdir(parents=True)
    (folder / "facts.csv").write_text("x")
    importer = _fake("org.neo4j.cli.AdminTool")
    state = BulkState(s)
    state.path.write_text(json.dumps({"owner": 2 ** 22 + 7, "folder": str(folder), "importer": importer.pid,
                                      "server_stopped": False, "imported_over": True}))
    try:
        done = state.recover()
        assert f"importer pid {importer.pid} stopped" in done and "its CSVs removed" in done
        assert importer.wait(timeout=10) is not None and not folder.exists() and not state.path.exists()
    finally:
        importer.kill()


def test_a_bulk_killed_before_its_import_is_forgotten(tmp_path):
    from kgqa.loaders.wikidata5m.bulk import BulkState

    s = _settings(tmp_path)
    state = BulkState(s)
    state.begin(s.data_dir / "import" / "wikidata5m-2")
    state.update(owner=2 ** 22 + 7)            # its owner is gone, the server was never stopped
    assert state.recover() == "" and not state.path.exists()


def test_a_bulk_killed_after_its_import_is_resumed_not_refused(tmp_path):
    """Its owner (or Neo4j) died after the import: the state says so until the Bolt phases are done, so that
    the same --bulk loads the rest instead of refusing a database that is no longer empty."""
    from kgqa.loaders.wikidata5m.bulk import IMPORTED, BulkState

    s = _settings(tmp_path)
    state = BulkState(s)
    state.begin(s.data_dir / "import" / "wikidata5m-3")
    state.update(owner=2 ** 22 + 7, imported=True, path=str(tmp_path / "wd5m"), folder=None)
    assert state.recover() == IMPORTED and state.data_path() == str(tmp_path / "wd5m") and state.path.exists()


def test_a_second_bulk_while_one_runs_is_refused_in_one_line(tmp_path):
    from kgqa.loaders.wikidata5m.bulk import BulkState

    s = _settings(tmp_path)
    other = _fake("kgqa")
    try:
        state = BulkState(s)
        state.path.parent.mkdir(parents=True)
        state.path.write_text(json.dumps({"owner": other.pid, "folder": None, "importer": None}))
        with pytest.raises(InvalidInput, match=rf"another --bulk load \(pid {other.pid}\) is running"):
            state.recover()
        assert state.path.exists()
    finally:
        other.kill()
