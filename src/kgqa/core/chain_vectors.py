"""Vectors of relation-chain texts, kept across questions and across processes.

A relation chain's text ("place of birth → country") depends on its relations only, so under one encoder its
vector is the same in every question that meets it. With the chain reader on, encoding the chains a question
meets for the first time was most of an ask at 200,000 entities (docs/benchmarks.md, issue 60), and every
``kgqa ask`` is a new process: so the vectors are kept in memory (an LRU of ``MEMORY`` vectors, shared by every
KG and reader of the process) and in ``<data dir>/cache/chain-vectors.sqlite`` (at most ``STORED`` vectors, the
least recently used go first). Both are keyed by the encoder's identity as well as the text: the rules' SBERT
(``SentenceEncoder.identity``: model, weights, backend) and the chain reader (its checkpoint's SHA-256 and
runtime) never read each other's vectors, nor a retrained reader its predecessor's. A text is encoded at most
once per identity while its vector is kept.

Questions never go to the file: only texts of the graph, relation chains and what kind of thing an end entity is
(its classes, or the start of its description: the chain reader reads them against the question's answer kind).
A file that cannot be opened or written (a read-only data dir, a damaged file) leaves the memory LRU alone
working, for the rest of the process."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

#: vectors kept in memory per process (384 floats each: ~75 MB at most)
MEMORY = 50_000
#: vectors kept in the file; beyond it the least recently used tenth goes
STORED = 200_000
FILE = Path("cache") / "chain-vectors.sqlite"
_SCHEMA = ("CREATE TABLE IF NOT EXISTS chain_vectors (identity TEXT NOT NULL, text TEXT NOT NULL, "
           "vec BLOB NOT NULL, used REAL NOT NULL, PRIMARY KEY (identity, text)) WITHOUT ROWID")
_BATCH = 400          # texts per SELECT (SQLite's parameter limit is 999 in older builds)


class ChainVectors:
    """Chain texts' vectors by (encoder identity, text): ``get(identity, texts, encode)``."""

    def __init__(self, path: Path | None, memory: int = MEMORY, stored: int = STORED):
        self.path = path
        self.memory = memory
        self.stored = stored
        self._mem: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._rows = 0
        self._opened = path is None

    def get(self, identity: str, texts: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """The vectors of ``texts`` (n, dim) in order; ``encode(missing)`` is called once, with the distinct texts
        neither kept in memory nor stored, and its vectors are kept."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        found = self.lookup(identity, texts, encode)
        return np.stack([found[t] for t in texts])

    def lookup(self, identity: str, texts: Sequence[str],
               encode: Callable[[list[str]], np.ndarray]) -> dict[str, np.ndarray]:
        """``get`` as text → vector (what a caller's own cache of other texts can take in)."""
        with self._lock:
            found: dict[str, np.ndarray] = {}
            for t in dict.fromkeys(texts):
                v = self._mem.get((identity, t))
                if v is not None:
                    self._mem.move_to_end((identity, t))
                    found[t] = v
            rest = [t for t in dict.fromkeys(texts) if t not in found]
            for t, v in self._read(identity, rest, touch=list(found)).items():
                found[t] = self._keep(identity, t, v)
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            vecs = np.asarray(encode(missing), dtype=np.float32)
            with self._lock:
                for t, v in zip(missing, vecs):
                    found[t] = self._keep(identity, t, v)
                self._write(identity, missing, vecs)
        return found

    def clear_memory(self) -> None:
        """Forget the vectors kept in memory (the file keeps its own)."""
        with self._lock:
            self._mem.clear()

    # ------------------------------------------------------------------ memory
    def _keep(self, identity: str, text: str, vec: np.ndarray) -> np.ndarray:
        self._mem[(identity, text)] = vec
        while len(self._mem) > self.memory:
            self._mem.popitem(last=False)
        return vec

    # ------------------------------------------------------------------ file (under self._lock)
    def _conn(self) -> sqlite3.Connection | None:
        if not self._opened:
            self._opened = True
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(str(self.path), timeout=5.0, check_same_thread=False, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(_SCHEMA)
                self._rows = db.execute("SELECT count(*) FROM chain_vectors").fetchone()[0]
                self._db = db
            except (OSError, sqlite3.Error):
                self._db = None            # memory only
        return self._db

    def _read(self, identity: str, texts: list[str], touch: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of ``texts``; those and ``touch`` (found in memory) are marked used now."""
        db = self._conn()
        if db is None or not (texts or touch):
            return {}
        out: dict[str, np.ndarray] = {}
        try:
            for i in range(0, len(texts), _BATCH):
                part = texts[i:i + _BATCH]
                marks = ",".join("?" * len(part))
                for text, blob in db.execute(f"SELECT text, vec FROM chain_vectors WHERE identity = ? AND text IN "
                                             f"({marks})", [identity, *part]):
                    out[text] = np.frombuffer(blob, dtype=np.float32).copy()
            if out or touch:
                now = time.time()
                db.executemany("UPDATE chain_vectors SET used = ? WHERE identity = ? AND text = ?",
                               [(now, identity, t) for t in [*out, *touch]])
        except sqlite3.Error:
            self._db = None
            return {}
        return out

    def _write(self, identity: str, texts: list[str], vecs: np.ndarray) -> None:
        db = self._conn()
        if db is None:
            return
        now = time.time()
        try:
            db.execute("BEGIN")
            db.executemany("INSERT OR REPLACE INTO chain_vectors VALUES (?, ?, ?, ?)",
                           [(identity, t, v.tobytes(), now) for t, v in zip(texts, vecs)])
            db.execute("COMMIT")
            self._rows += len(texts)
            if self._rows > self.stored:       # the least recently used tenth goes
                drop = self._rows - (self.stored - self.stored // 10)
                db.execute("DELETE FROM chain_vectors WHERE (identity, text) IN (SELECT identity, text FROM "
                           "chain_vectors ORDER BY used LIMIT ?)", (drop,))
                self._rows = db.execute("SELECT count(*) FROM chain_vectors").fetchone()[0]
        except sqlite3.Error:
            self._db = None


_STORES: dict[str, ChainVectors] = {}
_STORES_LOCK = threading.Lock()


def chain_vectors(data_dir: str | Path | None) -> ChainVectors:
    """The process's store for ``data_dir`` (its file under it); memory only when ``data_dir`` is None."""
    key = str(Path(data_dir).resolve()) if data_dir is not None else ""
    with _STORES_LOCK:
        if key not in _STORES:
            _STORES[key] = ChainVectors(Path(key) / FILE if key else None)
        return _STORES[key]


__all__ = ["ChainVectors", "chain_vectors", "MEMORY", "STORED"]
