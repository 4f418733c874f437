"""Wikidata5M loader logic without Neo4j: parsing, file discovery, strict/lenient validation.

The loader's writes go to ``RecordingGraph``, a stand-in that records the named
queries it is asked to run (the real-Neo4j behaviour is in tests/integration).
"""

from __future__ import annotations

import re

import pytest

from kgqa.core.errors import InvalidInput
from kgqa.loaders.wikidata5m.files import find_files, parse_catalogue_line, parse_text_line, parse_triple_line
from kgqa.loaders.wikidata5m.load import load_wikidata5m
from kgqa.loaders.wikidata5m.options import LoadOptions
from tests.fakes.loader import RecordingGraph, _replace_line

QID = re.compile(r"^Q[1-9][0-9]*$")


# ------------------------------------------------------------------ parsing
def test_catalogue_line_takes_first_name_as_label_and_dedupes_aliases():
    row, why = parse_catalogue_line("Q7186\tMarie Curie\tMadame Curie\tMarie Curie\t\tMadame Curie ",
                                    QID, "entity id")
    assert why == ""
    assert row == {"id": "Q7186", "name": "Marie Curie", "aliases": ["Madame Curie"],
                   "label_keys": ["marie curie", "madame curie"]}


@pytest.mark.parametrize("line,fragment", [
    ("Q1", "column count"),
    ("X1\tname", "id syntax"),
    ("Q1\t  ", "empty label"),
])
def test_catalogue_line_errors(line, fragment):
    row, why = parse_catalogue_line(line, QID, "entity id")
    assert row is None and why.startswith(fragment)


@pytest.mark.parametrize("line,fragment", [
    ("Q1\tP31", "column count: expected 3"),
    ("Q1\tP31\tQ2\tQ3", "column count: expected 3"),
    ("Q1\tinstance of\tQ2", "id syntax: relation id"),
    ("Q1\tP31\tfoo", "id syntax: tail entity id"),
    ("Q1\tP999\tQ2", "unknown relation: P999"),
    ("Q1\tP31\tQ3", "dangling entity: Q3"),
])
def test_triple_line_errors(line, fragment):
    triple, why = parse_triple_line(line, {"P31"}, {"Q1", "Q2"})
    assert triple is None
    assert why.startswith(fragment), why


def test_triple_and_text_lines_parse():
    assert parse_triple_line("Q1\tP31\tQ2", {"P31"}, {"Q1", "Q2"}) == (("Q1", "P31", "Q2"), "")
    row, _ = parse_text_line("Q1\tA text\twith a tab")
    assert row == {"id": "Q1", "description": "A text\twith a tab"}


# ------------------------------------------------------------------ files
def test_find_files_in_the_release_layout(tmp_path):
    (tmp_path / "wikidata5m_alias").mkdir()
    (tmp_path / "wikidata5m_transductive").mkdir()
    for name in ("wikidata5m_entity.txt", "wikidata5m_relation.txt"):
        (tmp_path / "wikidata5m_alias" / name).write_text("")
    for s in ("train", "valid", "test"):
        (tmp_path / "wikidata5m_transductive" / f"wikidata5m_transductive_{s}.txt").write_text("")
    files = find_files(tmp_path, ("train", "test"))
    assert [p.name for p in files.triples] == ["wikidata5m_transductive_train.txt",
                                               "wikidata5m_transductive_test.txt"]
    assert files.text is None


def test_find_files_names_what_is_missing(tmp_path):
    (tmp_path / "wikidata5m_entity.txt").write_text("")
    with pytest.raises(InvalidInput, match="no wikidata5m_relation.txt"):
        find_files(tmp_path)
    (tmp_path / "wikidata5m_relation.txt").write_text("")
    with pytest.raises(InvalidInput, match="no triple files"):
        find_files(tmp_path)
    (tmp_path / "wikidata5m_transductive_train.txt").write_text("")
    with pytest.raises(InvalidInput, match="wikidata5m_transductive_valid.txt"):
        find_files(tmp_path)
    with pytest.raises(InvalidInput, match="must be one of"):
        find_files(tmp_path, ("train", "dev"))
    (tmp_path / "wikidata5m_transductive_train.txt").unlink()
    (tmp_path / "wikidata5m_all_triplet.txt").write_text("")
    assert find_files(tmp_path).triples[0].name == "wikidata5m_all_triplet.txt"


# ------------------------------------------------------------------ strict / lenient
def test_sample_loads_everything(sample, tmp_path):
    g = RecordingGraph(tmp_path)
    report = load_wikidata5m(g, sample, images=sample / "images", options=LoadOptions(embeddings=False))
    assert len(g.rows("load_entities")) == 43
    assert len(g.rows("load_relations")) == 18
    assert len(g.rows("load_facts")) == 90
    assert len(g.rows("load_descriptions")) == 24
    assert {r["entity"] for r in g.rows("load_images")} == {"Q146", "Q8486", "Q11631", "Q41291"}
    assert report.rejects == 0
    assert report.skipped == {"descriptions of entities not loaded": 1}
    assert report.modes == {"entities": "create", "descriptions": "merge", "facts": "create"}
    facts = {(r["h"], r["type"], r["t"]) for r in g.rows("load_facts")}
    assert len(facts) == 90


