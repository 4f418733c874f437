"""What the Wikidata5M loader tests share: the sample dataset and a graph that records the loader's writes.

``RecordingGraph`` stands in for ``kgqa.core.graph.Graph``: it records the named queries the
loader asks it to run and answers reads as an empty graph would (the real-Neo4j behaviour is
in tests/integration).
"""

from __future__ import annotations

import copy
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "fixtures" / "wd5m_sample"


class RecordingGraph:
    """Stand-in for kgqa.core.graph.Graph that records writes and answers reads with nothing."""

    def __init__(self, data_dir: Path, checkpoint: dict | None = None, fact_exists: bool = False):
        from kgqa.core.config import Settings

        self.settings = Settings(data_dir=data_dir)
        self.writes: list[tuple[str, str | None, dict]] = []
        self.checkpoint, self.fact_exists = checkpoint, fact_exists

    def write(self, name, params=None, **kw):
        self.writes.append((name, None, copy.deepcopy({**(params or {}), **kw})))
        return [{"written": 0}]

    def write_typed(self, name, rel_type, params):
        self.writes.append((name, rel_type, copy.deepcopy(params)))
        return [{"written": 0}]

    def read(self, name, params=None, **kw):
        if name == "graph_counts":
            return [{"entities": 0, "relations": 0, "images": 0, "facts": 0}]
        if name == "load_graph_counts_fast":
            return [{"entities": 1, "relationships": 1}]  # not empty: the loader asks id by id
        if name == "load_checkpoint":
            return [self.checkpoint] if self.checkpoint else []
        if name == "load_fact_exists":
            return [{"found": self.fact_exists}]
        if name in ("load_entities_exist", "load_facts_exist_from", "load_entity_exists"):
            return [{"found": False}]  # an empty graph: the CREATE path
        return []

    def apply_schema(self):
        self.writes.append(("schema", None, {}))
        return 1

    def await_indexes(self, timeout_s=300):
        pass

    def rows(self, name):
        names = {name, f"{name}_create"}  # first load into an empty graph CREATEs
        out = []
        for n, _t, p in self.writes:
            if n in names:
                out.extend(p.get("rows") or [])
        return out


def _replace_line(path: Path, lineno: int, text: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines[lineno - 1] = text + b"\n"
    path.write_bytes(b"".join(lines))
