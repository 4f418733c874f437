"""A document's vectors saved as they are computed, so that a load killed in the middle of a large
document's embedding (most of its time: 433 of 504 s for a 500-page PDF) resumes where it stopped.

One folder per document under ``<data dir>/doc-embeddings/``; in it, one file per saved slice of vectors
(``part-*.npz``: ``keys``, the first 16 bytes of sha256 over the encoder's identity, how the text was
encoded (passage or name) and the text; ``vecs``, float32; ``model``, the encoder's identity). Each file
is written to a temporary name, flushed to disk and renamed into place: a kill leaves whole files and
at most a temporary one, which the next load removes; a file that does not read back whole (a crash of
the machine) is removed and its vectors are computed again. The key holds the encoder's identity (model,
weights, backend, precision), so vectors of another encoder are never reused: files of another identity
are removed when the cache is opened.

The graph write stays the all-or-nothing, status-marked write of ``store``; the cache only spares the
rerun the vectors. It is bounded: the folder goes when its document loads complete, and with ``kgqa docs
rm``. The writer lock (one writer per database) keeps two loads from one folder at a time."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Sequence

import numpy as np

#: the folder under the data dir
FOLDER = "doc-embeddings"
KEY_BYTES = 16


def cache_root(data_dir) -> Path:
    return Path(data_dir) / FOLDER


def doc_folder(root, doc_id: str) -> Path:
    """The folder of ``doc_id``: its id made safe for a file name, and a digest of the id (two ids that
    sanitise alike stay apart)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", doc_id)[:80]
    return Path(root) / f"{safe}-{hashlib.sha256(doc_id.encode()).hexdigest()[:12]}"


def remove(root, doc_id: str) -> int:
    """Remove ``doc_id``'s saved vectors; returns how many files went."""
    folder = doc_folder(root, doc_id)
    if not folder.is_dir():
        return 0
    n = sum(1 for f in folder.iterdir() if f.is_file())
    shutil.rmtree(folder, ignore_errors=True)
    return n


class EmbeddingCache:
    """The saved vectors of one document for one encoder identity (``model``)."""

    def __init__(self, root, doc_id: str, model: str):
        self.folder = doc_folder(root, doc_id)
        self.model = model
        self.vectors: dict[bytes, np.ndarray] = {}
        self._seq = 0
        self._read()

    def key(self, kind: str, text: str) -> bytes:
        return hashlib.sha256(f"{self.model}\0{kind}\0{text}".encode()).digest()[:KEY_BYTES]

    def _read(self) -> None:
        if not self.folder.is_dir():
            return
        for f in sorted(self.folder.iterdir()):
            if f.name.startswith("."):                   # a temporary file a kill left: never read back
                f.unlink(missing_ok=True)
                continue
            if not f.name.endswith(".npz"):
                continue
            try:
                with np.load(f, allow_pickle=False) as z:
                    model, keys, vecs = str(z["model"]), z["keys"], z["vecs"]
                ok = (model == self.model and keys.ndim == 2 and keys.shape[1] == KEY_BYTES and vecs.ndim == 2
                      and len(keys) == len(vecs) and vecs.dtype == np.float32 and bool(np.isfinite(vecs).all()))
            except Exception:  # noqa: BLE001 - a file that does not read back whole is not used
                ok = False
            if not ok:                                    # another encoder's vectors, or a damaged file
                f.unlink(missing_ok=True)
                continue
            for k, v in zip(keys, vecs):
                self.vectors[k.tobytes()] = v
            self._seq += 1

    def save(self, keys: Sequence[bytes], vecs: np.ndarray) -> None:
        """Save one slice of vectors as a whole file (temporary name, fsync, rename)."""
        if not len(keys):
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self._seq += 1
        name = f"part-{self._seq:05d}-{os.getpid()}.npz"
        tmp = self.folder / f".{name}.tmp"
        arr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), KEY_BYTES)
        vecs = np.asarray(vecs, dtype=np.float32)
        with open(tmp, "wb") as fh:
            np.savez(fh, model=np.array(self.model), keys=arr, vecs=vecs)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.folder / name)
        for k, v in zip(keys, vecs):
            self.vectors[k] = v

    def drop(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.vectors.clear()
