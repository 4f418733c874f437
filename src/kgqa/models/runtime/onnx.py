"""The one ONNX exporter and its cache: a torch module (a head of the span reader, the passage ranker, the chain
reader, or the sentence encoder's transformer) exported once to ONNX (``torch.onnx``, fp32) and run by
onnxruntime. An export is cached in a folder named by what it depends on (the checkpoint's bytes, the base
model's files, the recipe), written atomically; later processes load it without torch.
"""

from __future__ import annotations

import hashlib
import os
import sys
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

#: bump when the export recipe changes (a new cache folder)
EXPORT_VERSION = 1
_LOCK = threading.Lock()


def session(path: str | Path, threads: int):
    """An onnxruntime CPU session: ``threads`` intra-op threads that wait without spinning (with Neo4j or
    anything busy on the same cores, spinning threads take the cores the work needs; bench/embed.py)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = max(1, threads)
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _with_folder(h, folder: str | Path):
    """``h`` updated with a model folder's files: names, sizes and mtimes (cheap; changes with the weights)."""
    for p in sorted(Path(folder).rglob("*")):
        if p.is_file():
            st = p.stat()
            h.update(f"{p.relative_to(folder)}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h


def folder_fingerprint(folder: str | Path) -> str:
    """A short key of a model folder's files and the export recipe: the sentence encoder's export folder, and
    what its vectors are made by (``SentenceEncoder.identity``)."""
    return _with_folder(hashlib.sha256(f"v{EXPORT_VERSION}".encode()), folder).hexdigest()[:16]


def export_key(checkpoint: Path, base: str) -> str:
    """What a head's export depends on: the checkpoint's bytes, the base model's files, the recipe."""
    h = hashlib.sha256(f"v{EXPORT_VERSION}".encode())
    h.update(checkpoint.read_bytes())
    return _with_folder(h, base).hexdigest()[:16]


def cached_export(cache_dir: str | Path | None, kind: str, key: str) -> Path:
    """Where the export of ``kind`` (``span-reader``, ``passage-ranker``, ``chain-reader``) with ``key`` lives:
    under ``cache_dir`` (the data dir's ``models/onnx``), else the per-user cache's ``onnx`` folder."""
    if cache_dir is None:
        from kgqa.models.gguf import user_cache_dir

        cache_dir = user_cache_dir() / "onnx"
    return Path(cache_dir) / f"{kind}-{key}" / "model.onnx"


def export(model_of: Callable[[], object], forward: Callable, outputs: Sequence[str], target: Path,
           note: bool = True) -> Path:
    """Export ``forward(model, input_ids, token_type_ids, attention_mask)`` → ``outputs`` of the torch module
    ``model_of()`` (in fp32, eval mode) to ``target`` unless it is there; a temporary file first, then renamed.
    ``note``: say so on stderr (a head's first export at ask time takes seconds)."""
    with _LOCK:
        if target.exists():
            return target
        import warnings

        import torch

        class _Forward(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, token_type_ids, attention_mask):
                return forward(self.m, input_ids, token_type_ids, attention_mask)

        target.parent.mkdir(parents=True, exist_ok=True)
        if note:
            print(f"kgqa: exporting {target.parent.name.rsplit('-', 1)[0]} to ONNX once ({target.parent}); "
                  "later runs read the export", file=sys.stderr, flush=True)
        module = _Forward(model_of().float()).eval()
        ex = (torch.tensor([[101, 2054, 102, 1037, 2773, 102]]), torch.tensor([[0, 0, 0, 1, 1, 1]]),
              torch.ones(1, 6, dtype=torch.long))
        names = ["input_ids", "token_type_ids", "attention_mask"]
        axes = {k: {0: "batch", 1: "tokens"} for k in names}
        axes.update({k: {0: "batch"} if k == "logit" else {0: "batch", 1: "tokens"} for k in outputs})
        tmp = target.with_name(target.name + f".tmp-{os.getpid()}")
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, ex, str(tmp), input_names=names, output_names=list(outputs),
                              dynamic_axes=axes, opset_version=17, dynamo=False)
        os.replace(tmp, target)
        return target


class OnnxHead:
    """An exported head: ``run(input_ids, token_type_ids, attention_mask)`` → its outputs as numpy arrays."""

    def __init__(self, path: Path, threads: int):
        self.path = path
        self.sess = session(path, threads)

    def run(self, input_ids: np.ndarray, token_type_ids: np.ndarray, attention_mask: np.ndarray) -> list:
        return self.sess.run(None, {"input_ids": input_ids.astype(np.int64),
                                    "token_type_ids": token_type_ids.astype(np.int64),
                                    "attention_mask": attention_mask.astype(np.int64)})


def hidden_states(model, input_ids, token_type_ids, attention_mask):
    """What an export of a bare transformer (the sentence encoder, the bi-encoder chain reader) outputs: its last
    hidden states (mean pooling is done in numpy)."""
    return model(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask).last_hidden_state
