"""How the fine-tuned BERT models (the span reader, the passage ranker, the bi-encoder chain reader) tokenise
and run at ask time.

Tokenisation is Hugging Face ``tokenizers`` over the base model's ``tokenizer.json`` (the same word pieces
and character offsets as ``transformers``' fast tokenizer, which wraps it; a unit test compares them), so
reading needs neither ``transformers`` nor torch: importing those two is most of a cold ``kgqa ask``.

Runtimes (``KGQA_READER_BACKEND``):

- ``torch``: the checkpoint on torch, in bf16 autocast on a CPU that multiplies bf16 natively;
- ``onnx``: the same network exported once to ONNX (``torch.onnx``, fp32) and run by onnxruntime: torch fp32's
  logits (max difference ~1e-5). The export is cached under ``<data dir>/models/onnx/`` in a folder named by
  the checkpoint's bytes and the base model's files, written atomically; later processes load it without
  torch.
- ``auto``: ``onnx`` on a CPU when onnxruntime is installed, else ``torch``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

BACKENDS = ("auto", "torch", "onnx")
#: bump when the export recipe changes (a new cache folder)
EXPORT_VERSION = 1
_LOCK = threading.Lock()


def onnxruntime_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_backend(backend: str | None, device: str = "cpu") -> str:
    """The concrete runtime of a setting: ``auto`` is ``onnx`` on a CPU when onnxruntime is importable."""
    from kgqa.core.errors import InvalidInput

    backend = backend or "auto"
    if backend not in BACKENDS:
        raise InvalidInput(f"KGQA_READER_BACKEND {backend!r}: not one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "onnx" if device == "cpu" and onnxruntime_available() else "torch"
    return backend


def runtime_of(settings) -> dict:
    """``load_reader`` / ``load_ranker``'s runtime arguments for the settings: backend
    (``KGQA_READER_BACKEND``), the export cache under the data dir, the query threads."""
    models_dir = getattr(settings, "models_dir", None)
    return {"backend": resolve_backend(getattr(settings, "reader_backend", "auto"),
                                       getattr(settings, "device", "cpu") or "cpu"),
            "cache_dir": Path(models_dir) / "onnx" if models_dir else None,
            "threads": int(getattr(settings, "torch_threads", 1) or 1)}


# ------------------------------------------------------------------------------------------------ word pieces
@functools.lru_cache(maxsize=8)
def _tokenizer_json(base: str) -> str:
    return (Path(base) / "tokenizer.json").read_text(encoding="utf-8")


def wordpieces(base: str):
    """A ``tokenizers.Tokenizer`` of the base model without truncation or padding (its tokenizer.json may
    carry a sentence-transformers length): a new object per caller, since those settings live on it."""
    from tokenizers import Tokenizer

    tk = Tokenizer.from_str(_tokenizer_json(base))
    tk.no_truncation()
    tk.no_padding()
    return tk


def encode_texts(tk, texts: Sequence[str]) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
    """(word-piece ids, character offsets) of each text, no special tokens."""
    encs = tk.encode_batch(list(texts), add_special_tokens=False)
    return [e.ids for e in encs], [e.offsets for e in encs]


def special_ids(tk) -> tuple[int, int]:
    """([CLS], [SEP]) ids."""
    return tk.token_to_id("[CLS]"), tk.token_to_id("[SEP]")


def pair_batch(tk, questions: Sequence[str], passages: Sequence[str], max_length: int) -> dict[str, np.ndarray]:
    """``[CLS] question [SEP] passage [SEP]`` rows, the passage cut to fit ``max_length``, padded to the
    longest row: input_ids, token_type_ids, attention_mask (int64)."""
    cls, sep = special_ids(tk)
    qs, _ = encode_texts(tk, questions)
    ps, _ = encode_texts(tk, passages)
    rows, types = [], []
    for q, p in zip(qs, ps):
        room = max(0, max_length - len(q) - 3)
        rows.append([cls] + q + [sep] + p[:room] + [sep])
        types.append([0] * (len(q) + 2) + [1] * (min(len(p), room) + 1))
    n = max((len(r) for r in rows), default=0)
    ids = np.zeros((len(rows), n), dtype=np.int64)
    tt = np.zeros((len(rows), n), dtype=np.int64)
    mask = np.zeros((len(rows), n), dtype=np.int64)
    for r, (row, ty) in enumerate(zip(rows, types)):
        ids[r, :len(row)] = row
        tt[r, :len(row)] = ty
        mask[r, :len(row)] = 1
    return {"input_ids": ids, "token_type_ids": tt, "attention_mask": mask}


# ----------------------------------------------------------------------------------------------------- ONNX
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


def export_key(checkpoint: Path, base: str) -> str:
    """What the export depends on: the checkpoint's bytes, the base model's files, the recipe."""
    h = hashlib.sha256(f"v{EXPORT_VERSION}".encode())
    h.update(checkpoint.read_bytes())
    for p in sorted(Path(base).rglob("*")):               # the base model's files: names, sizes, mtimes
        if p.is_file():
            st = p.stat()
            h.update(f"{p.relative_to(base)}:{st.st_size}:{int(st.st_mtime)}".encode())
    return h.hexdigest()[:16]


def cached_export(cache_dir: str | Path | None, kind: str, key: str) -> Path:
    """Where the export of ``kind`` (``span-reader``, ``passage-ranker``, ``chain-reader``) with ``key`` lives:
    under ``cache_dir`` (the data dir's ``models/onnx``), else the per-user cache's ``onnx`` folder."""
    if cache_dir is None:
        from kgqa.models.gguf import user_cache_dir

        cache_dir = user_cache_dir() / "onnx"
    return Path(cache_dir) / f"{kind}-{key}" / "model.onnx"


def export(model_of: Callable[[], object], forward: Callable, outputs: Sequence[str], target: Path) -> Path:
    """Export ``forward(model, input_ids, token_type_ids, attention_mask)`` → ``outputs`` of the torch module
    ``model_of()`` (in fp32, eval mode) to ``target`` unless it is there; a temporary file first, then renamed."""
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
        print(f"kgqa: exporting {target.parent.name.rsplit('-', 1)[0]} to ONNX once ({target.parent}); later runs "
              "read the export", file=sys.stderr, flush=True)
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
