"""Benchmark: Neo4j's vector index (entity_name_embedding, HNSW, cosine) against exact numpy search.

    KGQA_NEO4J_HEAP=3g KGQA_NEO4J_PAGECACHE=3g python bench/vector.py --wipe-local-db [--n 1000000]

Vectors: ``--centers`` label-like names (the generator of bench/load.py) are embedded with
the real all-MiniLM-L6-v2; each of the N stored vectors is one of those name embeddings
plus Gaussian noise, L2-normalised (so the data has the clustered, anisotropic shape of
real name embeddings at a size the CPU encoder could not produce in minutes). Queries are
fresh noisy copies of stored vectors (a "paraphrase" of a stored name).

Steps on an empty database: drop the vector index, write N (:Entity {id, name_embedding})
nodes, create the index and time its population until ONLINE (build time; memory = Neo4j
process RSS before/after and the index's size on disk), then for each query: exact top-10
by a numpy matrix-vector product (single-threaded BLAS) vs ``db.index.vector.queryNodes``
with k=10 and with k=50 / k=100 cut to 10 (over-fetch), recall@10 and p50/p95 latency (the
Neo4j figure includes the Bolt round trip). Wipes the local database; asserts nothing.
"""

from __future__ import annotations

import os
import sys

# single-threaded BLAS for the exact baseline (set before numpy loads)
_THREADS = os.environ.get("KGQA_TORCH_THREADS", "1")
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, _THREADS)

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402


def _rss_mb(pid: int | None) -> float:
    if not pid:
        return float("nan")
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _du_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6 if path.exists() else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--centers", type=int, default=4000)
    ap.add_argument("--noise", type=float, default=0.03, help="per-dimension noise sigma before normalising")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--wipe-local-db", action="store_true", help="required: the local database is wiped")
    args = ap.parse_args()
    if not args.wipe_local_db:
        sys.exit("bench/vector.py wipes the local Neo4j database (KGQA_DATA_DIR); pass --wipe-local-db")

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from load import _entity_name, fresh_db  # the same name generator and database reset

    from kgqa.config import Settings
    from kgqa.graph import Graph
    from kgqa.models.encoder import get_encoder
    from kgqa.neo4j_local import LocalNeo4j

    settings = Settings()
    rng = np.random.default_rng(11)
    t0 = time.perf_counter()
    names: list[str] = []
    while len(names) < args.centers:
        names.append(_entity_name(rng, []))
    enc = get_encoder(threads=settings.torch_threads)
    centers = enc.encode(names, batch_size=256)
    enc_s = time.perf_counter() - t0
    X = centers[rng.integers(0, len(centers), args.n)]
    X = X + rng.normal(0, args.noise, X.shape).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    qi = rng.choice(args.n, args.queries, replace=False)
    Q = X[qi] + rng.normal(0, args.noise, (args.queries, X.shape[1])).astype(np.float32)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    print(f"{args.n:,} vectors (384-d) from {args.centers:,} MiniLM name embeddings + noise σ={args.noise} "
          f"(encoding {enc_s:.1f} s); {args.queries} queries; BLAS/torch threads {_THREADS}", flush=True)

    fresh_db(settings)
    server = LocalNeo4j(settings)
    pid = server.status().pid
    index_dir = settings.neo4j_home / "data" / "databases" / "neo4j" / "schema" / "index"
    with Graph(settings) as g:
        g.write("bench_drop_entity_vector_index")
        t0 = time.perf_counter()
        for i in range(0, args.n, args.batch):
            rows = [{"id": f"V{j}", "vector": X[j].tolist()} for j in range(i, min(i + args.batch, args.n))]
            g.write("bench_store_vectors", rows=rows)
        write_s = time.perf_counter() - t0
        print(f"wrote {args.n:,} nodes with vectors in {write_s:.1f} s ({args.n / write_s:,.0f}/s)", flush=True)
        rss0, disk0 = _rss_mb(pid), _du_mb(index_dir)
        t0 = time.perf_counter()
        g.apply_schema()  # creates entity_name_embedding again (IF NOT EXISTS)
        g.await_indexes(timeout_s=3600)
        build_s = time.perf_counter() - t0
        rss1, disk1 = _rss_mb(pid), _du_mb(index_dir)
        print(f"index build {build_s:.1f} s; Neo4j RSS {rss0:,.0f} → {rss1:,.0f} MB; "
              f"schema/index on disk {disk0:,.0f} → {disk1:,.0f} MB", flush=True)

        exact_ms, exact_top = [], []
        for q in Q:
            t = time.perf_counter()
            s = X @ q
            top = np.argpartition(-s, 10)[:10]
            top = top[np.argsort(-s[top])]
            exact_ms.append((time.perf_counter() - t) * 1000)
            exact_top.append({f"V{j}" for j in top})
        results = {}
        for k in (10, 50, 100):
            for q in Q[:20]:  # warm-up
                g.read("bench_vector_search", k=k, vector=q.tolist())
            ms, rec = [], []
            for q, truth in zip(Q, exact_top):
                v = q.tolist()
                t = time.perf_counter()
                hits = g.read("bench_vector_search", k=k, vector=v)
                ms.append((time.perf_counter() - t) * 1000)
                rec.append(len({h["id"] for h in hits[:10]} & truth) / 10)
            results[k] = (np.mean(rec), np.percentile(ms, 50), np.percentile(ms, 95))
    fresh_db(settings)  # leave the local database empty

    from rich.console import Console
    from rich.table import Table

    con = Console(width=130)
    t = Table(title=f"Vector search over {args.n:,} entity-name vectors (384-d, cosine) · "
                    f"threads {_THREADS} · Neo4j heap {settings.neo4j_heap} / page cache {settings.neo4j_pagecache}")
    for c in ("method", "recall@10", "p50 ms", "p95 ms", "p50 vs exact"):
        t.add_column(c, justify="left" if c == "method" else "right")
    e50, e95 = np.percentile(exact_ms, 50), np.percentile(exact_ms, 95)
    t.add_row("exact numpy (X @ q, top-10)", "1.000", f"{e50:.2f}", f"{e95:.2f}", "1×")
    for k, (rec, p50, p95) in results.items():
        t.add_row(f"Neo4j vector index, k={k}{' → top 10' if k > 10 else ''}", f"{rec:.3f}", f"{p50:.2f}",
                  f"{p95:.2f}", f"1/{e50 / p50:.1f}" if p50 < e50 else f"{p50 / e50:.1f}× slower")
    con.print(t)
    con.print(f"index build: {build_s:.1f} s for {args.n:,} vectors ({args.n / build_s:,.0f}/s); "
              f"write of the vectors: {write_s:.1f} s; Neo4j RSS +{rss1 - rss0:,.0f} MB during the build; "
              f"index files on disk +{disk1 - disk0:,.0f} MB; raw float32 vectors {X.nbytes / 1e6:,.0f} MB")
    con.print("goal: recall@10 ≥ 0.95 at a p50 ≤ 1/100 of the exact scan's")


if __name__ == "__main__":
    main()
