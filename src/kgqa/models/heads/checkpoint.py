"""The checkpoint code of the fine-tuned BERT heads (the span reader, the passage ranker): build, save, load on
torch or on onnxruntime, and the process cache of loaded heads.

The word-piece embeddings stay frozen at the package's values (they are not stored: 11.7 M of the model's
22.7 M parameters); everything else (position and segment embeddings, the six layers, the head) is stored as
fp16 safetensors, with JSON metadata in the header (and a ``.json`` beside it) recording what it was trained on
and a fingerprint of the frozen embeddings, so that a checkpoint meant for another base model is refused with
one line instead of reading garbage.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Callable, Sequence

FROZEN = "bert.embeddings.word_embeddings.weight"


class BertHead:
    """A loaded head: ``model`` is the torch network (in eval mode) or its ONNX export (``runtime.onnx.OnnxHead``:
    the ``onnx`` runtime), ``tok`` its word pieces, ``meta`` the checkpoint's metadata; one read at a time."""

    def __init__(self, model, tok, meta: dict, path: Path | None = None):
        from kgqa.models.runtime.onnx import OnnxHead

        self.onnx = isinstance(model, OnnxHead)
        self.model = model if self.onnx else model.eval()
        self.tok = tok
        self.meta = meta
        self.path = path
        self._lock = threading.Lock()

    @property
    def runtime(self) -> str:
        return "onnx" if self.onnx else "torch"


def base_model_path() -> str:
    """The all-MiniLM-L6-v2 files of the installed package (no download)."""
    from kgqa.models.encoder import default_model_path

    return default_model_path()


