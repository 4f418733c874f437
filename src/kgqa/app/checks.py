"""One row of ``kgqa doctor``: a check's name, whether it passed, why, and whether it is required."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True

    def as_dict(self) -> dict:
        return asdict(self)
