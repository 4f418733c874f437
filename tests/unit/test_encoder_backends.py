"""The encoder's backends (KGQA_ENCODER_BACKEND): the real all-MiniLM-L6-v2, torch vs ONNX vs ONNX int8.

The ONNX exports go to a temporary cache dir (made once for the module, from the local model folder).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kgqa.core.errors import InvalidInput, ModelUnavailable
from kgqa.models import encoder as enc_mod

DEMO = Path(__file__).resolve().parent.parent.parent / "data" / "demo" / "wikidata5m_entity.txt"
NAMES = [ln.split("\t")[1] for ln in DEMO.read_text(encoding="utf-8").splitlines() if ln.strip()]
# names unlike the demo's: long, non-Latin, punctuation, an empty one
ODD = ["", "São Paulo–Guarulhos International Airport (GRU)", "東京都", "Łódź", "x" * 2000, "  spaced  out  "]

onnx_only = pytest.mark.skipif(not enc_mod.onnxruntime_available(), reason="onnxruntime not installed")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx-cache")


@pytest.fixture(scope="module")
def reference():
    return enc_mod.SentenceEncoder(backend="torch", threads=1).encode(NAMES + ODD)


@pytest.mark.slow
@onnx_only
@pytest.mark.parametrize("backend,bound", [("onnx", 0.9999), ("onnx-int8", 0.99)])
def test_onnx_vectors_match_torch(backend, bound, cache, reference):
    enc = enc_mod.SentenceEncoder(backend=backend, threads=1, cache_dir=cache)
    got = enc.encode(NAMES + ODD, batch_size=32, threads=2)
    assert got.shape == reference.shape and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-4)
    cos = (got * reference).sum(axis=1)
    assert cos.min() >= bound, (backend, float(cos.min()), NAMES[int(cos.argmin())] if cos.argmin() < len(NAMES)
                                else ODD[int(cos.argmin()) - len(NAMES)])
    # the order of the input is kept (the backend sorts by length internally): a name encoded alone is
    # nearest to its own row (int8 quantises activations per batch, so alone ≈ in a batch, ≥ the bound)
    one = enc.encode([NAMES[5]], threads=1)[0]
    assert int(np.argmax(got @ one)) == 5 and float(one @ got[5]) >= bound


@pytest.mark.slow
@onnx_only
def test_export_is_cached(cache):
    path = enc_mod.export_onnx(enc_mod.default_model_path(), cache, quantized=True)
    mtime = path.stat().st_mtime_ns
    assert enc_mod.export_onnx(enc_mod.default_model_path(), cache, quantized=True) == path
    assert path.stat().st_mtime_ns == mtime
    assert not list(path.parent.glob("*.tmp-*"))  # written atomically, nothing half-written left


def test_bad_backend_is_invalid_input():
    with pytest.raises(InvalidInput, match="not one of auto, torch, onnx, onnx-int8"):
        enc_mod.resolve_backend("tensorflow")


def test_auto_falls_back_to_torch_with_one_note(monkeypatch, capsys):
    monkeypatch.setattr(enc_mod, "onnxruntime_available", lambda: False)
    monkeypatch.setattr(enc_mod, "_NOTED", set())
    assert enc_mod.resolve_backend("auto") == "torch"
    assert enc_mod.resolve_backend("auto") == "torch"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "onnxruntime is not installed" in err[0] and "kgqa[onnx]" in err[0]
    with pytest.raises(ModelUnavailable, match=r"needs onnxruntime: pip install 'kgqa\[onnx\]'"):
        enc_mod.resolve_backend("onnx-int8")


def test_auto_prefers_fp32_onnx_on_cpu_and_torch_on_gpu(monkeypatch):
    monkeypatch.setattr(enc_mod, "onnxruntime_available", lambda: True)
    assert enc_mod.resolve_backend("auto", "cpu") == "onnx"  # torch's vectors, faster; int8 is opt-in
    assert enc_mod.resolve_backend("auto", "cuda") == "torch"
    with pytest.raises(InvalidInput, match="runs on the CPU only"):
        enc_mod.resolve_backend("onnx", "cuda")


def test_onnx_refuses_a_model_it_cannot_pool(tmp_path):
    (tmp_path / "modules.json").write_text('[{"idx": 0, "name": "0", "path": "", '
                                           '"type": "sentence_transformers.models.Transformer"}, '
                                           '{"idx": 1, "name": "1", "path": "1_Pooling", '
                                           '"type": "sentence_transformers.models.Pooling"}]')
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true, '
                                                        '"pooling_mode_mean_tokens": false}')
    with pytest.raises(ModelUnavailable, match="mean pooling models only.*KGQA_ENCODER_BACKEND=torch"):
        enc_mod._check_mean_pooling(tmp_path)


def test_passages_stay_the_fp32_vectors_in_order_with_one_or_two_workers(reference, monkeypatch):
    """Document chunks (encode_passages): bf16 where the CPU has native bf16, cosine >= 0.9999 to fp32,
    each text's vector in its place whatever the workers; fp32 (and the same as encode) when asked."""
    texts = NAMES + ODD
    enc = enc_mod.SentenceEncoder(backend="torch", threads=1)
    one, two = enc.encode_passages(texts, threads=1), enc.encode_passages(texts, threads=2)
    assert one.shape == reference.shape and one.dtype == np.float32
    assert float(np.min(np.sum(one * reference, axis=1))) >= 0.9999
    assert float(np.min(np.sum(two * one, axis=1))) >= 0.9999
    assert np.allclose(np.linalg.norm(one, axis=1), 1.0, atol=1e-5)
    fp32 = enc_mod.SentenceEncoder(backend="torch", threads=1, passages="fp32")
    assert not fp32.passages_bf16
    assert np.allclose(fp32.encode_passages(texts), reference, atol=1e-5)
    monkeypatch.setattr(enc_mod, "native_bf16", lambda: False)           # a CPU without bf16: encode
    assert not enc.passages_bf16
    with pytest.raises(InvalidInput, match="KGQA_ENCODER_PASSAGES"):
        enc_mod.SentenceEncoder(backend="torch", passages="int4")
