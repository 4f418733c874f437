"""KGQA_ENCODER_BACKEND=model2vec: static name vectors distilled from the shipped all-MiniLM-L6-v2.

The distilled model is looked up where ``kgqa encoder distil`` writes it and never made at ask time: without
it the encoder names the command. A static model over the real MiniLM tokenizer (seeded token vectors, so the
test needs no 3-minute distillation) stands in for the distilled one; the real distillation is the slow test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgqa.core.errors import InvalidInput, ModelUnavailable
from kgqa.models import encoder as enc_mod
from kgqa.models.static_encoder import INDEX_DIMS, distil, distilled_path

model2vec = pytest.importorskip("model2vec")


def _encoder(models_dir: Path) -> enc_mod.SentenceEncoder:
    return enc_mod.SentenceEncoder(backend="model2vec", threads=1, cache_dir=models_dir / "onnx")


def _stand_in(models_dir: Path) -> Path:
    """A static model where `kgqa encoder distil` would put the distilled one: MiniLM's tokenizer, seeded vectors."""
    from tokenizers import Tokenizer

    model_path = Path(enc_mod.default_model_path())
    tok = Tokenizer.from_file(str(model_path / "tokenizer.json"))
    vectors = np.random.default_rng(0).standard_normal((tok.get_vocab_size(), INDEX_DIMS)).astype(np.float32)
    target = distilled_path(model_path, models_dir)
    model2vec.StaticModel(vectors, tok).save_pretrained(str(target))
    return target


def test_without_a_distilled_model_the_encoder_names_the_command(tmp_path):
    with pytest.raises(ModelUnavailable, match="kgqa encoder distil"):
        _encoder(tmp_path).encode(["Marie Curie"])
    assert not (tmp_path / "model2vec").exists()         # nothing distilled behind the user's back


def test_the_distilled_model_encodes_names_and_passages_into_the_index_dimensions(tmp_path):
    _stand_in(tmp_path)
    enc = _encoder(tmp_path)
    names = ["Marie Curie", "Pierre Curie", "Marie Curie", "東京都", ""]
    vecs = enc.encode(names)
    assert vecs.shape == (5, INDEX_DIMS) and vecs.dtype == np.float32 and enc.dim == INDEX_DIMS
    assert np.allclose(np.linalg.norm(vecs[:4], axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vecs[0], vecs[2]) and not np.allclose(vecs[0], vecs[1])
    assert not enc.passages_bf16                           # chunks go through the same static vectors
    assert np.allclose(enc.encode_passages(["Marie Curie"]), vecs[:1], atol=1e-6)
    assert "model2vec" in enc.identity


def test_distil_is_cached_and_checks_its_dimensions(tmp_path):
    target = _stand_in(tmp_path)
    assert distil(enc_mod.default_model_path(), tmp_path) == target       # already there: returned, not redone
    with pytest.raises(InvalidInput, match="--dims 500"):
        distil(enc_mod.default_model_path(), tmp_path, dims=500)


def test_model2vec_runs_on_the_cpu_only():
    assert enc_mod.resolve_backend("model2vec") == "model2vec"
    with pytest.raises(InvalidInput, match="CPU only"):
        enc_mod.resolve_backend("model2vec", device="cuda")


@pytest.mark.slow
def test_the_real_distillation_keeps_names_apart_like_minilm(tmp_path):
    """Distilled offline from the shipped folder (HF_HUB_OFFLINE), 128 dimensions (the quickest PCA)."""
    path = distil(enc_mod.default_model_path(), tmp_path, dims=128)
    assert (path / "model.safetensors").exists()
    from kgqa.models.static_encoder import StaticEncoder

    v = StaticEncoder(path).encode(["Eiffel Tower", "Eiffel tower in Paris", "Amazon River"])
    assert v.shape == (3, 128) and v[0] @ v[1] > v[0] @ v[2]