@pytest.mark.parametrize("file,lineno,bad,fragment", [
    ("wikidata5m_transductive_train.txt", 7, b"Q90\tP999\tQ142", "unknown relation: P999"),
    ("wikidata5m_transductive_valid.txt", 2, b"Q90\tP31\tQ424242", "dangling entity: Q424242"),
    ("wikidata5m_transductive_test.txt", 3, b"Q90\tP31", "column count"),
    ("wikidata5m_entity.txt", 5, b"Q84\tLondon\t\xff\xfe", "encoding"),
    ("wikidata5m_relation.txt", 2, b"subclass\tsubclass of", "id syntax"),
    ("wikidata5m_text.txt", 4, b"Berlin\tthe capital", "id syntax"),
])
def test_strict_stops_at_first_bad_line_before_writing_anything(sample, tmp_path, file, lineno, bad, fragment):
    _replace_line(sample / file, lineno, bad)
    g = RecordingGraph(tmp_path)
    with pytest.raises(InvalidInput) as e:
        load_wikidata5m(g, sample, options=LoadOptions(embeddings=False))
    msg = str(e.value)
    assert msg.startswith(f"{sample / file}:{lineno}: "), msg
    assert fragment in msg
    assert "\n" not in msg
    assert g.writes == []  # every file is validated before the first write


def test_strict_rejects_a_bad_image(sample, tmp_path):
    (sample / "images" / "Q90.jpg").write_bytes(b"not a jpeg at all")
    g = RecordingGraph(tmp_path)
    with pytest.raises(InvalidInput, match="Q90.jpg: not a readable image"):
        load_wikidata5m(g, sample, images=sample / "images", options=LoadOptions(embeddings=False))
    assert g.writes == []


def test_lenient_skips_counts_and_writes_rejects_file(sample, tmp_path):
    _replace_line(sample / "wikidata5m_transductive_train.txt", 7, b"Q90\tP999\tQ142")
    _replace_line(sample / "wikidata5m_transductive_train.txt", 9, b"Q64\tP17")
    _replace_line(sample / "wikidata5m_entity.txt", 5, b"Q84\tLondon\t\xff")
    (sample / "images" / "Q90.jpg").write_bytes(b"not a jpeg at all")
    g = RecordingGraph(tmp_path)
    rejects = tmp_path / "rejects.tsv"
    report = load_wikidata5m(g, sample, images=sample / "images",
                             options=LoadOptions(strict=False, embeddings=False, rejects_path=rejects))
    text = rejects.read_text(encoding="utf-8")
    assert f"{sample / 'wikidata5m_transductive_train.txt'}:7\tunknown relation: P999" in text
    assert f"{sample / 'wikidata5m_transductive_train.txt'}:9\tcolumn count" in text
    assert f"{sample / 'wikidata5m_entity.txt'}:5\tencoding" in text
    assert "Q90.jpg" in text
    # London's entity line was bad: it is not written, and its 4 facts are rejected as dangling
    ids = {r["id"] for r in g.rows("load_entities")}
    assert "Q84" not in ids and len(ids) == 42
    assert report.rejects_by_reason["dangling entity"] == 4
    assert report.rejects == 8 and report.rejects_path == str(rejects)
    assert len(text.splitlines()) == 1 + 8  # header + one line per reject
    assert len(g.rows("load_facts")) == 90 - 2 - 4
    assert {r["entity"] for r in g.rows("load_images")} == {"Q146", "Q8486", "Q11631", "Q41291"}


def test_limit_loads_first_triples_and_only_their_entities(sample, tmp_path):
    g = RecordingGraph(tmp_path)
    load_wikidata5m(g, sample, images=sample / "images", options=LoadOptions(limit=3, embeddings=False))
    assert g.rows("load_facts") and len(g.rows("load_facts")) == 3
    assert {r["id"] for r in g.rows("load_entities")} == {"Q90", "Q515", "Q142"}
    assert len(g.rows("load_relations")) == 18  # the whole catalogue
    assert g.rows("load_images") == []


def test_facts_are_batched_grouped_by_type_and_checkpointed(sample, tmp_path):
    g = RecordingGraph(tmp_path)
    load_wikidata5m(g, sample, options=LoadOptions(batch_size=8, embeddings=False))
    batches = [p for n, _t, p in g.writes if n == "load_facts_create"]
    assert all(len(p["rows"]) <= 8 for p in batches)
    for p in batches:
        types = [r["type"] for r in p["rows"]]
        assert types == sorted(types)  # grouped by relation type within the transaction
    # the checkpoint written with each batch names the last input line it covers
    train = [p for p in batches if p["file"] == 0]
    assert [p["line"] for p in train] == list(range(8, 81, 8))
    assert {p["key"] for p in batches} == {batches[0]["key"]}
    p31 = [r for p in batches for r in p["rows"] if r["type"] == "P31"]
    assert len(p31) == 21


