"""bench/twin.py: the generated Wikidata5M twin is read by the loader exactly as the release's files are.

A small size, strict validation (any bad line would raise with its file:line), the Bolt loader's writes
recorded by ``RecordingGraph`` and ``--bulk``'s CSVs; plus what the full-size runs rely on: the same seed
gives the same files, "human" and the countries are the hubs."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.twin import N_RELATIONS, generate
from kgqa.loaders.progress import Bars
from kgqa.loaders.wikidata5m.bulk import BulkLoader
from kgqa.loaders.wikidata5m.load import load_wikidata5m
from kgqa.loaders.wikidata5m.options import LoadOptions
from tests.fakes.loader import RecordingGraph

ENTITIES = 10_000


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    folder = tmp_path_factory.mktemp("twin") / "wd5m"
    return folder, generate(folder, ENTITIES, seed=7, images=4)


def test_the_bolt_loader_reads_every_line_of_the_twin(twin, tmp_path):
    folder, stats = twin
    g = RecordingGraph(tmp_path)
    rep = load_wikidata5m(g, folder, options=LoadOptions(embeddings=False))      # strict: a bad line raises
    rows = {p.name: p.rows for p in rep.phases}
    assert rep.rejects == 0 and not rep.skipped
    assert rows["relations"] == N_RELATIONS == stats["relations"]
    assert rows["entities"] == rows["descriptions"] == ENTITIES
    assert rows["facts"] == stats["triples"] > 4 * ENTITIES
    images = [w for w in g.writes if w[0] == "load_images"]
    assert sum(len(w[2]["rows"]) for w in images) == 4
    entities = [r for w in g.writes if w[0] == "load_entities_create" for r in w[2]["rows"]]
    assert entities[0]["name"] == "human" and any(r["aliases"] for r in entities[1:])


def test_bulk_reads_the_twin_as_the_bolt_loader_does(twin, tmp_path):
    folder, stats = twin
    loader = BulkLoader(RecordingGraph(tmp_path), folder, None, None, LoadOptions(embeddings=False))
    with Bars(False) as bars:
        counts = loader.validate_to_csv(tmp_path / "csv", bars)
    loader.rejects.close()
    assert counts["facts"] == stats["triples"] and counts["entities"] == ENTITIES


def test_the_twin_is_seeded_and_has_the_release_shape(twin, tmp_path):
    folder, stats = twin
    again = generate(tmp_path / "again", ENTITIES, seed=7, images=4)
    assert again == stats
    for name in ("wikidata5m_entity.txt", "wikidata5m_transductive_train.txt", "wikidata5m_text.txt"):
        assert (tmp_path / "again" / name).read_bytes() == (folder / name).read_bytes()
    tails = Counter(line.split("\t")[2].strip() for line in
                    (folder / "wikidata5m_transductive_train.txt").read_text().splitlines())
    assert tails.most_common(1)[0][0] == "Q5"                 # "human" is the biggest hub
    assert stats["valid"] + stats["test"] < stats["triples"] / 100
