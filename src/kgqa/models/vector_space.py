"""Which encoder made a graph's vectors: written by the loads, checked before a question is asked.

Every vector the graph holds (entity names, relations, document chunks and entities) and every query vector
must come from one encoder: MiniLM's vectors and the static vectors distilled from it (``model2vec``) are both
384-d unit vectors, so a graph loaded with one and asked with the other gives no error, only wrong neighbours.
So the first load that writes vectors records its encoder's space in one node, ``(:EncoderSpace)``:

* ``family``: ``transformer`` (the torch, onnx and onnx-int8 backends: the same vectors, int8 within 0.99
  cosine of fp32, docs/benchmarks.md) or ``model2vec`` (static vectors distilled from the model);
* ``model`` and ``weights``: the model's name and a digest of its weight files (their sizes, first and last
  MiB: changed weights change it, a reinstall of the same files does not);
* ``dim``, and the ``backend`` that wrote it (shown, not compared).

A later load of the same graph (a resumed one too) and ``kgqa ask``, ``compare``, ``eval``, ``load
documents``, ``train grasp`` and ``kgqa serve`` at start (``kgqa.app.runtime.open_runtime``) compare
the family and the weights; a mismatch is one line naming both encoders and the fix (exit 2). A graph
loaded before this record existed has no node and is used as it is (its first load with vectors since
writes it).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from kgqa.core.errors import InvalidInput

#: bytes read from each end of a weight file for its digest
DIGEST_EDGE = 1 << 20
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".onnx")
#: what is compared; the rest of the record is shown
COMPARED = ("family", "weights")


def weights_digest(model_path: str | Path) -> str:
    """A short digest of a model folder's weight files (name, size, first and last ``DIGEST_EDGE`` bytes),
    or of the path itself when it is not a folder with any."""
    path = Path(model_path)
    files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in WEIGHT_SUFFIXES) if path.is_dir() else []
    h = hashlib.sha256()
    for p in files:
        size = p.stat().st_size
        h.update(f"{p.name}:{size}:".encode())
        with open(p, "rb") as f:
            h.update(f.read(DIGEST_EDGE))
            if size > 2 * DIGEST_EDGE:
                f.seek(size - DIGEST_EDGE)
                h.update(f.read(DIGEST_EDGE))
    if not files:
        h.update(str(path).encode())
    return h.hexdigest()[:16]


def describe(space: dict) -> str:
    """A space in words: ``all-MiniLM-L6-v2 (transformer, weights 1a2b…, 384-d, written by onnx)``."""
    kind = ("static vectors distilled by model2vec from " if space.get("family") == "model2vec" else "") + \
        str(space.get("model"))
    return f"{kind} ({space.get('family')}, weights {space.get('weights')}, {space.get('dim')}-d, backend {space.get('backend')})"


def space_of(encoder) -> dict | None:
    """The encoder's space (``SentenceEncoder.space``), or None for one that has none (a test double)."""
    try:
        return getattr(encoder, "space", None)
    except OSError:                     # a model folder that cannot be read: the encoder itself will say so
        return None


def stored_space(graph) -> dict | None:
    """The space recorded in the graph, or None when no load recorded one."""
    rows = graph.read("encoder_space")
    return rows[0]["space"] if rows else None


def check_space(graph, encoder) -> dict | None:
    """Raise ``InvalidInput`` (one line, both encoders, the fix) when the graph's vectors were made by another
    encoder than ``encoder``; returns the recorded space (None: nothing recorded, or no space to compare)."""
    mine = space_of(encoder)
    if mine is None:
        return None
    theirs = stored_space(graph)
    if theirs is None or all(theirs.get(k) == mine.get(k) for k in COMPARED):
        return theirs
    if theirs.get("family") != mine.get("family"):
        backend = "model2vec" if theirs.get("family") == "model2vec" else "onnx (or torch, onnx-int8)"
        fix = f"set KGQA_ENCODER_BACKEND={backend} as the graph was loaded"
    else:
        fix = f"set KGQA_ENCODER_MODEL to the graph's model ({theirs.get('model')})"
    raise InvalidInput(f"the graph's vectors were made by {describe(theirs)}, but this command encodes with "
                       f"{describe(mine)}: {fix}, or load the graph again into an empty database with this encoder")


def record_space(graph, encoder) -> None:
    """Before a load writes vectors: check the graph's space against ``encoder``'s (a mismatch raises, so no
    vector of another encoder is mixed in) and record it when none is."""
    mine = space_of(encoder)
    if mine is not None and check_space(graph, encoder) is None:
        graph.write("encoder_space_record", space=mine)
