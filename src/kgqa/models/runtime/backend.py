"""Which runtime a learned head runs on, and whether torch runs it in bf16.

Runtimes (``KGQA_READER_BACKEND``):

- ``torch``: the checkpoint on torch, in bf16 autocast on a CPU that multiplies bf16 natively;
- ``onnx``: the same network exported once to ONNX (``runtime.onnx``, fp32) and run by onnxruntime: torch fp32's
  logits (max difference ~1e-5); later processes load the export without torch;
- ``auto``: ``onnx`` on a CPU when onnxruntime is installed, else ``torch``.

``native_bf16`` is the one probe of the CPU's bf16 support: the sentence encoder's passages and the heads' torch
runtime both ask it.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from pathlib import Path

BACKENDS = ("auto", "torch", "onnx")


def onnxruntime_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


@functools.lru_cache(maxsize=1)
def native_bf16() -> bool:
    """Whether this CPU multiplies bf16 natively (AMX or AVX512-BF16; Linux's cpu flags), read once per
    process (the encoder asks on every ``encode_passages`` call)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return False
    return any(f" {f}" in flags for f in ("amx_bf16", "avx512_bf16"))


def use_bf16(bf16: bool | None = None) -> bool:
    """Whether torch runs a head in bf16 autocast: ``bf16`` when given, else where the CPU multiplies bf16
    natively (``native_bf16``)."""
    return native_bf16() if bf16 is None else bool(bf16)


@contextmanager
def inference(onnx: bool, bf16: bool | None):
    """Around a whole read of a head: nothing for an ONNX export (fp32); for torch, inference mode and bf16
    autocast where the CPU multiplies bf16 natively (``bf16`` overrides), one region, so the weights are cast
    once."""
    if onnx:
        yield
        return
    import torch

    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16(bf16)):
        yield


def resolve_reader_backend(backend: str | None, device: str = "cpu") -> str:
    """The concrete runtime of a setting: ``auto`` is ``onnx`` on a CPU when onnxruntime is importable."""
    from kgqa.core.errors import InvalidInput

    backend = backend or "auto"
    if backend not in BACKENDS:
        raise InvalidInput(f"KGQA_READER_BACKEND {backend!r}: not one of {', '.join(BACKENDS)}")
    if backend == "auto":
        return "onnx" if device == "cpu" and onnxruntime_available() else "torch"
    return backend


def runtime_of(settings) -> dict:
    """The heads' loaders' runtime arguments for the settings: backend (``KGQA_READER_BACKEND``), the export
    cache under the data dir, the query threads."""
    models_dir = getattr(settings, "models_dir", None)
    return {"backend": resolve_reader_backend(getattr(settings, "reader_backend", "auto"),
                                              getattr(settings, "device", "cpu") or "cpu"),
            "cache_dir": Path(models_dir) / "onnx" if models_dir else None,
            "threads": int(getattr(settings, "torch_threads", 1) or 1)}
