"""Benchmark: the scale curve of a first load, and its projection to the whole Wikidata5M.

    KGQA_NEO4J_HEAP=2g KGQA_NEO4J_PAGECACHE=2g .venv/bin/python -m bench.scale_curve --wipe-local-db \
        --entities 250000,1000000

The 1M twin (issue 61; bench/twin.py's files, descriptions and 1,000 images included), with the static
name vectors (``kgqa encoder distil`` first):

    KGQA_NEO4J_HEAP=2g KGQA_NEO4J_PAGECACHE=2g .venv/bin/python -m bench.scale_curve --wipe-local-db \
        --twin --entities 1000000 --embedder model2vec --no-bare

For each size, smallest first:

1. generates a Wikidata5M-format folder with bench/load.py's generator (822 relations with Zipf
   frequencies, power-law degrees, label-like names with aliases; triples = entities / 0.223 as in
   Wikidata5M; no descriptions or images, which the generator does not make), or with ``--twin``
   bench/twin.py's (the release's degree shape, descriptions, images for 1,000 entities);
2. wipes the local server's ``neo4j`` database (KGQA_DATA_DIR) and runs the first load a user runs,
   ``kgqa load wikidata5m --bulk`` with embeddings (kgqa.loaders.wikidata5m.bulk: validation, the importer's CSV,
   ``neo4j-admin database import full``, the schema, then every entity and relation name embedded
   with the default encoder on every core into the vector indexes);
3. records each phase's seconds, the store's size on disk, the Neo4j process's resident memory (and its
   peak, VmHWM), this process's peak memory (the loader runs in it), and
   the heap and page cache it was given; then (unless ``--no-bare``) runs the baseline on the same
   files, bench/load.py's plain CSV conversion and ``neo4j-admin database import full`` into a home
   of its own, for the "structure ÷ bare" line;
4. times queries on the loaded graph, 200 each after 20 untimed: the entity-name vector search of
   entity linking (top 10 through ``entity_name_embedding``, queries = the embeddings of random
   entities' names), and VisPath's one-hop first cut (``cypher/vispath_frontier_edges``) from random
   entities and from the 1 % with the most out-edges.

Then a table per size and a projection to 4,594,485 entities / 20,614,279 triples: each phase's rate
(rows per second) at the largest size measured, applied to the full counts (linear; the assumption
is stated in the output). Each size's figures are also written as JSON lines to ``--out``. Wipes the
database between sizes and leaves the last one loaded; refuses to run without ``--wipe-local-db``.
Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


FULL_ENTITIES = 4_594_485
FULL_TRIPLES = 20_614_279


def du_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def rss_bytes(pid: int | None) -> int:
    if not pid:
        return 0
    try:
        out = subprocess.run(["ps", "-o", "rss=", "-p", str(pid)], capture_output=True, text=True).stdout
        return int(out.strip() or 0) * 1024
    except (OSError, ValueError):
        return 0


def percentiles(xs: list[float]) -> tuple[float, float]:
    a = np.asarray(xs) * 1000.0
    return float(np.percentile(a, 50)), float(np.percentile(a, 95))


def sample_entities(data: Path, k: int, seed: int) -> list[tuple[str, str]]:
    """k random (id, name) lines of the generated entity file."""
    lines = (data / "wikidata5m_entity.txt").read_text(encoding="utf-8").splitlines()
    rng = random.Random(seed)
    return [tuple(ln.split("\t")[:2]) for ln in rng.sample(lines, k)]


def time_queries(graph, encoder, data: Path, n: int = 200, warm: int = 20, seed: int = 7,
                 vectors: bool = True) -> dict:
    """ms p50/p95 of entity-name vector search and of the one-hop first cut, on the loaded graph."""
    rng = random.Random(seed)
    ents = sample_entities(data, n + warm, seed)
    total = graph.read("graph_counts")[0]["entities"]
    degs = []                     # the out-degree scan bench/hops.py pages through
    for skip in range(0, total, 250_000):
        degs += [(r["id"], r["degree"]) for r in graph.read("vispath_entity_degrees", skip=skip, limit=250_000)]
    degs.sort(key=lambda x: -x[1])
    hubs = [i for i, _ in degs[: max(1, total // 100)]]
    vecs = encoder.encode([name for _, name in ents])
    rel_scores = {r["id"]: rng.random() for r in graph.read("kg_relation_catalogue")}

    def run(fn, items):
        ts = []
        for i, it in enumerate(items):
            t = time.perf_counter()
            fn(it)
            if i >= warm:
                ts.append(time.perf_counter() - t)
        return percentiles(ts)

    out = {"vector_top10_ms": (run(lambda v: graph.read("entity_vector_search", k=10, vector=v.tolist()), vecs)
                               if vectors else (float("nan"), float("nan")))}
    cut = dict(relation_scores=rel_scores, intent=vecs[0].tolist(), pre_cap=2000, cap=200, hidden=[],
               per_relation=20)
    out["hop_random_ms"] = run(lambda e: graph.read("vispath_frontier_edges", frontier=[e[0]], **cut), ents)
    out["hop_hub_ms"] = run(lambda h: graph.read("vispath_frontier_edges", frontier=[h], **cut),
                            [hubs[i % len(hubs)] for i in range(n + warm)])
    out["hubs"] = len(hubs)
    return out


def peak_rss_bytes(pid: int | None) -> int:
    """A process's peak resident memory (VmHWM), 0 when unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, TypeError):
        pass
    return 0


