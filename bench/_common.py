"""What several benchmarks share: percentiles, a metric as a percentage, a text table, the question file as rows,
and the Cypher queries of ``bench/cypher/`` (queries only a benchmark runs; kgqa's own are in
``src/kgqa/cypher/``)."""

from __future__ import annotations

import json
from pathlib import Path

CYPHER = Path(__file__).resolve().parent / "cypher"


def percentile(values, q: float) -> float:
    """The q-th percentile (numpy's linear interpolation, as ``kgqa eval``'s latency); NaN when empty."""
    import numpy as np

    vals = list(values)
    return float(np.percentile(np.asarray(vals, dtype=float), q)) if vals else float("nan")


def rate(m: dict | None, width: int = 5) -> str:
    """A ``kgqa eval`` rate (``{"correct", "n", "accuracy"}``) as a percentage with one decimal; – when empty."""
    return "–" if not m or not m.get("n") else f"{100 * m['accuracy']:{width}.1f}"


def table(title: str, header: list[str], rows: list[list]) -> None:
    """A plain text table: the title, the header, a rule, the rows, columns padded to their widest cell."""
    cells = [header] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line)
    print("-" * len(line))
    for r in cells[1:]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))


def method_options(pairs: list[str]) -> dict:
    """``-o KEY=VALUE`` pairs as a method's options (values as given; the method's model converts them)."""
    out = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k:
            raise SystemExit(f"-o {p!r}: expected KEY=VALUE")
        out[k] = v
    return out


def question_rows(path: Path) -> list[dict]:
    """A question file's lines as dicts, each with an image's absolute ``image_path`` when it has one."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            if q.get("image"):
                q["image_path"] = str((Path(path).parent / q["image"]).resolve())
            out.append(q)
    return out


def query(name: str) -> str:
    """The text of ``bench/cypher/<name>.cypher``."""
    path = CYPHER / f"{name}.cypher"
    if not path.is_file():
        raise KeyError(f"no query named {name!r} in bench/cypher")
    return path.read_text(encoding="utf-8")


def read(graph, name: str, **params) -> list[dict]:
    """Run ``bench/cypher/<name>.cypher`` in a read transaction (``kgqa.core.graph.Graph.run_text``)."""
    return graph.run_text(query(name), params, write=False)


def write(graph, name: str, **params) -> list[dict]:
    """Run ``bench/cypher/<name>.cypher`` in a write transaction."""
    return graph.run_text(query(name), params, write=True)


def write_typed(graph, name: str, rel_type: str, params: dict) -> list[dict]:
    """``write`` for a query whose text holds ``$$TYPE$$``: only a validated property id is put there."""
    from kgqa.core.graph import relation_type

    return graph.run_text(query(name).replace("$$TYPE$$", relation_type(rel_type)), params, write=True)


def ensure_built(s, key, build, what: str, rebuild: bool = False) -> dict | None:
    """Build a benchmark graph into ``s.data_dir`` unless its ``manifest.json`` already records ``key`` (or
    ``rebuild``); ``build()`` returns what the manifest keeps (printed and returned); the graph's server is stopped."""
    import time

    from kgqa.core.neo4j_local import LocalNeo4j

    man = s.data_dir / "manifest.json"
    if man.exists() and json.loads(man.read_text()).get("key") == key and not rebuild:
        return None
    print(f"building {what} in {s.data_dir} (Bolt {s.neo4j_bolt_port}) …", flush=True)
    info = build()
    LocalNeo4j(s).stop()
    man.write_text(json.dumps({"key": key, "built": info, "at": time.strftime("%Y-%m-%d %H:%M:%S")}, indent=2))
    print(f"built {what}: {info}", flush=True)
    return info
