"""``--bulk``'s entity CSV carries each entity's description and name vector (issue 61), so that the importer
writes them offline: the same descriptions the Bolt loader would SET, the encoder's vectors to 4 decimals, in
the format ``neo4j-admin database import`` reads (a real import of these columns is in
tests/integration/test_loader_bulk.py). No Neo4j here."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from kgqa.loaders.progress import Bars
from kgqa.loaders.wikidata5m.bulk import ARRAY_DELIMITER, BulkLoader
from kgqa.loaders.wikidata5m.bulk_csv import format_vectors
from kgqa.loaders.wikidata5m.load import load_wikidata5m
from kgqa.loaders.wikidata5m.options import LoadOptions
from tests.fakes.loader import RecordingGraph
from tests.fakes.vispath import BagOfWordsEncoder


def _entity_csv(sample: Path, tmp_path: Path, encoder=None, **opts) -> tuple[list[str], dict[str, list[str]], BulkLoader]:
    loader = BulkLoader(RecordingGraph(tmp_path), sample, None, encoder,
                        LoadOptions(embeddings=encoder is not None, **opts))
    with Bars(False) as bars:
        loader.validate_to_csv(tmp_path / "csv", bars)
    loader.rejects.close()
    with open(tmp_path / "csv" / "entities.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return rows[0], {r[0]: r for r in rows[1:]}, loader


def _bolt_descriptions(sample: Path, tmp_path: Path) -> dict[str, str]:
    g = RecordingGraph(tmp_path)
    load_wikidata5m(g, sample, options=LoadOptions(embeddings=False))
    return {r["id"]: r["description"] for r in g.rows("load_descriptions")}


def test_the_entity_csv_carries_the_descriptions_the_bolt_loader_sets(sample, tmp_path):
    header, rows, loader = _entity_csv(sample, tmp_path)
    assert header == ["id:ID(Entity)", "name", "aliases:string[]", "label_keys:string[]", "description", ":LABEL"]
    want = _bolt_descriptions(sample, tmp_path / "bolt")
    assert want and {q: r[4] for q, r in rows.items() if r[4]} == want
    assert loader.csv_descriptions and not loader.csv_vectors
    assert not list((tmp_path / "csv").glob("*.sqlite"))            # the descriptions' side table is gone


def test_descriptions_in_any_order_and_the_last_of_a_repeated_id_wins_as_over_bolt(sample, tmp_path):
    text = sample / "wikidata5m_text.txt"
    lines = text.read_text(encoding="utf-8").splitlines()
    lines.reverse()                                                  # not the entity file's order
    lines.append("Q90\tParis, a second description (the later line).")
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, rows, _ = _entity_csv(sample, tmp_path)
    want = _bolt_descriptions(sample, tmp_path / "bolt")
    assert rows["Q90"][4] == want["Q90"] == "Paris, a second description (the later line)."
    assert {q: r[4] for q, r in rows.items() if r[4]} == want


def test_the_entity_csv_carries_each_name_vector_to_four_decimals(sample, tmp_path, monkeypatch):
    monkeypatch.setattr("kgqa.loaders.wikidata5m.bulk.ENTITY_BATCH", 7)   # several batches, one name repeated across them
    enc = BagOfWordsEncoder()
    header, rows, loader = _entity_csv(sample, tmp_path, encoder=enc)
    assert header[-1] == "name_embedding:float[]" and loader.csv_vectors
    assert loader.imported_columns() == ["description", "name_embedding"]
    ids = list(rows)
    want = enc.encode([rows[q][1] for q in ids])
    got = np.array([[float(x) for x in rows[q][-1].split(ARRAY_DELIMITER)] for q in ids])
    assert got.shape == (len(ids), 384) and len(ids) == 43
    assert np.abs(got - want).max() <= 0.5e-4 + 1e-7
    st = next(p for p in loader.report.phases if p.name == "entity CSV")
    assert st.rows == 43 and st.detail["unique_names"] >= 43 - 1


def test_format_vectors_reads_back_as_the_vectors_rounded():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(50, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    v[0, :5] = [1.0, -1.0, 0.0, -0.00004, 0.99996]
    fields = format_vectors(v, ARRAY_DELIMITER)
    assert fields[0].split(ARRAY_DELIMITER.encode())[:5] == [b"1.0000", b"-1.0000", b".0000", b".0000", b"1.0000"]
    back = np.array([[float(x) for x in f.decode("ascii").split(ARRAY_DELIMITER)] for f in fields])
    assert np.abs(back - v).max() <= 0.5e-4 + 1e-7
    cos = (back * v).sum(1) / np.linalg.norm(back, axis=1) / np.linalg.norm(v, axis=1)
    assert cos[1:].min() > 1 - 1e-6



def test_the_importers_progress_is_read_from_its_log(tmp_path):
    from kgqa.loaders.wikidata5m.bulk import importer_percent

    log = tmp_path / "importer.log"
    assert importer_percent(log) is None                              # not started: no file
    log.write_text("Neo4j version: 5.26\nImporting the contents of these files into ...\n", encoding="utf-8")
    assert importer_percent(log) is None                              # no stage yet
    log.write_text("(1/4) Node import 2026-12-07 19:20:01\n.......... ..........   5% ∆3s [3s]\n"
                   ".......... ..........  10% ∆4s [7s]\nNode import COMPLETED in 1m\n\n"
                   "(2/4) Relationship import 2026-12-07 19:21:01\n.......... ..........  45% ∆1s [9s]\n",
                   encoding="utf-8")
    assert importer_percent(log) == 145


def test_a_server_that_does_not_start_after_the_import_leaves_a_rerun_that_resumes_after_it(tmp_path):
    """The importer succeeded, then the server did not answer in time: the state file says the import is done (and
    what the entity CSV carried), its CSVs are gone, and the next --bulk resumes after the import instead of
    importing again."""
    import sys
    from types import SimpleNamespace

    import pytest

    from kgqa.core.errors import LocalServerError
    from kgqa.loaders.wikidata5m.bulk import IMPORTED, BulkState, _run_importer

    class Server:
        home = conf_dir = tmp_path

        def stop(self):
            pass

        def start(self, wait_s=120.0):
            raise LocalServerError("Neo4j did not answer on Bolt within 120s")

        def status(self):
            return SimpleNamespace(running=False)

    state = BulkState(SimpleNamespace(data_dir=tmp_path))
    folder = tmp_path / "import" / "csv"
    folder.mkdir(parents=True)
    for name in ("relations.csv", "entities.csv", "facts.csv"):
        (folder / name).write_text("header\n")
    state.begin(folder)
    done = dict(imported=True, path=str(tmp_path / "data"), folder=None, in_csv=["description", "name_embedding"])
    with pytest.raises(LocalServerError, match="after the import"):
        _run_importer(state, Server(), [sys.executable, "-c", "pass"], folder, imported=done)
    assert not list(folder.glob("*.csv"))
    again = BulkState(SimpleNamespace(data_dir=tmp_path))
    assert again.recover() == IMPORTED and again.data_path() == str(tmp_path / "data")
    assert again.imported_columns() == ["description", "name_embedding"]
