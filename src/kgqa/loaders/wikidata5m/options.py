"""The options of a Wikidata5M load and the report it returns (phases with rows and seconds)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kgqa.loaders.wikidata5m.files import SPLITS

#: ids per embedding chunk: Neo4j is asked which of them lack a vector; names are
#: deduplicated within a chunk before encoding.
EMBED_CHUNK = 20_000


@dataclass
class LoadOptions:
    splits: tuple[str, ...] = SPLITS
    limit: int | None = None          # load only the first N valid triples (and the entities they use)
    strict: bool = True               # False: skip bad lines, write them to a rejects file
    embeddings: bool = True           # False: structure only; a later run adds embeddings
    batch_size: int = 10_000          # rows per write transaction (facts: pairs of one type)
    embed_batch_size: int = 256       # texts per encoder forward pass
    embed_chunk: int = EMBED_CHUNK    # entities per resume step (asked for, encoded, written; a kill loses ≤ 1)
    device: str = "cpu"               # encoder device: cpu | cuda
    progress: bool = False            # rich progress bars on stderr
    rejects_path: Path | None = None  # default: <data_dir>/rejects/wikidata5m-<UTC time>.tsv


@dataclass
class PhaseStat:
    name: str
    rows: int = 0
    seconds: float = 0.0
    detail: dict[str, float] = field(default_factory=dict)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict:
        return {"phase": self.name, "rows": self.rows, "seconds": round(self.seconds, 3),
                "rows_per_s": round(self.rows_per_s, 1),
                **{k: round(v, 3) for k, v in self.detail.items()}}


@dataclass
class LoadReport:
    path: str
    phases: list[PhaseStat] = field(default_factory=list)
    rejects: int = 0
    rejects_by_reason: dict[str, int] = field(default_factory=dict)
    rejects_path: str | None = None
    skipped: dict[str, int] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)  # per phase: create | merge (, resumed after …)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    embeddings: bool = True
    device: str = "cpu"
    torch_threads: int | None = None
    encoder: str | None = None      # backend and threads of the embedding phase, e.g. "onnx-int8 · 2 threads"
    warnings: list[str] = field(default_factory=list)  # e.g. an empty split: loaded, but said

    def phase(self, name: str) -> PhaseStat:
        for p in self.phases:
            if p.name == name:
                return p
        p = PhaseStat(name)
        self.phases.append(p)
        return p

    def as_dict(self) -> dict:
        return {"path": self.path, "seconds": round(self.seconds, 3),
                "phases": [p.as_dict() for p in self.phases],
                "rejects": self.rejects, "rejects_by_reason": dict(self.rejects_by_reason),
                "rejects_path": self.rejects_path, "skipped": dict(self.skipped),
                "modes": dict(self.modes), "counts": dict(self.counts), "embeddings": self.embeddings,
                "device": self.device, "torch_threads": self.torch_threads,
                "encoder": self.encoder, "warnings": list(self.warnings)}

    def timed(self, name: str, work: Callable[[], int]) -> None:
        """Run ``work`` as the phase ``name``: its seconds, and the rows it returns."""
        st = self.phase(name)
        t0 = time.perf_counter()
        st.rows = work()
        st.seconds = time.perf_counter() - t0
