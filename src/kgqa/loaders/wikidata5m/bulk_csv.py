"""The entity rows of ``--bulk``'s import CSV: name, aliases, label keys, description and name vector in
one row per entity, so that ``neo4j-admin database import`` writes them all offline (no Bolt write for
the descriptions or the vectors; issue 61: at 100k entities writing the vectors over Bolt took 575 s of the
embedding phase's 711 s, and the descriptions 143 s).

- Descriptions: validation of ``wikidata5m_text.txt`` streams each accepted line into an on-disk SQLite
  table keyed by the QID's number (the last line of an id wins, as the Bolt loader's SETs do); the entity
  pass looks them up a batch at a time. The text file may be in any order (the release's is not the entity
  file's), and memory stays bounded by SQLite's cache.
- Vectors: the entity file is read again after validation, ``ENTITY_BATCH`` rows at a time; each batch's
  names are encoded (deduplicated within the batch) and written as a ``float[]`` column of
  ``VECTOR_DECIMALS``-decimal numbers (``-.1234``: Java's float parser reads a number without its leading
  zero). For a unit vector that rounding moves the cosine by less than 1e-6 (``tests/unit/test_bulk_csv.py``).

Memory: one batch of rows and its vectors (8,192 × 384 floats), whatever the size of the load.
"""

from __future__ import annotations

import csv
import io
import sqlite3
import time
from pathlib import Path

import numpy as np

#: entities per batch of the entity pass (one encoder call, one SQLite lookup, one write)
ENTITY_BATCH = 8_192
#: decimals of each vector component in the CSV (unit vectors: components in [-1, 1])
VECTOR_DECIMALS = 4
#: the entity CSV's header; the vector column, last, only when the load embeds
ENTITY_HEADER = ["id:ID(Entity)", "name", "aliases:string[]", "label_keys:string[]", "description", ":LABEL"]
VECTOR_HEADER = "name_embedding:float[]"


def _cells(delimiter: str) -> np.ndarray:
    """Every rounded component's bytes, padded with zero bytes to 8 (one uint64 each): index ``q + 10**D``
    for the component ``q / 10**D``, ``q`` in [-10**D, 10**D]; ``delimiter`` after each."""
    scale = 10 ** VECTOR_DECIMALS
    out = []
    for q in range(-scale, scale + 1):
        a = abs(q)
        text = ("-" if q < 0 else "") + (str(a // scale) if a >= scale else "") + f".{a % scale:0{VECTOR_DECIMALS}d}"
        b = (text + delimiter).encode("ascii")
        out.append(b + b"\0" * (8 - len(b)))
    return np.frombuffer(b"".join(out), dtype=np.uint64)


_CELLS: dict[str, np.ndarray] = {}


def format_vectors(vecs: np.ndarray, delimiter: str) -> list[bytes]:
    """Each row of ``vecs`` (unit vectors) as the importer's ``float[]`` field: components rounded to
    ``VECTOR_DECIMALS`` decimals, ``delimiter`` between them, no leading zero (``.5000``, ``-.0312``,
    ``1.0000``). Vectorised: each component is looked up as 8 bytes (its text, then zero bytes), and the zero
    bytes are removed at the end."""
    vecs = np.asarray(vecs, dtype=np.float32)
    if vecs.ndim != 2 or not np.isfinite(vecs).all():
        raise ValueError("format_vectors: a 2-d array of finite numbers")
    if delimiter not in _CELLS:
        _CELLS[delimiter] = _cells(delimiter)
    n, dim = vecs.shape
    scale = 10 ** VECTOR_DECIMALS
    q = np.rint(np.clip(vecs, -1.0, 1.0) * scale).astype(np.int32) + scale
    cells = _CELLS[delimiter][q].view(np.uint8).reshape(n, dim * 8)
    cells[:, -8:] = np.where(cells[:, -8:] == ord(delimiter), 0, cells[:, -8:])   # none after the last
    keep = cells != 0
    data = cells[keep].tobytes()
    ends = np.cumsum(keep.sum(axis=1))
    starts = np.concatenate(([0], ends[:-1]))
    return [data[s:e] for s, e in zip(starts.tolist(), ends.tolist())]


class Descriptions:
    """The accepted descriptions of one load, in a SQLite file beside the CSVs (removed by ``close``)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.unlink(missing_ok=True)
        self.db = sqlite3.connect(self.path)
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.execute("PRAGMA synchronous=OFF")
        self.db.execute("CREATE TABLE d (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
        self.pending: list[tuple[int, str]] = []
        self.count = 0

    def add(self, row: dict) -> None:
        """One accepted ``{id, description}`` (a validated QID: ``Q`` and digits)."""
        self.pending.append((int(row["id"][1:]), row["description"]))
        if len(self.pending) >= 50_000:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.db.executemany("INSERT OR REPLACE INTO d VALUES (?, ?)", self.pending)
            self.count += len(self.pending)
            self.pending.clear()

    def lookup(self, ids: list[str]) -> dict[str, str]:
        """{QID: description} for those of ``ids`` that have one."""
        self.flush()
        nums = [int(i[1:]) for i in ids]
        found: dict[str, str] = {}
        for j in range(0, len(nums), 30_000):            # under SQLite's limit on parameters
            part = nums[j:j + 30_000]
            q = f"SELECT id, text FROM d WHERE id IN ({','.join('?' * len(part))})"
            found.update((f"Q{k}", t) for k, t in self.db.execute(q, part))
        return found

    def close(self) -> None:
        self.db.close()
        self.path.unlink(missing_ok=True)


def write_entity_rows(out, rows: list[tuple], descriptions: Descriptions | None, encoder_encode,
                      delimiter: str) -> dict[str, float]:
    """One batch of entity rows (``(id, name, aliases, label_keys)``, lists already joined by ``delimiter``)
    appended to the binary file ``out`` with their description and, when ``encoder_encode`` is given, the
    name vector; returns the seconds spent {describe_s, encode_s, format_s, write_s} and the distinct names."""
    t0 = time.perf_counter()
    desc = descriptions.lookup([r[0] for r in rows]) if descriptions is not None else {}
    t1 = time.perf_counter()
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    vec_fields: list[bytes] | None = None
    unique = 0
    enc_s = fmt_s = 0.0
    if encoder_encode is not None:
        names = list(dict.fromkeys(r[1] for r in rows))
        unique = len(names)
        vecs = encoder_encode(names)
        t2 = time.perf_counter()
        fields = format_vectors(vecs, delimiter)
        at = {name: k for k, name in enumerate(names)}
        vec_fields = [fields[at[r[1]]] for r in rows]
        enc_s, fmt_s = t2 - t1, time.perf_counter() - t2
    t3 = time.perf_counter()
    for r in rows:
        w.writerow([r[0], r[1], r[2], r[3], desc.get(r[0], ""), "Entity"]
                   + ([""] if vec_fields is not None else []))
    lines = buf.getvalue().split("\n")
    if vec_fields is None:
        out.write("\n".join(lines).encode("utf-8"))
    else:
        parts = []
        for line, vec in zip(lines, vec_fields):          # each line ends with the empty vector field's ','
            parts += (line.encode("utf-8"), vec, b"\n")
        out.write(b"".join(parts))
    return {"describe_s": t1 - t0, "encode_s": enc_s, "format_s": fmt_s, "write_s": time.perf_counter() - t3,
            "unique_names": unique}
