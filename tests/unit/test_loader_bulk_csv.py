"""``--bulk``'s single read of each file: validation and the importer's CSV together (no Neo4j).

The CSVs must hold exactly what the incremental loader would write over Bolt (recorded by
``RecordingGraph``): the same entities with the same aliases and label keys, the same facts
once each, nothing from a rejected line; a strict error leaves no CSV behind. The import
itself, on a real server, is in tests/integration/test_loader_bulk.py."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from kgqa.core.errors import InvalidInput
from kgqa.loaders.progress import Bars
from kgqa.loaders.wikidata5m import files
from kgqa.loaders.wikidata5m.bulk import ARRAY_DELIMITER, BulkLoader, bulk_load_wikidata5m
from kgqa.loaders.wikidata5m.files import read_lines
from kgqa.loaders.wikidata5m.load import load_wikidata5m
from kgqa.loaders.wikidata5m.options import LoadOptions
from tests.fakes.loader import RecordingGraph, _replace_line


def _csv_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))[1:]


def _bulk_csv(sample_dir: Path, tmp_path: Path, **opts) -> tuple[Path, dict, BulkLoader]:
    loader = BulkLoader(RecordingGraph(tmp_path), sample_dir, None, None, LoadOptions(embeddings=False, **opts))
    folder = tmp_path / "csv"
    with Bars(False) as bars:
        counts = loader.validate_to_csv(folder, bars)
    loader.rejects.close()
    return folder, counts, loader


def _as_bolt(sample_dir: Path, tmp_path: Path, **opts) -> RecordingGraph:
    g = RecordingGraph(tmp_path)
    load_wikidata5m(g, sample_dir, options=LoadOptions(embeddings=False, **opts))
    return g


def _entities(folder: Path) -> dict[str, tuple]:
    split = (lambda v: v.split(ARRAY_DELIMITER) if v else [])
    return {r[0]: (r[1], split(r[2]), split(r[3])) for r in _csv_rows(folder / "entities.csv")}


def _facts(folder: Path) -> list[tuple]:
    return [tuple(r) for r in _csv_rows(folder / "facts.csv")]


def test_bulk_csv_holds_what_the_bolt_loader_writes(sample, tmp_path):
    folder, counts, _ = _bulk_csv(sample, tmp_path)
    g = _as_bolt(sample, tmp_path / "bolt")
    assert counts == {"entities": 43, "relations": 18, "facts": 90}
    assert _entities(folder) == {r["id"]: (r["name"], r["aliases"], r["label_keys"]) for r in g.rows("load_entities")}
    assert sorted(_facts(folder)) == sorted((r["h"], r["type"], r["t"]) for r in g.rows("load_facts"))
    assert {r[0] for r in _csv_rows(folder / "relations.csv")} == {r["id"] for r in g.rows("load_relations")}


def test_bulk_csv_leaves_out_rejected_lenient_lines_like_the_bolt_loader(sample, tmp_path):
    _replace_line(sample / "wikidata5m_transductive_train.txt", 7, b"Q90\tP999\tQ142")
    _replace_line(sample / "wikidata5m_entity.txt", 5, b"Q84\tLondon\t\xff")
    with open(sample / "wikidata5m_entity.txt", "ab") as fh:
        fh.write(b"Q90\tNot Paris\n")                       # a repeated id: the first line wins
    folder, counts, loader = _bulk_csv(sample, tmp_path, strict=False, rejects_path=tmp_path / "r.tsv")
    g = _as_bolt(sample, tmp_path / "bolt", strict=False, rejects_path=tmp_path / "r2.tsv")
    assert "Q84" not in _entities(folder) and _entities(folder)["Q90"][0] != "Not Paris"
    assert set(_entities(folder)) == {r["id"] for r in g.rows("load_entities")}
    assert sorted(_facts(folder)) == sorted((r["h"], r["type"], r["t"]) for r in g.rows("load_facts"))
    assert counts["facts"] == 90 - 1 - 4                        # P999, and London's 4 facts dangle
    assert loader.rejects.count == 1 + 1 + 4


def test_bulk_csv_with_limit_writes_only_the_entities_its_facts_use(sample, tmp_path):
    folder, counts, _ = _bulk_csv(sample, tmp_path, limit=3)
    assert len(_facts(folder)) == 3 and counts["facts"] == 3
    assert set(_entities(folder)) == {"Q90", "Q515", "Q142"}
    assert len(_csv_rows(folder / "relations.csv")) == 18


def test_bulk_csv_writes_a_repeated_fact_once(sample, tmp_path):
    with open(sample / "wikidata5m_transductive_test.txt", "a") as fh:
        fh.write("Q90\tP31\tQ515\n")  # also line 1 of the train split
    folder, counts, loader = _bulk_csv(sample, tmp_path)
    facts = _facts(folder)
    assert len(facts) == 90 == len(set(facts)) == counts["facts"]
    assert loader.report.skipped["repeated triples"] == 1


def test_a_strict_error_in_bulk_leaves_no_csv_and_names_the_line(sample, tmp_path):
    _replace_line(sample / "wikidata5m_transductive_valid.txt", 2, b"Q90\tP31\tQ424242")

    class EmptyGraph(RecordingGraph):
        def read(self, name, params=None, **kw):
            return [{"nodes": 0}] if name == "bulk_node_count" else super().read(name, params, **kw)

    g = EmptyGraph(tmp_path)
    with pytest.raises(InvalidInput) as e:
        bulk_load_wikidata5m(g, sample, options=LoadOptions(embeddings=False))
    assert str(e.value).startswith(f"{sample / 'wikidata5m_transductive_valid.txt'}:2: dangling entity: Q424242")
    imports = Path(g.settings.data_dir) / "import"
    assert not imports.exists() or not any(imports.rglob("*.csv"))
    assert g.writes == []


def test_lines_are_numbered_across_blocks_and_a_bad_byte_is_named(tmp_path, monkeypatch):
    """Lines are decoded a block at a time; numbering (blank lines included) and the one
    line that is not UTF-8 must come out as if read line by line."""
    monkeypatch.setattr(files, "BLOCK_BYTES", 64)
    raw = [f"Q{i}\tP1\tQ{i + 1}".encode() for i in range(1, 200)]
    raw[9] = b""                                      # a blank line 10
    raw[120] = b"Q121\tP1\t\xffQ122"                  # line 121 is not UTF-8
    raw[150] = b"Q151\tP1\tQ152\r"                    # a Windows line end
    (tmp_path / "t.txt").write_bytes(b"\n".join(raw))   # no newline after the last line
    got = list(read_lines(tmp_path / "t.txt"))
    assert [n for n, *_ in got] == [n for n in range(1, 200) if n != 10]
    bad = [(n, why) for n, text, why, _ in got if text is None]
    assert bad == [(121, "encoding: not valid UTF-8 (byte 8 of the line)")]
    texts = {n: text for n, text, *_ in got}
    assert texts[151] == "Q151\tP1\tQ152" and texts[199] == "Q199\tP1\tQ200" and texts[1] == "Q1\tP1\tQ2"