def test_repeated_triples_are_written_once(sample, tmp_path):
    with open(sample / "wikidata5m_transductive_test.txt", "a") as fh:
        fh.write("Q90\tP31\tQ515\n")  # also line 1 of the train split
    g = RecordingGraph(tmp_path)
    report = load_wikidata5m(g, sample, options=LoadOptions(embeddings=False))
    facts = [(r["h"], r["type"], r["t"]) for r in g.rows("load_facts")]
    assert len(facts) == 90 and len(set(facts)) == 90
    assert report.skipped["repeated triples"] == 1


def test_resume_continues_after_a_valid_checkpoint(sample, tmp_path):
    # an earlier run committed the train split up to line 40 (its last fact is still in the graph)
    cp = {"mode": "create", "file": 0, "line": 40, "last": ["Q36", "P30", "Q46"]}
    g = RecordingGraph(tmp_path, checkpoint=cp, fact_exists=True)
    report = load_wikidata5m(g, sample, options=LoadOptions(embeddings=False))
    assert report.modes["facts"] == "create, resumed after input 0 line 40"
    assert len(g.rows("load_facts")) == 90 - 40
    assert report.modes["entities"] == "create"  # its checkpoint's last entity is gone: stale, start over
    assert len(g.rows("load_entities")) == 43


def test_stale_checkpoint_is_dropped(sample, tmp_path):
    cp = {"mode": "create", "file": 0, "line": 40, "last": ["Q36", "P30", "Q46"]}
    g = RecordingGraph(tmp_path, checkpoint=cp, fact_exists=False)
    report = load_wikidata5m(g, sample, options=LoadOptions(embeddings=False))
    assert report.modes["facts"] == "create"
    assert len(g.rows("load_facts")) == 90
    # entities, descriptions and facts each drop the stale checkpoint the stand-in offers them,
    # and the completed load removes the three checkpoints it wrote
    assert sum(1 for n, _t, _p in g.writes if n == "load_checkpoint_delete") == 3 + 3


# ------------------------------------------------------------------ the entity vector index of a first load
class _FakeEncoder:
    def encode(self, texts, batch_size=64, threads=None):
        import numpy as np

        return np.ones((len(texts), 384), dtype="float32") / np.sqrt(384)


class IndexedGraph(RecordingGraph):
    """RecordingGraph whose schema has the entity name vector index (or not) and whose entities all lack a vector."""

    def __init__(self, data_dir, has_index=True):
        super().__init__(data_dir)
        self.has_index = has_index

    def read(self, name, params=None, **kw):
        p = {**(params or {}), **kw}
        if name == "schema_indexes":
            return [{"name": "entity_name_embedding", "state": "ONLINE"}] if self.has_index else []
        if name == "load_entities_lacking_embedding":
            return [{"id": i, "name": f"name {i}"} for i in p["ids"]]
        if name == "load_relations_lacking_embedding":
            return []
        return super().read(name, params, **kw)


def _order(g) -> list[str]:
    return [n for n, _t, _p in g.writes if n in ("load_drop_entity_vector_index", "load_entity_embeddings", "schema")]


def test_a_first_load_of_many_entities_builds_the_vector_index_after_their_vectors(sample, tmp_path, monkeypatch):
    from kgqa.loaders.wikidata5m import embed

    monkeypatch.setattr(embed, "VECTOR_INDEX_DEFER_MIN", 40)        # the sample has 43 entities
    g = IndexedGraph(tmp_path)
    report = load_wikidata5m(g, sample, encoder=_FakeEncoder(), options=LoadOptions())
    order = _order(g)
    # schema at the start, the index dropped before the first vector, built again after the last
    assert order[0] == "schema" and order[1] == "load_drop_entity_vector_index"
    assert order[-1] == "schema" and set(order[2:-1]) == {"load_entity_embeddings"}
    assert "build vector index" in {p.name for p in report.phases}
    assert report.modes["vector index"].startswith("dropped for 43 new entities")


def test_a_small_load_keeps_the_vector_index(sample, tmp_path):
    g = IndexedGraph(tmp_path)
    report = load_wikidata5m(g, sample, encoder=_FakeEncoder(), options=LoadOptions())
    assert "load_drop_entity_vector_index" not in _order(g) and _order(g)[-1] == "load_entity_embeddings"
    assert "vector index" not in report.modes


def test_a_missing_vector_index_is_built_at_the_end_without_a_drop(sample, tmp_path):
    g = IndexedGraph(tmp_path, has_index=False)       # an earlier, killed load dropped it
    report = load_wikidata5m(g, sample, encoder=_FakeEncoder(), options=LoadOptions())
    assert "load_drop_entity_vector_index" not in _order(g) and _order(g)[-1] == "schema"
    assert report.modes["vector index"] == "built after the vectors (it was missing)"
