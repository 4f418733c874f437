"""A learned relation-path retriever: question ↔ relation-chain bi-encoder over frozen all-MiniLM-L6-v2.

Weak supervision as in "Subgraph Retrieval Enhanced Model for Multi-hop Knowledge Base Question
Answering" (Zhang et al., ACL 2022): the relation chains that lead from a question's topic entity to its
answer, found by bounded search in the graph (``kgqa.training.path_supervision``), are the positives; the
other chains of the same neighbourhood are the negatives. A chain is the text of its relation labels,
``"r1 → r2"``; the question is its own text. The paper fine-tunes the whole encoder; here both sides are
the frozen all-MiniLM-L6-v2 sentence vectors (the KG's own encoder, so they come from the same cache as
every other score) passed through a small trained head: a residual linear map per side (initialised to
zero, so an untrained head is plain SBERT cosine) and a learned temperature. Why a head and not a full
fine-tune: it trains in seconds on 2 CPU cores, the checkpoint is ~1 MB instead of ~90 MB, and the
encoder every other step relies on stays the one the KG was embedded with.

Two objectives per example, summed (SR scores a path relation by relation, so a prefix must rank too):
* whole chain: among every chain of the neighbourhood (all lengths up to the search depth), the gold
  chains against the rest (so a gold chain outranks its own prefix: depth comes from the score);
* per hop t below the gold length: among the chains of length t, the gold prefixes against the rest.
The loss is −log Σ_pos softmax (several gold chains may reach the answer). ``prior`` > 0 adds
prior · (‖A‖² + ‖B‖²) per batch (A, B: the two maps), pulling the head toward zero, i.e. toward the untrained
encoder's cosine: the head then moves away from all-MiniLM-L6-v2 only as far as the examples ask (a KG with
few relations otherwise lets it memorise them and lose what the encoder knows of others).

Training is ``kgqa.training.path_retriever``. Checkpoints are safetensors files with JSON metadata (format,
encoder, dims, epochs done, seed, losses) and
the AdamW state, so training resumes where it stopped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.models import training_state

FORMAT = "kgqa-path-retriever/1"
META_KEY = "kgqa"
ARROW = " → "


def chain_text(relation_names: Sequence[str]) -> str:
    """The text a relation chain is encoded as: its relation labels joined by arrows."""
    return ARROW.join(relation_names)


def _head(dim: int):
    import torch

    class PathHead(torch.nn.Module):
        """q' = q + A·q, c' = c + B·c (A, B start at zero), score = τ·cos(q', c')."""

        def __init__(self):
            super().__init__()
            self.q = torch.nn.Linear(dim, dim, bias=False)
            self.c = torch.nn.Linear(dim, dim, bias=False)
            torch.nn.init.zeros_(self.q.weight)
            torch.nn.init.zeros_(self.c.weight)
            self.log_scale = torch.nn.Parameter(torch.tensor(float(np.log(20.0))))

        def question(self, x):
            return torch.nn.functional.normalize(x + self.q(x), dim=-1)

        def chain(self, y):
            return torch.nn.functional.normalize(y + self.c(y), dim=-1)

    return PathHead()


class PathRetriever:
    """A trained head over frozen sentence vectors; ``score(question, chains)`` is what methods call."""

    def __init__(self, head, meta: dict, embed: Callable[[Sequence[str]], np.ndarray]):
        self.head = head.eval()
        self.meta = meta
        self.embed = embed

    def score(self, question: str, chains: Sequence[Sequence[str]]) -> np.ndarray:
        """The cosine of the question and each relation chain (names, outermost first) under the head."""
        import torch

        if not chains:
            return np.zeros(0, dtype=np.float32)
        texts = [chain_text(c) for c in chains]
        vecs = self.embed([question] + texts)
        with torch.no_grad():
            t = torch.from_numpy(np.asarray(vecs, dtype=np.float32))
            q = self.head.question(t[:1])
            c = self.head.chain(t[1:])
            return (c @ q[0]).numpy()


def new_head(dim: int, seed: int):
    import torch

    torch.manual_seed(seed)
    return _head(dim)


def save_checkpoint(path: Path, head, meta: dict, optimizer=None) -> Path:
    """The head (and the optimizer state, when given) to ``path`` atomically."""
    info = {"format": FORMAT, "dim": head.q.weight.shape[0], **meta}
    return training_state.write(path, head, info, META_KEY, optimizer=optimizer)


def load_checkpoint(path: Path, *, with_optimizer: bool = False):
    """(head, meta[, optimizer state]) from ``path``; a missing or unreadable file is one ``InvalidInput`` line."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    path = Path(path)
    if not path.is_file():
        raise InvalidInput(f"{path}: no path-retriever checkpoint there (train one with `kgqa train paths`)")
    try:
        with safe_open(str(path), framework="pt") as f:
            raw = (f.metadata() or {}).get(META_KEY)
        tensors = load_file(str(path))
        info = json.loads(raw) if raw else None
    except Exception as e:  # noqa: BLE001 - safetensors raises its own types for a corrupt file
        raise InvalidInput(f"{path}: not a readable safetensors file ({type(e).__name__})") from None
    if not info or info.get("format") != FORMAT:
        raise InvalidInput(f"{path}: not a kgqa path-retriever checkpoint (format "
                           f"{(info or {}).get('format')!r}, expected {FORMAT})")
    head = _head(int(info["dim"]))
    try:
        head.load_state_dict(training_state.model_state(tensors), strict=True)
    except RuntimeError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise InvalidInput(f"{path}: weights do not fit the stored dimensions ({first})") from None
    if not with_optimizer:
        return head, info
    return head, info, training_state.optimizer_state(tensors, info)


def load_retriever(path: Path, embed: Callable[[Sequence[str]], np.ndarray], encoder_name: str | None = None
                   ) -> PathRetriever:
    """The retriever of a checkpoint over ``embed`` (the KG's sentence encoder); a checkpoint trained over
    another encoder (``encoder_name`` differs from the stored one) is refused with one line."""
    head, info = load_checkpoint(path)
    if encoder_name and info.get("encoder") and info["encoder"] != encoder_name:
        raise InvalidInput(f"{path}: trained over encoder {info['encoder']!r}, this KG uses {encoder_name!r}")
    return PathRetriever(head, info, embed)


__all__ = ["PathRetriever", "chain_text", "save_checkpoint", "load_checkpoint", "load_retriever", "new_head", "FORMAT"]