def count_twin(data: Path) -> dict:
    """{entities, triples} of an existing Wikidata5M-format folder (lines counted)."""
    def lines(p: Path) -> int:
        with open(p, "rb") as fh:
            return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))
    return {"entities": lines(data / "wikidata5m_entity.txt"),
            "triples": sum(lines(p) for p in data.glob("wikidata5m_transductive_*.txt"))}


def cpu_seconds(pid: int | None) -> float:
    """user + system CPU seconds of a running process (its threads included), 0 when unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, TypeError):
        return 0.0


def one_size(n_entities: int, settings, work: Path, batch_size: int, embed: bool = True, bare: bool = True,
             twin: bool = False, data: Path | None = None) -> dict:
    from bench import twin as twin_gen
    from bench.load import admin_import, fresh_db, generate

    from kgqa.core.graph import Graph
    from kgqa.loaders.wikidata5m.bulk import bulk_load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions
    from kgqa.models.encoder import encoder_for
    from kgqa.core.neo4j_local import LocalNeo4j

    t0 = time.perf_counter()
    if data is not None:                          # an existing folder (--data): read, not generated
        stats = count_twin(data)
    else:
        data = work / f"wd5m-{n_entities}"
        stats = twin_gen.generate(data, n_entities) if twin else generate(data, int(round(n_entities / 0.223)))
    gen_s = time.perf_counter() - t0
    print(f"[{n_entities:,}] generated {stats} in {gen_s:.0f} s", flush=True)
    fresh_db(settings)
    g = Graph(settings)
    import resource

    t0, cpu0, load0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF), os.getloadavg()
    rep, steps = bulk_load_wikidata5m(g, data, options=LoadOptions(embeddings=embed, batch_size=batch_size, progress=True))
    wall = time.perf_counter() - t0
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    assert not steps, steps
    phases = {p.name: (p.rows, round(p.seconds, 1)) for p in rep.phases}
    detail = {p.name: {k: round(v, 1) if isinstance(v, float) else v for k, v in p.detail.items()}
              for p in rep.phases if p.detail}          # e.g. embed entities: encode_s vs neo4j_write_s
    print(f"[{n_entities:,}] loaded in {wall:.0f} s: {phases}", flush=True)
    server = LocalNeo4j(settings)
    db = settings.neo4j_home / "data"
    row = {"entities": stats["entities"], "triples": stats["triples"], "counts": rep.counts,
           "phases": phases, "detail": detail, "wall_s": round(wall, 1),
           "store_bytes": du_bytes(db / "databases" / "neo4j"), "tx_bytes": du_bytes(db / "transactions" / "neo4j"),
           "neo4j_rss_bytes": rss_bytes(server.status().pid), "neo4j_peak_rss_bytes": peak_rss_bytes(server.status().pid),
           "loader_peak_rss_bytes": peak_rss_bytes(os.getpid()), "generator": "twin" if twin else "load",
           "loader_cpu_s": round(me.ru_utime + me.ru_stime - cpu0.ru_utime - cpu0.ru_stime, 1),
           "importer_cpu_s": round(kids.ru_utime + kids.ru_stime, 1), "importer_peak_rss_bytes": kids.ru_maxrss * 1024,
           "neo4j_cpu_s_after_import": round(cpu_seconds(server.status().pid), 1),
           "loadavg_start": [round(x, 1) for x in load0], "loadavg_end": [round(x, 1) for x in os.getloadavg()],
           "generate_s": round(gen_s, 1),
           "heap": settings.neo4j_heap, "pagecache": settings.neo4j_pagecache,
           "load_threads": os.environ.get("KGQA_LOAD_THREADS", "0 (all cores)"),
           "encoder": os.environ.get("KGQA_ENCODER_BACKEND", "auto"), "embeddings": embed}
    with Graph(settings) as g2:
        row["queries"] = time_queries(g2, encoder_for(settings), data, vectors=embed)
    row["neo4j_rss_after_queries_bytes"] = rss_bytes(server.status().pid)
    if bare:        # the baseline on the same files: a plain CSV conversion and the importer, in a home of its own
        scratch = work / f"bare-{n_entities}"
        b = admin_import(settings, data, scratch)
        shutil.rmtree(scratch, ignore_errors=True)
        row["bare"] = {"csv_s": round(b.get("csv_s", 0.0), 1), "import_s": round(b.get("import_s", 0.0), 1),
                       "error": b.get("error")}
    print(f"[{n_entities:,}] {json.dumps(row)}", flush=True)
    return row


def gib(b: int) -> str:
    return f"{b / 2**30:.2f}"


def print_tables(rows: list[dict]) -> None:
    names = ["validate + import CSV", "validate", "write import CSV", "entity CSV", "neo4j-admin import", "schema", "descriptions",
             "images", "load encoder",
             "embed relations", "embed entities", "build vector index", "await indexes"]   # validate / write import CSV: rows of
    names = [n for n in names if any(n in r["phases"] for r in rows)]   # runs before the single pass
    print()
    print("Phase seconds (rows) per size")
    print(f"{'phase':<22}" + "".join(f"{r['entities']:>22,}" for r in rows))
    for n in names:
        cells = []
        for r in rows:
            rs = r["phases"].get(n)
            cells.append(f"{rs[1]:>10.1f} ({rs[0]:>9,})" if rs else f"{'–':>22}")
        print(f"{n:<22}" + "".join(f"{c:>22}" for c in cells))
    print(f"{'whole command':<22}" + "".join(f"{r['wall_s']:>22.1f}" for r in rows))
    if any("bare" in r for r in rows):
        def structure(r):
            return sum(r["phases"].get(n, (0, 0.0))[1] for n in ("validate + import CSV", "neo4j-admin import", "schema"))

        def bare(r):
            return r["bare"]["csv_s"] + r["bare"]["import_s"] if r.get("bare") and not r["bare"].get("error") else 0.0
        print(f"{'bare CSV + importer':<22}" + "".join(
            f"{bare(r):>22.1f}" if bare(r) else f"{'–':>22}" for r in rows))
        print(f"{'structure ÷ bare':<22}" + "".join(
            f"{structure(r) / bare(r):>21.2f}×" if bare(r) else f"{'–':>22}" for r in rows)
              + "   (validate + import CSV + neo4j-admin import with the server's stop and start + schema)")
    print()
    print(f"{'entities':>10} {'triples':>11} {'store GiB':>10} {'tx GiB':>7} {'RSS GiB':>8} {'peak Neo4j/loader':>18} "
          f"{'heap/pc':>9} "
          f"{'vector p50/p95 ms':>18} {'hop random p50/p95':>19} {'hop hub p50/p95':>16}")
    for r in rows:
        q = r["queries"]
        print(f"{r['entities']:>10,} {r['triples']:>11,} {gib(r['store_bytes']):>10} {gib(r['tx_bytes']):>7} "
              f"{gib(r['neo4j_rss_bytes']):>8} "
              f"{gib(r.get('neo4j_peak_rss_bytes', 0)) + '/' + gib(r.get('loader_peak_rss_bytes', 0)):>18} "
              f"{r['heap'] + '/' + r['pagecache']:>9} "
              + (f"{q['vector_top10_ms'][0]:>8.1f}/{q['vector_top10_ms'][1]:<9.1f} "
                 if q["vector_top10_ms"][0] == q["vector_top10_ms"][0] else f"{'– (no vectors)':>18} ")
              + f"{q['hop_random_ms'][0]:>8.1f}/{q['hop_random_ms'][1]:<10.1f} "
              f"{q['hop_hub_ms'][0]:>7.1f}/{q['hop_hub_ms'][1]:<8.1f}")


def projection(rows: list[dict]) -> None:
    """Each phase as seconds = fixed + rate × rows, fitted through the two largest sizes (with one size:
    through zero), rows = triples for validation, CSV and import, entities for the schema and embeddings."""
    full = {"validate + import CSV": FULL_TRIPLES, "entity CSV": FULL_ENTITIES, "neo4j-admin import": FULL_TRIPLES,
            "schema": FULL_ENTITIES, "embed entities": FULL_ENTITIES, "build vector index": FULL_ENTITIES,
            "await indexes": FULL_ENTITIES}

    def size(r, phase):
        return r["triples"] if full[phase] == FULL_TRIPLES else r["entities"]

    pts = rows[-2:]
    emb_rows = [r for r in rows if r.get("embeddings", True)]
    how = (f"a line through the {pts[0]['entities']:,}- and {pts[1]['entities']:,}-entity runs" if len(pts) == 2
           else f"proportional to the {pts[0]['entities']:,}-entity run")
    print()
    print(f"Projection to {FULL_ENTITIES:,} entities / {FULL_TRIPLES:,} triples: each phase's seconds as {how} "
          "(rows = triples for validation, CSV and import; entities for the schema and the embeddings). "
          "Assumptions: the same 2 cores, heap, page cache and encoder; real Wikidata5M also has descriptions "
          "(one more Bolt phase, about one write per entity) and images; HNSW insertion grows a little faster "
          "than linearly, so the embedding figure is a lower bound.")
    total = 0.0
    for phase, n_full in full.items():
        use = pts
        if phase in ("embed entities", "build vector index", "await indexes") and not all(
                phase in r["phases"] for r in pts):
            use = emb_rows[-1:]            # proportional to the largest size that has embeddings
        if not use or not all(phase in r["phases"] for r in use):
            continue
        if len(use) == 2:
            (x0, y0), (x1, y1) = [(size(r, phase), r["phases"][phase][1]) for r in use]
            b = (y1 - y0) / (x1 - x0) if x1 != x0 else 0.0
            sec = max(0.0, y1 + b * (n_full - x1))
        else:
            sec = use[0]["phases"][phase][1] * n_full / size(use[0], phase)
        total += sec
        src = "" if use is pts else f"  (proportional to the {use[0]['entities']:,}-entity run)"
        print(f"  {phase:<22} {sec / 60:>8.1f} min{src}")
    big = rows[-1]
    vectors = "" if big.get("embeddings", True) else (
        f" + {gib(FULL_ENTITIES * 384 * 4)} GiB of name vectors (384 float32 per entity; the "
        f"{big['entities']:,}-entity run loaded none) and their HNSW index")
    print(f"  {'total':<22} {total / 3600:>8.2f} h   store ≈ {gib(int(big['store_bytes'] * FULL_TRIPLES / big['triples']))}"
          f" GiB (proportional to triples){vectors}; transaction logs come on top")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", default="250000,1000000", help="comma list of sizes, smallest first")
    ap.add_argument("--batch-size", type=int, default=10_000)
    ap.add_argument("--embed-max", type=int, default=None, help="sizes above this load without embeddings "
                    "(structure, disk and hop latency only; the projection takes the embedding rate from the "
                    "largest size that has them)")
    ap.add_argument("--resume", type=Path, default=None, help="JSON lines of sizes already measured (--out of an "
                    "earlier run): those sizes are read, not loaded again")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--no-bare", action="store_true", help="skip the bare importer baseline on each size's files")
    ap.add_argument("--out", type=Path, default=Path(".kgqa") / "scale_curve.jsonl")
    ap.add_argument("--twin", action="store_true", help="bench/twin.py's files (descriptions and images too)")
    ap.add_argument("--data", type=Path, default=None, help="an existing Wikidata5M-format folder (e.g. a twin made "
                    "by bench/twin.py) loaded as the one size, instead of generating one")
    ap.add_argument("--embedder", default=None, help="KGQA_ENCODER_BACKEND for the load and the queries "
                    "(e.g. model2vec, after `kgqa encoder distil`)")
    ap.add_argument("--wipe-local-db", action="store_true", help="required: the local database is wiped")
    args = ap.parse_args()
    if args.embedder:
        os.environ["KGQA_ENCODER_BACKEND"] = args.embedder
    if not args.wipe_local_db:
        sys.exit("bench/scale_curve.py wipes the local Neo4j database (KGQA_DATA_DIR); pass --wipe-local-db")
    sizes = [int(x) for x in args.entities.split(",") if x.strip()]

    from kgqa.core.config import Settings

    settings = Settings()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kgqa-bench-curve-"))
    print(f"Neo4j heap {settings.neo4j_heap}, page cache {settings.neo4j_pagecache}; CPU cores {os.cpu_count()}; "
          f"load threads {os.environ.get('KGQA_LOAD_THREADS', '0 (all)')}; encoder "
          f"{os.environ.get('KGQA_ENCODER_BACKEND', 'auto')}; load average {os.getloadavg()[0]:.1f}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(ln) for ln in args.resume.read_text().splitlines() if ln.strip()] if args.resume else []
    done = {r["entities"] for r in rows}
    for n in sizes:
        if any(abs(d - n) <= 1 for d in done):
            continue
        row = one_size(n, settings, work, args.batch_size, embed=args.embed_max is None or n <= args.embed_max,
                       bare=not args.no_bare, twin=args.twin, data=args.data)
        rows.append(row)
        with open(args.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
        print_tables(rows)
    projection(rows)
    print(f"load average after {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
