"""Checkpoints of GraSP's trainable parts (GNN + projector) in safetensors.

One file holds the encoder's weights and, for ``--resume``, the AdamW state and the
training position; the header's string metadata carries the rest as JSON:

    grasp-gat.safetensors
      tensors   "model.<name>"              the encoder's state_dict
                "optim.<i>.<key>"           AdamW state per parameter index (step, exp_avg, exp_avg_sq)
                "rng.torch"                 torch's CPU RNG state (uint8)
      metadata  "kgqa.grasp"                {"variant", "config", "epoch", "step", "losses", ...} as JSON

Writes go to a temporary file that is renamed over the old one, so a checkpoint is never
half-written. Loading checks the variant and the shapes and fails with one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgqa.core.errors import InvalidInput
from kgqa.models import training_state

META_KEY = "kgqa.grasp"
FORMAT = 1


def build_encoder(variant: str, config: dict):
    """The encoder module of a variant ("gat", "text" or "nodes": the node-scoring head) from its stored constructor arguments."""
    from kgqa.gnn.encoder import GraphNodeScorer, GraphSoftPromptEncoder, TextSoftPromptEncoder

    if variant == "nodes":
        c = dict(config)
        return GraphNodeScorer(c.pop("in_channels"), c.pop("edge_channels"), c.pop("llm_hidden"), **c)
    if variant == "gat":
        c = dict(config)
        return GraphSoftPromptEncoder(c.pop("in_channels"), c.pop("edge_channels"), c.pop("llm_hidden"), **c)
    if variant == "text":
        c = dict(config)
        return TextSoftPromptEncoder(c.pop("in_channels"), c.pop("llm_hidden"), **c)
    raise InvalidInput(f"GraSP encoder variant {variant!r} is unknown (gat, text or nodes)")


def save(path: Path, encoder, *, variant: str, meta: dict[str, Any] | None = None, optimizer=None) -> Path:
    """Write ``encoder`` (and the optimizer, when given) to ``path`` atomically."""
    info = {"format": FORMAT, "variant": variant, "config": encoder.config(), **(meta or {})}
    return training_state.write(path, encoder, info, META_KEY, optimizer=optimizer, rng=True)


def read_meta(path: Path) -> dict:
    """The JSON metadata of a checkpoint (no tensors loaded)."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise InvalidInput(f"{path}: no GraSP checkpoint there (train one with `kgqa train grasp`)")
    try:
        with safe_open(str(path), framework="pt") as f:
            raw = (f.metadata() or {}).get(META_KEY)
    except Exception as e:  # safetensors raises its own error types for a corrupt header
        raise InvalidInput(f"{path}: not a safetensors file ({type(e).__name__}: {e})") from e
    if not raw:
        raise InvalidInput(f"{path}: safetensors file without kgqa GraSP metadata")
    info = json.loads(raw)
    if info.get("format") != FORMAT:
        raise InvalidInput(f"{path}: checkpoint format {info.get('format')!r}, expected {FORMAT}")
    return info


def load(path: Path, *, variant: str | None = None, optimizer_for=None):
    """(encoder, meta[, optimizer state dict]) from ``path``.

    ``variant``: the expected variant (one clear line when the file holds another).
    ``optimizer_for``: an optimizer over the returned encoder's parameters is built by the
    caller; pass a callable ``params -> optimizer`` to get it back with the saved state.
    """
    import torch
    from safetensors.torch import load_file

    info = read_meta(path)
    if variant is not None and info["variant"] != variant:
        raise InvalidInput(f"{path}: holds a {info['variant']!r} encoder, expected {variant!r}")
    tensors = load_file(str(path))
    encoder = build_encoder(info["variant"], info["config"])
    try:
        encoder.load_state_dict(training_state.model_state(tensors), strict=True)
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InvalidInput(f"{path}: weights do not fit the stored config ({first})") from e
    if "rng.torch" in tensors:
        torch.set_rng_state(tensors["rng.torch"])
    if optimizer_for is None:
        return encoder, info
    opt = optimizer_for(encoder.parameters())
    state = training_state.optimizer_state(tensors, info)
    if state is not None:
        opt.load_state_dict(state)
    return encoder, info, opt


__all__ = ["save", "load", "read_meta", "build_encoder", "META_KEY"]
