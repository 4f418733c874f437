"""Benchmark: entity-name embedding throughput of the encoder backends, side by side in one run.

    python -m bench.embed [--n 4000] [--rounds 3] [--cache-dir DIR]

Names: the 436 names of data/demo/wikidata5m_entity.txt plus N label-like names from
bench/load.py's generator (persons, places, "X (film)", taxa, "The X of Y"). Each variant
(backend × threads × batch size) encodes all of them, ``--rounds`` times, interleaved (so a
neighbour's load on the machine hits every variant alike); names/s is the best round and the
median, names/CPU-s the names per second of the process's own CPU time (unchanged by a busy
neighbour; a 2-thread variant reaches ~2× it on 2 idle cores at best). Today's path is the first row: torch, 1 thread (KGQA_TORCH_THREADS=1), batch 256 (the
loader's --embed-batch-size). Each variant's vectors are compared with that row's (fp32
torch): cosine min / mean / 1st percentile over all names. Asserts nothing; the ONNX
exports are made once into --cache-dir (default: the kgqa data dir's models/onnx).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def demo_names() -> list[str]:
    out = []
    for line in (ROOT / "data" / "demo" / "wikidata5m_entity.txt").read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) > 1 and parts[1].strip():
            out.append(parts[1].strip())
    return out


def generated_names(n: int, seed: int = 3) -> list[str]:
    from bench.load import _entity_name  # the generator of bench/load.py

    rng = np.random.default_rng(seed)
    pool: list[str] = []
    while len(pool) < n:
        pool.append(_entity_name(rng, pool))
    return pool


VARIANTS = [  # (backend, threads, batch)
    ("torch", 1, 256),
    ("torch", 2, 64),
    ("torch", 2, 256),
    ("onnx", 1, 64),
    ("onnx", 2, 64),
    ("onnx", 2, 256),
    ("onnx-int8", 1, 64),
    ("onnx-int8", 2, 64),
    ("onnx-int8", 2, 256),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4000, help="generated names (the 436 demo names come on top)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache-dir", type=Path, default=None)
    args = ap.parse_args()
    if args.n < 0 or args.rounds < 1:
        sys.exit("bench/embed.py: --n must be ≥ 0 and --rounds ≥ 1")

    from kgqa.core.config import Settings
    from kgqa.models.encoder import get_encoder, onnxruntime_available

    settings = Settings()
    cache = args.cache_dir or Path(settings.models_dir) / "onnx"
    names = demo_names() + generated_names(args.n)
    variants = [v for v in VARIANTS if v[0] == "torch" or onnxruntime_available()]
    if len(variants) < len(VARIANTS):
        print("onnxruntime is not installed (pip install 'kgqa[onnx]'): only the torch rows", file=sys.stderr)
    print(f"{len(names):,} names ({len(names) - args.n} demo + {args.n:,} generated, "
          f"mean {np.mean([len(s) for s in names]):.1f} chars); {args.rounds} rounds, interleaved; "
          f"{os.cpu_count()} cores; load average before {os.getloadavg()[0]:.2f}", flush=True)

    encoders, prep = {}, {}
    for backend in dict.fromkeys(v[0] for v in variants):
        t = time.perf_counter()
        enc = get_encoder(backend=backend, threads=1, cache_dir=cache)
        enc.encode(["warm-up"], threads=1)
        prep[backend] = time.perf_counter() - t
        encoders[backend] = enc
    rates: dict[tuple, list[float]] = {v: [] for v in variants}
    cpu_rates: dict[tuple, list[float]] = {v: [] for v in variants}  # names per CPU-second of this process
    vecs: dict[tuple, np.ndarray] = {}
    for r in range(args.rounds):
        for v in variants:
            backend, threads, batch = v
            enc = encoders[backend]
            enc.encode(names[:batch], batch_size=batch, threads=threads)  # warm this thread count / batch
            t, c = time.perf_counter(), time.process_time()
            out = enc.encode(names, batch_size=batch, threads=threads)
            rates[v].append(len(names) / (time.perf_counter() - t))
            cpu_rates[v].append(len(names) / max(time.process_time() - c, 1e-9))
            vecs.setdefault(v, out)
        print(f"round {r + 1}: " + ", ".join(f"{b}/{th}t/{bs}: {rates[(b, th, bs)][-1]:,.0f}"
                                             for b, th, bs in variants), flush=True)

    from rich.console import Console
    from rich.table import Table

    ref = vecs[variants[0]]
    base = max(rates[variants[0]])
    t = Table(title=f"Entity-name embeddings · all-MiniLM-L6-v2 · {len(names):,} names · names/s "
                    f"(best / median of {args.rounds}) · load average after {os.getloadavg()[0]:.2f}")
    for c in ("backend", "threads", "batch", "names/s best", "median", "× today", "names/CPU-s", "cos min",
              "cos mean", "cos p1", "prepare s"):
        t.add_column(c, justify="left" if c == "backend" else "right")
    for v in variants:
        cos = (vecs[v] * ref).sum(axis=1)
        best = max(rates[v])
        t.add_row(v[0] + (" (today)" if v == variants[0] else ""), str(v[1]), str(v[2]), f"{best:,.0f}",
                  f"{statistics.median(rates[v]):,.0f}", f"{best / base:.2f}×",
                  f"{statistics.median(cpu_rates[v]):,.0f}", f"{cos.min():.4f}",
                  f"{cos.mean():.4f}", f"{np.percentile(cos, 1):.4f}", f"{prep[v[0]]:.1f}")
    Console(width=150).print(t)
    print("names/CPU-s: names per second of this process's CPU time (median), a figure a busy neighbour "
          "on the machine does not change; names/s best: the least disturbed round.")
    print("prepare s: model load (+ the one-off ONNX export/quantisation when not cached) and a warm-up; "
          "cosine is to today's fp32 torch vectors. Goal: ≥ 3× today's names/s, cosine ≥ 0.99.")


if __name__ == "__main__":
    main()
