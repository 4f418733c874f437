"""`kgqa load wikidata5m` against the real Neo4j and the real MiniLM encoder.

Data: tests/fixtures/wd5m_sample (43 real entities, 18 real relations, 90 real facts,
24 descriptions, 4 scikit-image photographs as entity images). The kill-and-resume
test uses ten copies of that sample with shifted ids (Q90… → Q91000000090 …), so it
never collides with the sample itself. Everything created here is deleted afterwards,
by id.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import KGQA, assert_one_line_error, kill_once_started, run_kgqa

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "wd5m_sample"


def _col(path: Path, i: int = 0) -> list[str]:
    return [ln.split("\t")[i] for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


ENTITY_IDS = _col(SAMPLE / "wikidata5m_entity.txt")
RELATION_IDS = _col(SAMPLE / "wikidata5m_relation.txt")
IMAGE_SHAS = [hashlib.sha256(p.read_bytes()).hexdigest()
              for p in [*(SAMPLE / "images").glob("Q*"), SAMPLE / "photos" / "rocket.jpg"]]
TRIPLES = {tuple(ln.split("\t")) for f in sorted(SAMPLE.glob("wikidata5m_transductive_*.txt"))
           for ln in f.read_text().splitlines() if ln.strip()}
BAD_ENTITY = "Q999999991"


def _delete(graph, entity_ids, relation_ids=(), image_shas=(), inputs_under: Path | None = None):
    with graph.session() as s:
        if inputs_under is not None:  # the loader's resume checkpoints for these input files
            s.run("MATCH (c:LoadCheckpoint) WHERE any(p IN c.inputs WHERE p STARTS WITH $d) DELETE c",
                  d=str(inputs_under.resolve())).consume()
        s.run("MATCH (i:Image) WHERE i.sha256 IN $shas DETACH DELETE i", shas=list(image_shas)).consume()
        s.run("MATCH (e:Entity) WHERE e.id IN $ids DETACH DELETE e", ids=list(entity_ids)).consume()
        s.run("MATCH (r:Relation) WHERE r.id IN $ids DELETE r", ids=list(relation_ids)).consume()


def _q(graph, query, **params):
    with graph.session(write=False) as s:
        return [r.data() for r in s.run(query, **params)]


def _facts(graph, ids):
    rows = _q(graph, "MATCH (h:Entity)-[f]->(t:Entity) WHERE h.id IN $ids "
                     "RETURN h.id AS h, type(f) AS r, t.id AS t", ids=list(ids))
    return [(r["h"], r["r"], r["t"]) for r in rows]


@pytest.fixture(scope="module")
def encoder(settings):
    from kgqa.models.encoder import get_encoder

    return get_encoder(threads=settings.torch_threads)


@pytest.fixture(scope="module")
def loaded(graph, encoder):
    """The sample loaded once through the Python API (with images and embeddings)."""
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    _delete(graph, ENTITY_IDS + [BAD_ENTITY], RELATION_IDS, IMAGE_SHAS, SAMPLE)
    report = load_wikidata5m(graph, SAMPLE, images=SAMPLE / "images", encoder=encoder,
                             options=LoadOptions())
    yield report
    _delete(graph, ENTITY_IDS + [BAD_ENTITY], RELATION_IDS, IMAGE_SHAS, SAMPLE)


def test_counts(graph, loaded):
    n = _q(graph, "MATCH (e:Entity) WHERE e.id IN $ids RETURN count(e) AS n", ids=ENTITY_IDS)[0]["n"]
    assert n == 43
    n = _q(graph, "MATCH (r:Relation) WHERE r.id IN $ids RETURN count(r) AS n", ids=RELATION_IDS)[0]["n"]
    assert n == 18
    facts = _facts(graph, ENTITY_IDS)
    assert len(facts) == 90 and set(facts) == TRIPLES
    assert loaded.rejects == 0
    assert {p.name for p in loaded.phases} >= {"validate", "entities", "facts", "images", "embed entities"}


def test_aliases_names_and_unicode(graph, loaded):
    rows = {r["id"]: r for r in _q(graph, "MATCH (e:Entity) WHERE e.id IN ['Q7186', 'Q40'] "
                                          "RETURN e.id AS id, e.name AS name, e.aliases AS aliases")}
    assert rows["Q7186"]["name"] == "Marie Curie"
    assert rows["Q7186"]["aliases"] == ["Maria Skłodowska-Curie", "Madame Curie"]
    assert rows["Q40"]["aliases"] == ["Republic of Austria", "Österreich"]
    rel = _q(graph, "MATCH (r:Relation {id: 'P19'}) RETURN r.name AS name, r.aliases AS aliases")[0]
    assert rel == {"name": "place of birth", "aliases": ["birthplace", "born in"]}


def test_descriptions(graph, loaded):
    rows = {r["id"]: r["d"] for r in _q(graph, "MATCH (e:Entity) WHERE e.id IN ['Q243', 'Q5'] "
                                               "RETURN e.id AS id, e.description AS d")}
    assert "wrought-iron lattice tower" in rows["Q243"]
    assert rows["Q5"] is None  # no line in wikidata5m_text.txt
    assert loaded.skipped.get("descriptions of entities not loaded") == 1  # Q1 is not in the sample


def test_images_linked(graph, loaded):
    rows = _q(graph, "MATCH (i:Image)-[:DEPICTS]->(e:Entity) WHERE e.id IN $ids "
                     "RETURN e.id AS id, i.sha256 AS sha, i.path AS path, i.mime AS mime, "
                     "i.width AS w, i.height AS h", ids=ENTITY_IDS)
    by_id = {r["id"]: r for r in rows}
    assert set(by_id) == {"Q146", "Q8486", "Q11631", "Q41291"}  # three from --images, one from the TSV
    cat = by_id["Q146"]
    assert cat["mime"] == "image/jpeg" and Path(cat["path"]).is_absolute() and Path(cat["path"]).is_file()
    assert cat["sha"] == hashlib.sha256(Path(cat["path"]).read_bytes()).hexdigest()
    assert cat["w"] > 0 and cat["h"] > 0
    assert by_id["Q11631"]["mime"] == "image/png"
    assert by_id["Q41291"]["path"].endswith("photos/rocket.jpg")


def test_embeddings_are_normalised_384d(graph, loaded):
    rows = _q(graph, "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.name_embedding AS v", ids=ENTITY_IDS)
    vecs = np.array([r["v"] for r in rows], dtype=np.float32)
    assert vecs.shape == (43, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-3)
    rows = _q(graph, "MATCH (r:Relation) WHERE r.id IN $ids RETURN r.embedding AS v", ids=RELATION_IDS)
    assert len(rows) == 18 and all(r["v"] is not None and len(r["v"]) == 384 for r in rows)


@pytest.mark.parametrize("query,expected", [
    ("Maria Curie", "Q7186"),
    ("W. A. Mozart", "Q254"),
    ("the Eiffel tower", "Q243"),
    ("domestic cat", "Q146"),
    ("a spaceman", "Q11631"),
])
def test_vector_search_finds_entity_for_paraphrased_name(graph, loaded, encoder, query, expected):
    vec = encoder.encode([query])[0].tolist()
    hits = graph.read("entity_vector_search", k=5, vector=vec)
    assert hits and hits[0]["id"] == expected, hits


def test_label_lookup_finds_aliases_and_backfill_restores_label_keys(graph, loaded, encoder):
    """Entity linking's label lookup: a mention equal to a name or an alias (case and punctuation aside)
    finds the entity through the entity_label_keys index; a database loaded before label_keys existed
    gets them back from backfill_label_keys, which a second time finds nothing to do."""
    from kgqa.core.kg import KG
    from kgqa.loaders.wikidata5m.load import backfill_label_keys

    kg = KG(graph, encoder)
    assert [e.id for e in kg.label_matches("madame curie")] == ["Q7186"]              # an alias
    assert [e.id for e in kg.label_matches("MARIA SKŁODOWSKA-CURIE!")] == ["Q7186"]   # case, punctuation
    assert kg.label_matches("Curie") == []                                            # a part is no label
    assert kg.link_entities("Österreich", 3)[0].id == "Q40"
    before = _q(graph, "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id, e.label_keys AS k", ids=ENTITY_IDS)
    graph._run("MATCH (e:Entity) WHERE e.id IN $ids REMOVE e.label_keys", {"ids": ENTITY_IDS}, write=True)
    assert kg.label_matches("Madame Curie") == []
    assert backfill_label_keys(graph) >= 43
    after = _q(graph, "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id, e.label_keys AS k", ids=ENTITY_IDS)
    assert sorted(after, key=lambda r: r["id"]) == sorted(before, key=lambda r: r["id"])
    assert backfill_label_keys(graph) == 0
    assert [e.id for e in kg.label_matches("Madame Curie")] == ["Q7186"]


def test_rerun_is_idempotent(graph, loaded, encoder):
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    report = load_wikidata5m(graph, SAMPLE, images=SAMPLE / "images", encoder=encoder, options=LoadOptions())
    assert len(_facts(graph, ENTITY_IDS)) == 90
    n = _q(graph, "MATCH (e:Entity) WHERE e.id IN $ids RETURN count(e) AS n", ids=ENTITY_IDS)[0]["n"]
    assert n == 43
    imgs = _q(graph, "MATCH (i:Image) WHERE i.sha256 IN $s RETURN count(i) AS n", s=IMAGE_SHAS)[0]["n"]
    assert imgs == 4
    embedded = {p.name: p.rows for p in report.phases}
    assert embedded["embed entities"] == 0 and embedded["embed relations"] == 0  # nothing re-embedded


# ------------------------------------------------------------------ bad input through the CLI
@pytest.fixture()
def bad_copy(tmp_path):
    """The sample plus one new entity, with an unknown relation on line 7 of the train split."""
    d = tmp_path / "wd5m"
    shutil.copytree(SAMPLE, d)
    with open(d / "wikidata5m_entity.txt", "a", encoding="utf-8") as fh:
        fh.write(f"{BAD_ENTITY}\tkgqa loader test entity\n")
    lines = (d / "wikidata5m_transductive_train.txt").read_text().splitlines()
    lines[6] = "Q64\tP999\tQ515"
    (d / "wikidata5m_transductive_train.txt").write_text("\n".join(lines) + "\n")
    return d


def test_strict_error_names_file_and_line_and_writes_nothing(graph, loaded, bad_copy):
    proc = run_kgqa("load", "wikidata5m", "--path", str(bad_copy), "--no-embeddings")
    assert_one_line_error(proc, f"{bad_copy / 'wikidata5m_transductive_train.txt'}:7:",
                          "unknown relation: P999", code=2)
    assert _q(graph, "MATCH (e:Entity {id: $id}) RETURN count(e) AS n", id=BAD_ENTITY)[0]["n"] == 0


def test_lenient_skips_and_writes_rejects_file(graph, loaded, bad_copy, tmp_path):
    proc = run_kgqa("load", "wikidata5m", "--path", str(bad_copy), "--lenient", "--no-embeddings", "--json")
    try:
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        assert report["rejects"] == 1 and report["rejects_by_reason"] == {"unknown relation": 1}
        rejects = Path(report["rejects_path"])
        lines = rejects.read_text(encoding="utf-8").splitlines()
        assert lines[1].startswith(f"{bad_copy / 'wikidata5m_transductive_train.txt'}:7\tunknown relation: P999")
        assert _q(graph, "MATCH (e:Entity {id: $id}) RETURN count(e) AS n", id=BAD_ENTITY)[0]["n"] == 1
        assert len(_facts(graph, ENTITY_IDS)) == 90  # the sample's facts untouched (Q64 P31 Q515 stays)
        rejects.unlink()
    finally:
        _delete(graph, [BAD_ENTITY], inputs_under=bad_copy)


# ------------------------------------------------------------------ kill, resume, add embeddings
COPIES = 10


def _shift(qid: str, k: int) -> str:
    return f"Q{(91 + k) * 10**8 + int(qid[1:])}"


def _shifted_sample(dst: Path) -> tuple[list[str], set[tuple[str, str, str]]]:
    """Ten copies of the sample (no images) with disjoint ids; returns (entity ids, triples)."""
    dst.mkdir()
    shutil.copy(SAMPLE / "wikidata5m_relation.txt", dst)
    ents, texts, triples = [], [], []
    for k in range(COPIES):
        for ln in (SAMPLE / "wikidata5m_entity.txt").read_text(encoding="utf-8").splitlines():
            q, rest = ln.split("\t", 1)
            ents.append(f"{_shift(q, k)}\t{rest}")
        for ln in (SAMPLE / "wikidata5m_text.txt").read_text(encoding="utf-8").splitlines()[:-1]:
            q, rest = ln.split("\t", 1)
            texts.append(f"{_shift(q, k)}\t{rest}")
        for h, r, t in sorted(TRIPLES):
            triples.append((_shift(h, k), r, _shift(t, k)))
    (dst / "wikidata5m_entity.txt").write_text("\n".join(ents) + "\n", encoding="utf-8")
    (dst / "wikidata5m_text.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    (dst / "wikidata5m_all_triplet.txt").write_text("\n".join("\t".join(t) for t in triples) + "\n")
    return [e.split("\t")[0] for e in ents], set(triples)


def _state(graph, ids):
    nodes = _q(graph, "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id, e.name AS name, "
                      "e.aliases AS aliases, e.description AS d ORDER BY id", ids=ids)
    facts = _facts(graph, ids)
    return nodes, sorted(facts)


def test_kill_resume_equals_one_clean_run_and_later_run_adds_embeddings(graph, tmp_path):
    data = tmp_path / "shifted"
    ids, triples = _shifted_sample(data)
    env = {**os.environ}
    env.pop("KGQA_DEBUG", None)
    cmd = [KGQA, "load", "wikidata5m", "--path", str(data), "--no-embeddings", "--json"]
    try:
        # 1. kill -9 mid-load: one row per transaction so the load is slow enough to interrupt
        facts_at_kill = kill_once_started([*cmd, "--batch-size", "1"], lambda: len(_facts(graph, ids)), env=env,
                                          timeout=120)
        assert 0 < facts_at_kill < len(triples)

        # 2. rerun the same command: the end state is the one a single clean run gives
        out = subprocess.run([*cmd, "--batch-size", "1"], env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        # a first load CREATEs (no MERGE cost); the checkpoint written with each batch says where to go on
        assert json.loads(out.stdout)["modes"]["facts"].startswith("create, resumed after input 0 line ")
        resumed = _state(graph, ids)
        nodes, facts = resumed
        assert len(nodes) == 43 * COPIES and len({n["id"] for n in nodes}) == 43 * COPIES
        assert len(facts) == len(triples) == 90 * COPIES and set(facts) == triples  # no duplicates, none missing
        assert sum(1 for n in nodes if n["d"]) == 24 * COPIES

        _delete(graph, ids, inputs_under=data)
        clean = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert clean.returncode == 0, clean.stderr
        assert json.loads(clean.stdout)["modes"] == {"entities": "create", "descriptions": "merge", "facts": "create"}
        assert _state(graph, ids) == resumed

        # 3. structure only so far; a later run adds the embeddings (names deduplicated)
        n = _q(graph, "MATCH (e:Entity) WHERE e.id IN $ids AND e.name_embedding IS NOT NULL "
                      "RETURN count(e) AS n", ids=ids)[0]["n"]
        assert n == 0
        emb = subprocess.run([KGQA, "load", "wikidata5m", "--path", str(data), "--json"],
                             env=env, capture_output=True, text=True, timeout=600)
        assert emb.returncode == 0, emb.stderr
        phases = {p["phase"]: p for p in json.loads(emb.stdout)["phases"]}
        assert phases["embed entities"]["rows"] == 43 * COPIES
        assert phases["embed entities"]["unique_names"] == 43  # ten copies share their names
        n = _q(graph, "MATCH (e:Entity) WHERE e.id IN $ids AND e.name_embedding IS NOT NULL "
                      "RETURN count(e) AS n", ids=ids)[0]["n"]
        assert n == 43 * COPIES
        assert _state(graph, ids) == resumed
    finally:
        _delete(graph, ids, inputs_under=data)
