"""Recall@10 of a loaded graph's entity name vector index against exact search (the full-size twin, issue 61).

    # once: every entity name of the entity file encoded with the graph's encoder into a float16 matrix
    .venv/bin/python -m bench.index_recall encode --entities DIR/wikidata5m_entity.txt --work .kgqa/recall
    # then: 200 queries, the index's top 10 (db.index.vector.queryNodes) against the exact top 10
    .venv/bin/python -m bench.index_recall query --entities DIR/wikidata5m_entity.txt --work .kgqa/recall [--real]

The connection and the encoder come from the environment (``KGQA_ENCODER_BACKEND`` as the graph was loaded).
Queries: the names of 200 random entities of the file (in distribution), or with ``--real`` the demo KG's names
(``data/demo``: real names, none in a twin). A returned entity counts when its exact cosine is within 1e-4 of the
exact 10th's, so ties count. Prints recall@10 and the index's query latency; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _encoder():
    from kgqa.core.config import Settings
    from kgqa.models.encoder import encoder_for

    return encoder_for(Settings())


def _names(path: Path) -> tuple[list[str], list[str]]:
    ids, names = [], []
    with path.open(encoding="utf-8") as fh:
        for ln in fh:
            p = ln.rstrip("\n").split("\t")
            if len(p) > 1:
                ids.append(p[0])
                names.append(p[1])
    return ids, names


def encode(args) -> None:
    ids, names = _names(args.entities)
    enc = _encoder()
    args.work.mkdir(parents=True, exist_ok=True)
    mm = np.lib.format.open_memmap(args.work / "vecs.npy", mode="w+", dtype=np.float16, shape=(len(names), 384))
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(0, len(names), 65536):
        mm[i:i + 65536] = enc.encode(names[i:i + 65536], batch_size=1024).astype(np.float16)
    mm.flush()
    (args.work / "ids.json").write_text(json.dumps(ids))
    print(f"encoded {len(names)} names in {time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU")


def query(args) -> None:
    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph

    rng = np.random.default_rng(args.seed)
    pool = _names(ROOT / "data" / "demo" / "wikidata5m_entity.txt")[1] if args.real else _names(args.entities)[1]
    qs = [pool[i] for i in rng.choice(len(pool), size=min(args.n, len(pool)), replace=False)]
    qv = _encoder().encode(qs)
    ids = json.loads((args.work / "ids.json").read_text())
    pos = {e: i for i, e in enumerate(ids)}
    mm = np.load(args.work / "vecs.npy", mmap_mode="r")
    exact = np.full((len(qs), 10), -2.0, dtype=np.float32)
    for i in range(0, mm.shape[0], 262144):
        s = qv @ np.asarray(mm[i:i + 262144], dtype=np.float32).T
        exact = -np.sort(-np.concatenate([exact, s], axis=1), axis=1)[:, :10]
    hits, lat = [], []
    with Graph(Settings()) as g:
        for k, v in enumerate(qv):
            t0 = time.perf_counter()
            rows = g.read("entity_vector_search", k=10, vector=v.tolist())
            lat.append(1000 * (time.perf_counter() - t0))
            true = [float(np.asarray(mm[pos[r["id"]]], dtype=np.float32) @ v) for r in rows if r["id"] in pos]
            hits.append(sum(1 for t in true if t >= exact[k, 9] - 1e-4) / 10)
    print(f"{len(qs)} queries ({'the demo KG names' if args.real else 'names of random entities'}): recall@10 "
          f"{np.mean(hits):.3f}; p50 {np.percentile(lat, 50):.0f} ms, p95 {np.percentile(lat, 95):.0f} ms "
          f"(first query {lat[0]:.0f} ms); load average {open('/proc/loadavg').read().split()[0]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=("encode", "query"))
    ap.add_argument("--entities", type=Path, required=True, help="the loaded wikidata5m_entity.txt")
    ap.add_argument("--work", type=Path, default=ROOT / ".kgqa" / "recall", help="where the exact vectors go")
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--real", action="store_true", help="query with the demo KG's names")
    args = ap.parse_args()
    {"encode": encode, "query": query}[args.step](args)


if __name__ == "__main__":
    main()