def embeddings_fingerprint(word_embeddings) -> str:
    """A short hash of the frozen word-piece embeddings (the base model the checkpoint was trained on)."""
    import torch

    w = word_embeddings.detach().to(torch.float32).contiguous()
    h = hashlib.sha256()
    h.update(str(tuple(w.shape)).encode())
    h.update(w[:: max(1, w.shape[0] // 512)].numpy().tobytes())
    return h.hexdigest()[:16]


def build_bert(model_class: str, base: str, **kwargs):
    """(model, word pieces): ``transformers``' ``model_class`` (a fresh head on the base BERT) with the
    word-piece embeddings frozen; the library's "newly initialised" warning and progress bar kept quiet."""
    import transformers

    from kgqa.models.runtime.tokens import wordpieces

    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()          # "... newly initialised" is expected: a fresh head
    transformers.logging.disable_progress_bar()         # a "Loading weights" bar would garble kgqa ask's lines
    try:
        model = getattr(transformers, model_class).from_pretrained(base, **kwargs)
    finally:
        transformers.logging.set_verbosity(level)
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    return model, wordpieces(base)


def set_dropout(model, attention: float | None = None, hidden: float | None = None) -> None:
    """Dropout on the attention probabilities (``attention``) and on every other dropout site (``hidden``);
    None leaves a rate as it is. On a CPU, drawing the attention-dropout mask (batch × heads × n × n random
    numbers per layer) is a quarter of a training step, and without it the attention runs as one fused kernel."""
    import torch

    for name, m in model.named_modules():
        if isinstance(m, torch.nn.Dropout):
            rate = attention if name.endswith("attention.self.dropout") else hidden
            if rate is not None:
                m.p = float(rate)
    if attention is not None:
        model.config.attention_probs_dropout_prob = float(attention)
    if hidden is not None:
        model.config.hidden_dropout_prob = float(hidden)


def save_bert_checkpoint(model, meta: dict, path: str | Path, fmt: str, version: int) -> int:
    """A fine-tuned all-MiniLM-L6-v2 (``model.bert`` and a head) as fp16 safetensors of every parameter but the
    frozen word-piece embeddings, with ``meta`` (plus format, version, the embeddings' fingerprint) in its header
    and in a ``.json`` beside it; written to a temporary file first. Returns the file's size."""
    import torch
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items()
             if k != FROZEN and not k.endswith("position_ids")}
    meta = {**meta, "format": fmt, "version": version,
            "base_fingerprint": embeddings_fingerprint(model.bert.embeddings.word_embeddings.weight),
            "parameters_stored": int(sum(v.numel() for v in state.values()))}
    tmp = path.with_suffix(".tmp")
    save_file(state, str(tmp), metadata={"kgqa": json.dumps(meta, ensure_ascii=False)})
    tmp.replace(path)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return path.stat().st_size


def _check_format(path: Path, meta: dict, fmt: str, version: int, error: type[Exception]) -> None:
    if meta.get("format") != fmt or int(meta.get("version", -1)) != version:
        raise error(f"{path} is not a {fmt} v{version} checkpoint "
                    f"(format {meta.get('format')!r}, version {meta.get('version')!r})")


def load_bert_checkpoint(path: Path, fmt: str, version: int, build: Callable, error: type[Exception], kind: str,
                         command: str):
    """(model, tokenizer, meta) of a checkpoint written by ``save_bert_checkpoint``: ``build(base)`` makes the
    model, the stored tensors replace its own. ``error`` (one line) when the file is missing (``command`` writes
    one), unreadable, of another format or version, made for another base model, or of other shapes."""
    if not path.is_file():
        raise error(f"no {kind} checkpoint at {path} ({command} writes one)")
    try:
        import torch
        from safetensors import safe_open
    except ImportError as e:                                   # pragma: no cover - torch is a dependency
        raise error(f"the {kind.replace('-', ' ')} needs torch and safetensors ({e})") from e
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads((f.metadata() or {}).get("kgqa", "{}"))
            state = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as e:
        raise error(f"{path} is not a readable safetensors file ({type(e).__name__})") from e
    _check_format(path, meta, fmt, version, error)
    try:
        model, tok = build(base_model_path())
    except Exception as e:
        raise error(f"the base model of the {kind.replace('-', ' ')} cannot be loaded: {e}") from e
    fp = embeddings_fingerprint(model.bert.embeddings.word_embeddings.weight)
    if fp != meta.get("base_fingerprint"):
        raise error(f"{path} was trained on another base model (embeddings {meta.get('base_fingerprint')}"
                    f", installed {fp})")
    own = model.state_dict()
    wrong = [k for k, v in state.items() if k not in own or tuple(own[k].shape) != tuple(v.shape)]
    missing = [k for k in own if k not in state and k != FROZEN and not k.endswith("position_ids")]
    if wrong or missing:
        raise error(f"{path} does not fit the base model ({len(wrong)} tensors of another "
                    f"shape or name, {len(missing)} missing)")
    model.load_state_dict({k: v.to(torch.float32) for k, v in state.items()}, strict=False)
    return model, tok, meta


def load_onnx_head(path: Path, fmt: str, version: int, build: Callable, forward: Callable, outputs: Sequence[str],
                   error: type[Exception], kind: str, command: str, cache_dir: str | Path | None, threads: int,
                   base: str | None = None):
    """(OnnxHead, word pieces, meta) of a ``save_bert_checkpoint`` checkpoint on onnxruntime
    (``kgqa.models.runtime.onnx``). The export is made once, by torch, after every check of
    ``load_bert_checkpoint``; ``forward(model, input_ids, token_type_ids, attention_mask)`` is what it exports.
    A later process finds it by the checkpoint's bytes and the base model's files and reads only the
    checkpoint's header: no torch."""
    from kgqa.models.runtime.onnx import OnnxHead, cached_export, export, export_key
    from kgqa.models.runtime.tokens import wordpieces

    base = base or base_model_path()
    if not path.is_file():
        raise error(f"no {kind} checkpoint at {path} ({command} writes one)")
    try:
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as f:
            meta = json.loads((f.metadata() or {}).get("kgqa", "{}"))
        target = cached_export(cache_dir, kind, export_key(path, base))
    except Exception as e:
        raise error(f"{path} is not a readable safetensors file ({type(e).__name__})") from e
    _check_format(path, meta, fmt, version, error)
    if not target.exists():
        model, _, meta = load_bert_checkpoint(path, fmt, version, build, error, kind, command)
        try:
            export(lambda: model, forward, outputs, target)
        except Exception as e:  # noqa: BLE001 - an export failure is one line; KGQA_READER_BACKEND=torch avoids it
            raise error(f"cannot export the {kind.replace('-', ' ')} to ONNX: {type(e).__name__}: {e} "
                        "(KGQA_READER_BACKEND=torch avoids it)") from e
    try:
        return OnnxHead(target, threads), wordpieces(base), meta
    except Exception as e:  # noqa: BLE001 - a damaged cached export: one line naming it
        raise error(f"cannot load the {kind.replace('-', ' ')}'s ONNX export {target}: {type(e).__name__} "
                    "(delete it to export again, or set KGQA_READER_BACKEND=torch)") from e


def load_bert_head(path: Path, fmt: str, version: int, build: Callable, forward: Callable, outputs: Sequence[str],
                   error: type[Exception], kind: str, command: str, backend: str, cache_dir: str | Path | None,
                   threads: int, base: str | None = None):
    """(model, word pieces, meta) of a checkpoint on ``backend``: its ONNX export (``load_onnx_head``) or the
    torch model (``load_bert_checkpoint``)."""
    if backend == "onnx":
        return load_onnx_head(path, fmt, version, build, forward, outputs, error, kind, command, cache_dir, threads,
                              base)
    return load_bert_checkpoint(path, fmt, version, build, error, kind, command)


_LOADED: dict[tuple, object] = {}
_LOAD_LOCK = threading.Lock()


def load_once(kind: str, path: Path, backend: str, cache_dir, load: Callable[[], object]):
    """The head of ``kind`` for a checkpoint path and runtime, loaded by ``load()`` once per process (under a
    lock: concurrent ``kgqa serve`` requests share it)."""
    key = (kind, str(path.resolve()) if path.exists() else str(path), backend,
           str(cache_dir) if backend == "onnx" else "")
    with _LOAD_LOCK:
        if key not in _LOADED:
            _LOADED[key] = load()
        return _LOADED[key]
