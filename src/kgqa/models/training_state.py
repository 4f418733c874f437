"""A trained module and its optimizer in one safetensors file: the format both trainers write.

``kgqa train grasp`` (``kgqa.gnn.checkpoint``) and ``kgqa train paths``
(``kgqa.models.heads.path_retriever``) save their weights as ``model.<name>`` tensors, the optimizer's
per-parameter state as ``optim.<i>.<key>`` tensors (so ``--resume`` continues exactly) and
their own JSON metadata under one key; the param groups of the optimizer go into that metadata.
Files are written to ``<name>.tmp`` and renamed, so a killed run never leaves half a checkpoint.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def write(path: Path, module, info: dict, meta_key: str, *, optimizer=None, rng: bool = False) -> Path:
    """``module`` (and ``optimizer``'s state; torch's RNG state when ``rng``) to ``path`` atomically.

    ``info`` is stored as JSON under ``meta_key``, with ``param_groups`` added."""
    import torch
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {f"model.{k}": v.detach().cpu().contiguous() for k, v in module.state_dict().items()}
    groups = None
    if optimizer is not None:
        sd = optimizer.state_dict()
        for i, st in sd["state"].items():
            for key, val in st.items():
                t = val if torch.is_tensor(val) else torch.tensor(val)
                tensors[f"optim.{i}.{key}"] = t.detach().cpu().contiguous()
        groups = sd["param_groups"]
    if rng:
        tensors["rng.torch"] = torch.get_rng_state()
    tmp = path.with_name(path.name + ".tmp")
    save_file(tensors, str(tmp), metadata={meta_key: json.dumps({**info, "param_groups": groups})})
    os.replace(tmp, path)
    return path


def model_state(tensors: dict) -> dict:
    """The module's state dict from a checkpoint's tensors."""
    return {k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")}


def optimizer_state(tensors: dict, info: dict) -> dict | None:
    """The optimizer's state dict from a checkpoint's tensors and metadata (None when none was saved)."""
    if not info.get("param_groups"):
        return None
    st: dict[int, dict] = {}
    for k, v in tensors.items():
        if k.startswith("optim."):
            _, i, key = k.split(".", 2)
            st.setdefault(int(i), {})[key] = v
    return {"state": st, "param_groups": info["param_groups"]}
