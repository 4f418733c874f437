"""The bundled demo KG (data/demo) is well-formed and its questions are answerable from it.

No services: the files are read directly. `make demo` and the eval/VisPath tests rely on
these properties (every gold edge a fact, every image readable, no dangling entity).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
QID = re.compile(r"^Q[1-9][0-9]*$")
PID = re.compile(r"^P[0-9]+$")


def _lines(name):
    with open(DEMO / name, encoding="utf-8") as fh:
        return [ln.rstrip("\n").split("\t") for ln in fh if ln.strip()]


@pytest.fixture(scope="module")
def kg():
    entities = {}
    for cols in _lines("wikidata5m_entity.txt"):
        assert len(cols) >= 2 and QID.match(cols[0]) and all(c.strip() for c in cols[1:]), cols
        assert cols[0] not in entities, f"duplicate entity {cols[0]}"
        entities[cols[0]] = cols[1:]
    relations = {}
    for cols in _lines("wikidata5m_relation.txt"):
        assert len(cols) >= 2 and PID.match(cols[0]) and all(c.strip() for c in cols[1:]), cols
        relations[cols[0]] = cols[1:]
    facts = set()
    for split in ("train", "valid", "test"):
        for cols in _lines(f"wikidata5m_transductive_{split}.txt"):
            assert len(cols) == 3, (split, cols)
            facts.add(tuple(cols))
    return entities, relations, facts


def test_sizes_match_the_readme(kg):
    entities, relations, facts = kg
    assert 200 <= len(entities) <= 450
    assert len(facts) > 2 * len(entities)  # several relations per entity on average
    assert len(relations) >= 30


def test_no_dangling_entity_or_unknown_relation(kg):
    entities, relations, facts = kg
    for h, p, t in facts:
        assert h in entities, h
        assert t in entities, t
        assert p in relations, p
    used = {e for h, _, t in facts for e in (h, t)}
    assert set(entities) == used, set(entities) - used


def test_transductive_split_valid_test_entities_occur_in_train(kg):
    train = {tuple(c) for c in _lines("wikidata5m_transductive_train.txt")}
    seen = {e for h, _, t in train for e in (h, t)}
    for split in ("valid", "test"):
        for h, _, t in _lines(f"wikidata5m_transductive_{split}.txt"):
            assert h in seen and t in seen


def test_descriptions_cover_every_entity(kg):
    entities, _, _ = kg
    text = {c[0]: c[1] for c in _lines("wikidata5m_text.txt")}
    assert set(text) == set(entities)


def test_entity_images_exist_and_are_readable(kg):
    from kgqa.core.images import load_image

    entities, _, _ = kg
    rows = _lines("entity_images.tsv")
    assert len(rows) >= 20
    for qid, rel in rows:
        assert qid in entities, qid
        img = load_image(DEMO / rel)
        assert img.width >= 100
        # every entity image has a perturbed query copy, which is not the same bytes
        q = load_image(DEMO / "queries" / (Path(rel).stem + ".jpg"))
        assert q.sha256 != img.sha256


def test_questions_gold_paths_exist_in_the_kg(kg):
    entities, _, facts = kg
    rows = [json.loads(ln) for ln in (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines() if ln]
    assert 15 <= len(rows) <= 30
    assert len({r["id"] for r in rows}) == len(rows)
    hops = {r["hops"] for r in rows}
    assert hops == {1, 2, 3}
    for r in rows:
        path = [tuple(e) for e in r["path"]]
        assert len(path) == r["hops"], r["id"]
        for edge in path:
            assert edge in facts, (r["id"], edge)
        for a, b in zip(path, path[1:]):
            assert a[2] == b[0], r["id"]  # a connected chain
        assert path[0][0] == r["topic"]["id"], r["id"]
        assert path[-1][2] == r["answer_id"], r["id"]
        assert entities[r["answer_id"]][0] == r["answer"], r["id"]
        if "image" in r:
            assert (DEMO / r["image"]).is_file(), r["image"]
            # the topic entity is referred to only visually
            assert r["topic"]["label"].lower() not in r["question"].lower(), r["id"]


def test_image_questions_use_query_images_of_their_topic():
    pairs = {tuple(c) for c in _lines("entity_images.tsv")}
    stems = {Path(rel).stem: qid for qid, rel in pairs}
    for ln in (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(ln)
        if "image" in r:
            assert stems[Path(r["image"]).stem] == r["topic"]["id"], r["id"]
