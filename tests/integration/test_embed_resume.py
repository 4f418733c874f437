"""A load interrupted during its embedding phase continues where it stopped (real Neo4j, real MiniLM).

Data: ten copies of tests/fixtures/wd5m_sample with shifted ids (Q95… → Q9500000000…, apart from
the ids of test_loader_wikidata5m's copies) and distinct names ("Marie Curie 3"), so every entity
needs an encoder call of its own. Everything created here is deleted afterwards, by id.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import KGQA, assert_one_line_error, kill_once_started, run_kgqa

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "wd5m_sample"
COPIES = 10
pytestmark = pytest.mark.integration


def _shift(qid: str, k: int, base: int) -> str:
    return f"Q{(base + k) * 10**8 + int(qid[1:])}"


def _sample(dst: Path, base: int) -> tuple[list[str], dict[str, str]]:
    """COPIES copies of the sample (no images, no descriptions); (entity ids, id → name)."""
    dst.mkdir()
    shutil.copy(SAMPLE / "wikidata5m_relation.txt", dst)
    ents, triples, names = [], [], {}
    src_triples = [ln.split("\t") for f in sorted(SAMPLE.glob("wikidata5m_transductive_*.txt"))
                   for ln in f.read_text().splitlines() if ln.strip()]
    for k in range(COPIES):
        for ln in (SAMPLE / "wikidata5m_entity.txt").read_text(encoding="utf-8").splitlines():
            q, name, *aliases = ln.split("\t")
            qid, new = _shift(q, k, base), f"{name} {k}"
            names[qid] = new
            ents.append("\t".join([qid, new, *aliases]))
        triples += [(_shift(h, k, base), r, _shift(t, k, base)) for h, r, t in src_triples]
    (dst / "wikidata5m_entity.txt").write_text("\n".join(ents) + "\n", encoding="utf-8")
    (dst / "wikidata5m_all_triplet.txt").write_text("\n".join("\t".join(t) for t in triples) + "\n")
    return list(names), names


def _delete(graph, ids, data: Path):
    with graph.session() as s:
        s.run("MATCH (c:LoadCheckpoint) WHERE any(p IN c.inputs WHERE p STARTS WITH $d) DELETE c",
              d=str(data.resolve())).consume()
        s.run("MATCH (e:Entity) WHERE e.id IN $ids DETACH DELETE e", ids=list(ids)).consume()


def _vectors(graph, ids) -> dict[str, list[float]]:
    with graph.session(write=False) as s:
        rows = s.run("MATCH (e:Entity) WHERE e.id IN $ids AND e.name_embedding IS NOT NULL "
                     "RETURN e.id AS id, e.name_embedding AS v", ids=list(ids))
        return {r["id"]: list(r["v"]) for r in rows}


class CountingEncoder:
    """The real encoder, recording every name it is asked for; ``stop_after`` entity names
    raises KeyboardInterrupt (a Ctrl-C) at the start of the call that would pass it."""

    def __init__(self, inner, entity_names: set[str], stop_after: int | None = None):
        self.inner, self.entity_names, self.stop_after = inner, entity_names, stop_after
        self.backend = getattr(inner, "backend", None)
        self.entity_calls: list[list[str]] = []

    @property
    def encoded(self) -> list[str]:
        return [n for call in self.entity_calls for n in call]

    def encode(self, texts, batch_size: int = 64, threads: int | None = None):
        texts = list(texts)
        if texts and all(t in self.entity_names for t in texts):
            if self.stop_after is not None and len(self.encoded) >= self.stop_after:
                raise KeyboardInterrupt
            self.entity_calls.append(texts)
        return self.inner.encode(texts, batch_size=batch_size, threads=threads)


@pytest.fixture(scope="module")
def encoder(settings):
    from kgqa.models.encoder import encoder_for

    return encoder_for(settings)


def test_interrupted_embedding_phase_resumes_without_recomputing(graph, encoder, tmp_path):
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    data = tmp_path / "copies"
    ids, names = _sample(data, base=95)
    total = len(ids)
    opts = LoadOptions(embed_chunk=50)
    try:
        # 1. Ctrl-C during the embedding phase, after three 50-entity steps were written
        first = CountingEncoder(encoder, set(names.values()), stop_after=150)
        with pytest.raises(KeyboardInterrupt):
            load_wikidata5m(graph, data, encoder=first, options=opts)
        before = _vectors(graph, ids)
        assert len(first.entity_calls) == 3 and len(before) == 150
        assert {names[i] for i in before} == set(first.encoded)

        # 2. the same load again: only the entities still lacking a vector reach the encoder
        second = CountingEncoder(encoder, set(names.values()))
        report = load_wikidata5m(graph, data, encoder=second, options=opts)
        phase = {p.name: p for p in report.phases}["embed entities"]
        assert phase.rows == total - 150
        assert sorted(second.encoded) == sorted(names[i] for i in ids if i not in before)  # each once
        after = _vectors(graph, ids)
        assert set(after) == set(ids)  # every entity has its vector
        assert all(after[i] == before[i] for i in before)  # the first run's vectors were kept
        # what was stored is the name's embedding as the query side encodes it, alone (int8's dynamic
        # activation ranges depend on the batch, so the bound is the documented 0.99, not equality)
        probe = [ids[0], ids[200], ids[-1]]
        want = encoder.encode([names[i] for i in probe], batch_size=1)
        got = np.array([after[i] for i in probe], dtype=np.float32)
        assert np.all((want * got).sum(axis=1) > 0.99)
        assert float(want[0] @ got[1]) < 0.99  # and another name's vector is not that close

        # 3. a third run has nothing left to embed: the encoder is not asked for any entity name
        third = CountingEncoder(encoder, set(names.values()))
        report = load_wikidata5m(graph, data, encoder=third, options=opts)
        assert {p.name: p for p in report.phases}["embed entities"].rows == 0
        assert third.entity_calls == []
    finally:
        _delete(graph, ids, data)


def test_killed_cli_load_continues_its_embeddings(graph, tmp_path):
    data = tmp_path / "copies"
    ids, _ = _sample(data, base=96)
    total = len(ids)
    env = {**os.environ}
    env.pop("KGQA_DEBUG", None)
    cmd = [KGQA, "load", "wikidata5m", "--path", str(data), "--embed-chunk", "10", "--json"]
    try:
        # 1. kill -9 once some, not all, entities have their vector
        kill_once_started(cmd, lambda: len(_vectors(graph, ids)), env=env, timeout=300)
        left = total - len(_vectors(graph, ids))
        assert 0 < left < total

        # 2. the same command again: it embeds exactly the ones left, and then all have one
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        phase = {p["phase"]: p for p in report["phases"]}["embed entities"]
        assert phase["rows"] == left and phase["unique_names"] == left
        assert report["encoder"]  # backend and threads of the phase are reported
        assert set(_vectors(graph, ids)) == set(ids)
    finally:
        _delete(graph, ids, data)


def test_bad_embed_chunk_is_one_line(tmp_path):
    out = run_kgqa("load", "wikidata5m", "--path", str(SAMPLE), "--embed-chunk", "0")
    assert_one_line_error(out, "--embed-chunk 0", code=2)


def test_bad_encoder_backend_is_one_line():
    out = run_kgqa("doctor", "--no-models", env={"KGQA_ENCODER_BACKEND": "tensorflow"})
    assert_one_line_error(out, "KGQA_ENCODER_BACKEND", "onnx-int8", code=2)


def test_a_large_first_load_builds_the_vector_index_once_even_when_interrupted(graph, encoder, tmp_path, monkeypatch):
    """Above VECTOR_INDEX_DEFER_MIN new entities the loader drops entity_name_embedding, writes the
    vectors and builds the index once. Killed in between, the index is missing; the rerun finishes
    the vectors and builds it. Either way the end state answers vector queries."""
    from kgqa.loaders.wikidata5m import embed
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    monkeypatch.setattr(embed, "VECTOR_INDEX_DEFER_MIN", 100)
    data = tmp_path / "copies"
    ids, names = _sample(data, base=97)
    opts = LoadOptions(embed_chunk=50)

    def index_state():
        rows = [r for r in graph.read("schema_indexes") if r["name"] == "entity_name_embedding"]
        return rows[0]["state"] if rows else None

    try:
        first = CountingEncoder(encoder, set(names.values()), stop_after=150)
        with pytest.raises(KeyboardInterrupt):
            load_wikidata5m(graph, data, encoder=first, options=opts)
        assert index_state() is None and len(_vectors(graph, ids)) == 150   # dropped, vectors written

        report = load_wikidata5m(graph, data, encoder=CountingEncoder(encoder, set(names.values())), options=opts)
        assert report.modes["vector index"].startswith(f"dropped for {len(ids):,} new entities")
        assert "build vector index" in {p.name for p in report.phases}
        assert index_state() == "ONLINE"
        vecs = _vectors(graph, ids)
        assert set(vecs) == set(ids)
        probe = ids[123]
        with graph.session(write=False) as s:
            hits = [r["id"] for r in s.run("CALL db.index.vector.queryNodes('entity_name_embedding', 5, $v) "
                                           "YIELD node RETURN node.id AS id", v=vecs[probe])]
        assert probe in hits                      # the rebuilt index holds the new vectors
    finally:
        _delete(graph, ids, data)
        graph.apply_schema()
        graph.await_indexes()
