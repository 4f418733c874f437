"""Relation-chain vectors kept across questions and processes (kgqa.core.chain_vectors): the same vectors as the
encoder's, keyed by the encoder's identity, bounded, and one ask encodes each chain text once."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from kgqa.core.chain_vectors import ChainVectors
from kgqa.core.kg import KG
from tests.fakes.vispath import Q2HOP, BagOfWordsEncoder, FakeGraph, make

CHAINS = ["architect → place of birth", "architect", "architect → place of birth → country"]


class Counting:
    """An encoder that records every text it is asked to encode."""

    def __init__(self, seed: int = 0, identity: str = "counting"):
        self.rng = np.random.default_rng(seed)
        self.identity = identity
        self.texts: list[str] = []
        self.table: dict[str, np.ndarray] = {}

    def encode(self, texts, batch_size=64):
        self.texts += list(texts)
        for t in texts:
            v = self.table.setdefault(t, self.rng.standard_normal(8).astype(np.float32))
            self.table[t] = v / np.linalg.norm(v)
        return np.stack([self.table[t] for t in texts])


def test_stored_vectors_are_the_encoders_and_a_new_process_reads_them_without_encoding(tmp_path):
    enc = Counting()
    store = ChainVectors(tmp_path / "chain-vectors.sqlite")
    first = store.get("e1", CHAINS + CHAINS[:1], enc.encode)
    assert enc.texts == CHAINS                                       # each distinct text once
    assert np.array_equal(first, np.stack([enc.table[t] for t in CHAINS + CHAINS[:1]]))
    later = ChainVectors(tmp_path / "chain-vectors.sqlite")          # another process: the file only
    again = later.get("e1", CHAINS[::-1], Counting(seed=1).encode)
    assert np.array_equal(again, first[:3][::-1])                    # the same bytes, nothing encoded


def test_vectors_are_keyed_by_the_encoder_identity(tmp_path):
    a, b = Counting(seed=0), Counting(seed=1)
    store = ChainVectors(tmp_path / "chain-vectors.sqlite")
    va = store.get("reader sha-a · onnx", CHAINS, a.encode)
    vb = store.get("reader sha-b · onnx", CHAINS, b.encode)
    assert a.texts == CHAINS and b.texts == CHAINS                   # b never read a's vectors
    assert not np.allclose(va, vb)
    assert np.array_equal(store.get("reader sha-a · onnx", CHAINS, Counting(seed=2).encode), va)


def test_a_kg_keys_the_rules_vectors_by_its_encoders_identity(tmp_path):
    g = FakeGraph({}, {}, [])
    g.settings = type("S", (), {"data_dir": tmp_path})()
    one, other = Counting(seed=0, identity="MiniLM · onnx"), Counting(seed=1, identity="MiniLM · model2vec")
    v1 = KG(g, one).embed_chains(CHAINS)
    v2 = KG(g, other).embed_chains(CHAINS)
    assert one.texts == CHAINS and other.texts == CHAINS and not np.allclose(v1, v2)
    again = Counting(seed=3, identity="MiniLM · onnx")
    assert np.array_equal(KG(g, again).embed_chains(CHAINS), v1) and again.texts == []


def test_memory_and_file_are_bounded_least_recently_used_first(tmp_path):
    enc = Counting()
    store = ChainVectors(tmp_path / "chain-vectors.sqlite", memory=4, stored=10)
    texts = [f"r{k}" for k in range(30)]
    for k in range(0, 30, 3):
        store.get("e", texts[k:k + 3], enc.encode)
        store.get("e", ["r0"], enc.encode)                            # used again and again: kept
    assert len(store._mem) <= 4
    n = sqlite3.connect(tmp_path / "chain-vectors.sqlite").execute("SELECT count(*) FROM chain_vectors").fetchone()
    assert n[0] <= 10
    fresh = Counting(seed=5)
    ChainVectors(tmp_path / "chain-vectors.sqlite").get("e", ["r0", "r29", "r3"], fresh.encode)
    assert fresh.texts == ["r3"]                                     # r3: the oldest, gone


def test_a_file_that_cannot_be_written_leaves_the_memory_store_working(tmp_path):
    (tmp_path / "cache").write_text("a file where the folder would be")
    enc = Counting()
    store = ChainVectors(tmp_path / "cache" / "chain-vectors.sqlite")
    v = store.get("e", CHAINS, enc.encode)
    assert np.array_equal(store.get("e", CHAINS, enc.encode), v) and enc.texts == CHAINS


def test_one_ask_encodes_each_chain_text_once():
    """A whole VisPath ask with the chain reader (the real shipped bi-encoder) over the fake graph: every hop's
    chains through the reader and the rules' Eq. 8, and terminal selection; no chain is encoded twice by either
    (nor a text the reader reads both as a chain and as an end's kind, "country")."""
    pytest.importorskip("torch")
    from pathlib import Path

    from kgqa.models.heads.chain_reader import ChainReader, _torch_reader, read_meta

    ck = Path(__file__).resolve().parents[2] / "data" / "demo" / "paths" / "chain-reader.safetensors"
    vp, g, _ = make(llm_steps="none", reader_checkpoint=str(ck))          # no LLM examines the chains: the reader
    meta = read_meta(ck)
    reader = ChainReader(_torch_reader(ck, meta, True), meta, dict(g.relations), {}, store=vp.kg.chain_vectors,
                         checkpoint_key="test")
    read: list[str] = []
    forward = reader._encode
    reader._encode = lambda texts: (read.extend(texts), forward(texts))[1]
    rules: list[str] = []
    enc = vp.kg.encoder
    encode = enc.encode
    enc.encode = lambda texts, batch_size=64: (rules.extend(texts), encode(texts))[1]
    vp.reader = type("Slot", (), {"get": lambda self: reader, "error": None, "path": ck})()
    run = vp.run(Q2HOP, object())
    assert run.reader and len(run.hops) >= 2
    chains = {reader.chain_text([e.relation_id for e in p.edges]) for h in run.hops for p in h.retained}
    assert chains and chains <= set(read)                             # the reader read the kept chains ...
    assert len(read) == len(set(read)), sorted(t for t in set(read) if read.count(t) > 1)   # ... each once
    names = set(g.relations.values())
    # the rules' chains of 2+ relations (Eq. 8; the fake graph itself encodes single relation names): once each
    ruled = [t for t in rules if "→" in t and set(t.split(" → ")) <= names]
    assert ruled and len(ruled) == len(set(ruled))


def test_a_second_process_encodes_only_the_question_chains_and_end_kinds_are_kept():
    """The same ask again with a new reader over the same store (a new `kgqa ask` process): the relation chains and
    the ends' kinds (what kind of thing each end is, read against the question) come from the store; the reader
    encodes the question alone."""
    pytest.importorskip("torch")
    from pathlib import Path

    from kgqa.models.heads.chain_reader import ChainReader, _torch_reader, read_meta

    ck = Path(__file__).resolve().parents[2] / "data" / "demo" / "paths" / "chain-reader.safetensors"
    vp, g, _ = make(llm_steps="none", reader_checkpoint=str(ck))
    meta = read_meta(ck)
    model = _torch_reader(ck, meta, True)
    read: list[str] = []
    for _ in range(2):
        reader = ChainReader(model, meta, dict(g.relations), {}, store=vp.kg.chain_vectors, checkpoint_key="test")
        forward = reader._encode
        reader._encode = lambda texts, forward=forward: (read.extend(texts), forward(texts))[1]
        vp.reader = type("Slot", (), {"get": lambda self, r=reader: r, "error": None, "path": ck})()
        read.clear()
        run = vp.run(Q2HOP, object())
    assert run.reader and run.answer
    assert read == [Q2HOP], read


def test_a_kg_without_a_data_dir_keeps_its_vectors_to_itself():
    g = FakeGraph({}, {}, [])
    one, two = KG(g, BagOfWordsEncoder()), KG(g, BagOfWordsEncoder())
    assert one.chain_vectors is not two.chain_vectors and one.chain_vectors.path is None
