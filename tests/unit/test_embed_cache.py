"""A document's saved vectors (``loaders/documents/embed_cache``): each slice saved whole as it is computed and
reused by the next load; a temporary file a kill left, a damaged file and another encoder's vectors are never
read back as good; the folder goes with ``remove``."""

from __future__ import annotations

import numpy as np
import pytest

from kgqa.loaders.documents import embed
from kgqa.loaders.documents.embed_cache import EmbeddingCache, doc_folder, remove


class Encoder:
    """Counts the texts it embeds; a text's vector is derived from its length and kind."""

    def __init__(self, fail_after: int | None = None):
        self.seen: list[str] = []
        self.fail_after = fail_after

    def _vecs(self, texts, base):
        if self.fail_after is not None and len(self.seen) + len(texts) > self.fail_after:
            raise KeyboardInterrupt("killed")
        self.seen += list(texts)
        return np.array([[base + len(t), 1.0, 0.0] for t in texts], dtype=np.float32)

    def encode(self, texts, batch_size=64, threads=None):
        return self._vecs(texts, 0.0)

    def encode_passages(self, texts, batch_size=16, threads=None):
        return self._vecs(texts, 1000.0)


def items(n):
    return [("passage" if i % 3 else "name", f"text {i} " + "x" * (i % 7)) for i in range(n)]


def test_a_rerun_reuses_the_slices_a_killed_run_saved(tmp_path, monkeypatch):
    monkeypatch.setattr(embed, "EMBED_SLICE", 10)
    want = embed.embed_texts(Encoder(), items(35))
    # killed while computing the third slice: two slices (20 vectors) are on disk, whole
    with pytest.raises(KeyboardInterrupt):
        embed.embed_texts(Encoder(fail_after=25), items(35), cache=EmbeddingCache(tmp_path, "doc", "m1"))
    assert len(list(doc_folder(tmp_path, "doc").glob("part-*.npz"))) == 2
    enc, progress = Encoder(), []
    cache = EmbeddingCache(tmp_path, "doc", "m1")
    assert len(cache.vectors) == 20
    got = embed.embed_texts(enc, items(35), cache=cache, on_progress=lambda d, t: progress.append((d, t)))
    assert len(enc.seen) == 15 and progress == [(30, 35), (35, 35)]
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    # every slice but the last is saved (a document of one slice writes nothing); another encoder never
    # reuses them, and its files go
    assert len(EmbeddingCache(tmp_path, "doc", "m1").vectors) == 30
    embed.embed_texts(Encoder(), items(8), cache=EmbeddingCache(tmp_path, "small", "m1"))
    assert not doc_folder(tmp_path, "small").exists()
    assert not EmbeddingCache(tmp_path, "doc", "m2").vectors
    assert not list(doc_folder(tmp_path, "doc").glob("part-*.npz"))


def test_temporary_and_damaged_files_are_not_read_back(tmp_path):
    cache = EmbeddingCache(tmp_path, "a/b c", "m")
    cache.save([cache.key("passage", "x"), cache.key("passage", "y")], np.ones((2, 3), dtype=np.float32))
    folder = doc_folder(tmp_path, "a/b c")
    assert folder.parent == tmp_path and "/" not in folder.name[:-13]
    (folder / ".part-00009-1.npz.tmp").write_bytes(b"half")
    good = next(folder.glob("part-*.npz"))
    (folder / "part-00002-1.npz").write_bytes(good.read_bytes()[:-40])      # cut short
    again = EmbeddingCache(tmp_path, "a/b c", "m")
    assert set(again.vectors) == {cache.key("passage", "x"), cache.key("passage", "y")}
    assert sorted(f.name for f in folder.iterdir()) == [good.name]
    assert remove(tmp_path, "a/b c") == 1 and not folder.exists() and remove(tmp_path, "a/b c") == 0


def test_keys_separate_model_kind_and_text():
    c = EmbeddingCache.__new__(EmbeddingCache)
    c.model = "m"
    assert len({c.key("passage", "t"), c.key("name", "t"), c.key("passage", "u")}) == 3
