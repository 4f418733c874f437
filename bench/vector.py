"""Benchmark: Neo4j's vector index (entity_name_embedding, HNSW, cosine) against exact numpy search.

    KGQA_NEO4J_HEAP=3g KGQA_NEO4J_PAGECACHE=3g python -m bench.vector --wipe-local-db [--n 1000000]

Vectors: ``--centers`` label-like names (the generator of bench/load.py) are embedded with
the real all-MiniLM-L6-v2; each of the N stored vectors is one of those name embeddings
plus Gaussian noise, L2-normalised (so the data has the clustered, anisotropic shape of
real name embeddings at a size the CPU encoder could not produce in minutes). Queries are
fresh noisy copies of stored vectors (a "paraphrase" of a stored name).

``--real NPY``: the stored vectors are real all-MiniLM-L6-v2 name embeddings instead (a float32
(n, 384) .npy, e.g. the distractor-name cache of bench/scale.py) plus the demo KG's 436 names;
the queries are ``--queries`` further rows of the file that are not stored (unseen names).
``--sweep "m=16,efc=100,q=1;m=32,efc=200,q=0"`` then builds the index once per setting that
Neo4j 5.26 exposes (``vector.hnsw.m``, ``vector.hnsw.ef_construction``,
``vector.quantization.enabled``) over the same nodes and measures k = ``--ks`` (default 10,20)
fetched, cut to 10: recall@10 against the exact scan, p50/p95, build time.

    KGQA_NEO4J_HEAP=2g KGQA_NEO4J_PAGECACHE=2g python -m bench.vector --wipe-local-db \
        --real .kgqa/scale/cache/distractor_names_48f7ffc04fbf67d4.npy --n 200000 \
        --sweep "m=16,efc=100,q=1;m=16,efc=100,q=0;m=32,efc=200,q=1;m=48,efc=400,q=1"

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
from bench._common import read, write


def _rss_mb(pid: int | None) -> float:
    if not pid:
        return float("nan")
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _du_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6 if path.exists() else 0.0


def exact_top10(X: np.ndarray, Q: np.ndarray, ids) -> tuple[list[float], list[set]]:
    """The exact numpy scan, the baseline: per query its time in ms and the ids of its true top 10."""
    ms, truth = [], []
    for q in Q:
        t = time.perf_counter()
        s = X @ q
        top = np.argpartition(-s, 10)[:10]
        top = top[np.argsort(-s[top])]
        ms.append((time.perf_counter() - t) * 1000)
        truth.append({ids[j] for j in top})
    return ms, truth


def index_recall(g, Q: np.ndarray, truth: list[set], k: int) -> tuple[list[float], list[float]]:
    """The vector index fetching k: per query recall@10 against ``truth`` and the query's time in ms
    (after a 20-query warm-up)."""
    for q in Q[:20]:  # warm-up
        read(g, "bench_vector_search", k=k, vector=q.tolist())
    ms, rec = [], []
    for q, tr in zip(Q, truth):
        v = q.tolist()
        t = time.perf_counter()
        hits = read(g, "bench_vector_search", k=k, vector=v)
        ms.append((time.perf_counter() - t) * 1000)
        rec.append(len({h["id"] for h in hits[:10]} & tr) / 10)
    return rec, ms


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--centers", type=int, default=4000)
    ap.add_argument("--noise", type=float, default=0.03, help="per-dimension noise sigma before normalising")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--wipe-local-db", action="store_true", help="required: the local database is wiped")
    ap.add_argument("--real", type=Path, default=None, help="a float32 (n, 384) .npy of real name embeddings")
    ap.add_argument("--sweep", default=None, help='HNSW settings, e.g. "m=16,efc=100,q=1;m=32,efc=200,q=1"')
    ap.add_argument("--ks", default="10,20", help="k fetched in a sweep (each cut to the top 10)")
    args = ap.parse_args()
    if not args.wipe_local_db:
        sys.exit("bench/vector.py wipes the local Neo4j database (KGQA_DATA_DIR); pass --wipe-local-db")
    if args.real is not None or args.sweep is not None:
        return sweep(args)

    from bench.load import _entity_name, fresh_db  # the same name generator and database reset

    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph
    from kgqa.models.encoder import get_encoder
    from kgqa.core.neo4j_local import LocalNeo4j

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
        write(g, "bench_drop_entity_vector_index")
        t0 = time.perf_counter()
        for i in range(0, args.n, args.batch):
            rows = [{"id": f"V{j}", "vector": X[j].tolist()} for j in range(i, min(i + args.batch, args.n))]
            write(g, "bench_store_vectors", rows=rows)
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

        exact_ms, exact_top = exact_top10(X, Q, [f"V{j}" for j in range(len(X))])
        results = {}
        for k in (10, 50, 100):
            rec, ms = index_recall(g, Q, exact_top, k)
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


def _parse_sweep(text: str | None) -> list[dict]:
    """``m=16,efc=100,q=1;…`` → [{m, ef_construction, quantization}]; one clear line when wrong."""
    out = []
    for part in (text or "m=16,efc=100,q=1").split(";"):
        if not part.strip():
            continue
        cfg = {"m": 16, "ef_construction": 100, "quantization": True}
        for kv in part.split(","):
            key, _, val = kv.strip().partition("=")
            try:
                if key == "m":
                    cfg["m"] = int(val)
                elif key in ("efc", "ef_construction"):
                    cfg["ef_construction"] = int(val)
                elif key in ("q", "quantization"):
                    cfg["quantization"] = {"1": True, "on": True, "true": True, "0": False, "off": False,
                                           "false": False}[val.lower()]
                else:
                    raise KeyError(key)
            except (ValueError, KeyError):
                sys.exit(f"bench/vector.py: --sweep {kv.strip()!r}: expected m=INT, efc=INT or q=0|1")
        if not (1 <= cfg["m"] <= 512 and 1 <= cfg["ef_construction"] <= 3200):
            sys.exit(f"bench/vector.py: --sweep {part.strip()!r}: m must be 1-512, efc 1-3200 (Neo4j's ranges)")
        out.append(cfg)
    return out


def sweep(args) -> None:
    """Real name embeddings, one index build per HNSW setting, recall@10 and latency per k."""
    configs = _parse_sweep(args.sweep)
    try:
        ks = sorted({int(k) for k in args.ks.split(",") if k.strip()})
    except ValueError:
        sys.exit(f"bench/vector.py: --ks {args.ks!r}: expected integers, e.g. 10,20")
    if not ks or min(ks) < 10:
        sys.exit("bench/vector.py: --ks: each k must be ≥ 10 (recall@10 is measured)")
    if args.real is None or not args.real.is_file():
        sys.exit(f"bench/vector.py: --real {args.real}: no such .npy file (a float32 (n, 384) array)")
    from bench.embed import demo_names
    from bench.load import fresh_db

    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph
    from kgqa.models.encoder import get_encoder

    settings = Settings()
    try:
        data = np.load(args.real, mmap_mode="r")
    except (OSError, ValueError) as e:
        sys.exit(f"bench/vector.py: --real {args.real}: not a readable .npy ({e})")
    if data.ndim != 2 or data.shape[1] != 384:
        sys.exit(f"bench/vector.py: --real {args.real}: shape {data.shape}, expected (n, 384)")
    n = min(args.n, data.shape[0] - args.queries)
    if n < 1000:
        sys.exit(f"bench/vector.py: --real {args.real}: {data.shape[0]:,} rows, too few for --n and --queries")
    demo = demo_names()
    D = get_encoder(backend="torch", threads=1).encode(demo, batch_size=256)
    X = np.ascontiguousarray(np.vstack([np.asarray(data[:n], dtype=np.float32), D]))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    Q = np.array(data[data.shape[0] - args.queries:], dtype=np.float32)  # unseen names (a copy)
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    ids = [f"V{j}" for j in range(n)] + [f"D{j}" for j in range(len(demo))]
    print(f"{len(X):,} stored vectors: {n:,} real MiniLM name embeddings from {args.real.name} + "
          f"{len(demo)} demo names; {len(Q)} queries = further rows of the file, not stored; "
          f"BLAS threads {_THREADS}; Neo4j heap {settings.neo4j_heap} / page cache {settings.neo4j_pagecache}",
          flush=True)

    exact_ms, truth = exact_top10(X, Q, ids)
    e50, e95 = np.percentile(exact_ms, 50), np.percentile(exact_ms, 95)

    fresh_db(settings)
    rows_out = []
    with Graph(settings) as g:
        write(g, "bench_drop_entity_vector_index")
        t0 = time.perf_counter()
        for i in range(0, len(X), args.batch):
            write(g, "bench_store_vectors", rows=[{"id": ids[j], "vector": X[j].tolist()}
                                                 for j in range(i, min(i + args.batch, len(X)))])
        write_s = time.perf_counter() - t0
        print(f"wrote {len(X):,} nodes with vectors in {write_s:.1f} s", flush=True)
        from bench.scale_curve import cpu_seconds
        from kgqa.core.neo4j_local import LocalNeo4j

        server_pid = LocalNeo4j(settings).status().pid
        for cfg in configs:
            write(g, "bench_drop_entity_vector_index")
            t0, cpu0 = time.perf_counter(), cpu_seconds(server_pid)
            write(g, "bench_create_entity_vector_index", **cfg)
            g.await_indexes(timeout_s=3600)
            build_s = time.perf_counter() - t0
            build_cpu = cpu_seconds(server_pid) - cpu0     # the server's CPU seconds: on a busy machine, the cost
            got = read(g, "bench_entity_vector_index_config")[0]["config"]
            taken = (got.get("vector.hnsw.m"), got.get("vector.hnsw.ef_construction"),
                     got.get("vector.quantization.enabled"))
            label = f"m={cfg['m']} efc={cfg['ef_construction']} quant={'on' if cfg['quantization'] else 'off'}"
            if taken != (cfg["m"], cfg["ef_construction"], cfg["quantization"]):
                label += f" (Neo4j reports {taken})"
            for k in ks:
                rec, ms = index_recall(g, Q, truth, k)
                rows_out.append((label, k, float(np.mean(rec)), float(np.min(rec)), np.percentile(ms, 50),
                                 np.percentile(ms, 95), build_s, build_cpu))
                print(f"{label} k={k}: recall@10 {np.mean(rec):.3f}, p50 {np.percentile(ms, 50):.2f} ms "
                      f"(build {build_s:.1f} s, Neo4j CPU {build_cpu:.1f} s)", flush=True)
    fresh_db(settings)  # leave the local database empty with the schema's own index

    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"HNSW sweep · {len(X):,} real MiniLM name vectors (384-d, cosine) · {len(Q)} unseen-name "
                    f"queries · Neo4j 5.26, heap {settings.neo4j_heap} / page cache {settings.neo4j_pagecache}")
    for c in ("index setting", "k fetched", "recall@10", "min recall", "p50 ms", "p95 ms", "p50 vs exact",
              "build s", "build CPU s"):
        t.add_column(c, justify="left" if c == "index setting" else "right")
    t.add_row(f"exact numpy scan (X @ q, {_THREADS} thread)", "-", "1.000", "1.0", f"{e50:.2f}", f"{e95:.2f}",
              "1×", "-", "-")
    for label, k, rec, rmin, p50, p95, build_s, build_cpu in rows_out:
        t.add_row(label, str(k), f"{rec:.3f}", f"{rmin:.1f}", f"{p50:.2f}", f"{p95:.2f}",
                  f"1/{e50 / p50:.1f}" if p50 < e50 else f"{p50 / e50:.1f}× slower", f"{build_s:.1f}",
                  f"{build_cpu:.1f}")
    Console(width=150).print(t)
    print(f"write of the vectors: {write_s:.1f} s; goal: recall@10 ≥ 0.95 with k ≤ 20, p50 ≤ 1/20 of the exact scan")


if __name__ == "__main__":
    main()
