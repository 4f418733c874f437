"""Benchmark: loading Wikidata5M-format data into Neo4j, three ways, side by side.

    KGQA_NEO4J_HEAP=3g KGQA_NEO4J_PAGECACHE=3g python -m bench.load --wipe-local-db [--triples 1000000]

1. generates a Wikidata5M-format folder (``wikidata5m_entity.txt``, ``_relation.txt``,
   ``_transductive_{train,valid,test}.txt``) with a realistic skew: 822 relation types
   with Zipf frequencies, power-law head and tail degrees (a few hub entities such as
   "human" take a large share of tails), label-like names with aliases and some
   duplicate names, entity count = 0.223 × triples as in Wikidata5M;
2. kgqa's loader on an empty database: structure only (``--no-embeddings``), then the
   same command again (the cost of an idempotent re-run / resume), then the
   embedding phase on the entities of the first ``--embed-triples`` triples;
3. ``kgqa load wikidata5m --bulk`` (kgqa.loaders.wikidata5m.bulk: validation, the importer's CSV, the same
   ``neo4j-admin database import full``, the schema) on an empty database, structure only;
3b. the plain loader most users write, on an empty database with the same constraints:
   nodes in 10k-row ``UNWIND … MERGE``, facts per 10k-row chunk of the triple file,
   one ``UNWIND … MERGE (h) MERGE (t) MERGE (h)-[:TYPE]->(t)`` per relation type in the chunk;
4. ``neo4j-admin database import full`` from the Maven jars (the physical reference: an
   offline importer that writes store files directly; it builds no constraints or indexes).

It wipes the local server's ``neo4j`` database (``kgqa neo4j start``; KGQA_DATA_DIR) between
runs, so it refuses to run without ``--wipe-local-db``. Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench._common import write, write_typed

SYLLABLES = ("ka ri to an el mar sen lo vi da ber gen hal mo ra tek us in or al na be sto we li fa "
             "du po chi ran vel tor ma ki ne sa ro zu ha mi gor len dar fel kon bra tis").split()
KINDS = ("river", "village", "album", "film", "footballer", "painting", "genus", "band", "ship", "mountain")
REL_WORDS = ("place", "country", "member", "part", "author", "genre", "language", "owner", "location",
             "record", "label", "occupation", "position", "sport", "team", "award", "family", "parent",
             "taxon", "founder", "director", "cast", "producer", "series", "platform", "league", "employer",
             "religion", "mouth", "basin", "continent", "capital", "head", "office", "court", "party")
REL_FORMS = ("{w}", "{w} of", "has {w}", "{w} held", "{w} by", "main {w}", "original {w}", "{w} in")


# --------------------------------------------------------------------------- generator
def _word(rng) -> str:
    n = rng.integers(2, 4)
    return "".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), n)).capitalize()


def _entity_name(rng, pool: list[str]) -> str:
    if pool and rng.random() < 0.05:  # Wikidata has many equal labels ("John Smith", "Springfield")
        return pool[int(rng.integers(0, len(pool)))]
    r = rng.random()
    if r < 0.40:
        return f"{_word(rng)} {_word(rng)}"                        # person-like
    if r < 0.65:
        return _word(rng)                                           # place-like
    if r < 0.78:
        return f"{_word(rng)} ({KINDS[int(rng.integers(0, len(KINDS)))]})"
    if r < 0.90:
        return f"{_word(rng)} {_word(rng).lower()}"                 # taxon-like
    return f"The {_word(rng)} of {_word(rng)}"                      # work-like


def generate(dst: Path, n_triples: int, seed: int = 5) -> dict:
    rng = np.random.default_rng(seed)
    dst.mkdir(parents=True, exist_ok=True)
    n_ent = max(100, int(n_triples * 0.223))
    n_rel = 822
    qids = np.sort(rng.choice(np.arange(1, 80_000_000), size=n_ent, replace=False))
    pids = np.sort(rng.choice(np.arange(1, 9000), size=n_rel, replace=False))

    names: list[str] = []
    with open(dst / "wikidata5m_entity.txt", "w", encoding="utf-8") as fh:
        for q in qids:
            name = _entity_name(rng, names)
            names.append(name)
            k = int(min(rng.zipf(2.0) - 1, 6))
            aliases = [f"{name[0]}. {name.split(' ')[-1]}" if " " in name else name.lower()][:k]
            aliases += [_word(rng) for _ in range(k - len(aliases))]
            fh.write("\t".join([f"Q{q}", name, *aliases]) + "\n")
    rel_names = set()
    with open(dst / "wikidata5m_relation.txt", "w", encoding="utf-8") as fh:
        for p in pids:
            while True:
                form = REL_FORMS[int(rng.integers(0, len(REL_FORMS)))]
                w = REL_WORDS[int(rng.integers(0, len(REL_WORDS)))]
                name = form.format(w=w) if rng.random() < 0.5 else form.format(w=f"{w} {_word(rng).lower()}")
                if name not in rel_names:
                    rel_names.add(name)
                    break
            fh.write(f"P{p}\t{name}\n")

    # power-law degrees: ranks are shuffled so hubs are spread over the id range
    def zipf_weights(n, a):
        w = 1.0 / np.arange(1, n + 1) ** a
        return w / w.sum()

    head_rank = rng.permutation(n_ent)
    tail_rank = rng.permutation(n_ent)
    draw = int(n_triples * 1.3) + 1000
    h = head_rank[rng.choice(n_ent, size=draw, p=zipf_weights(n_ent, 0.6))]
    t = tail_rank[rng.choice(n_ent, size=draw, p=zipf_weights(n_ent, 1.0))]
    r = rng.choice(n_rel, size=draw, p=zipf_weights(n_rel, 1.1))
    keep = h != t
    h, r, t = h[keep], r[keep], t[keep]
    key = (h.astype(np.int64) * 1024 + r) * n_ent + t
    _, first = np.unique(key, return_index=True)
    first = np.sort(first)[:n_triples]  # unique facts, in random file order
    h, r, t = h[first], r[first], t[first]
    n = len(h)
    n_small = max(1, n // 2000)  # valid/test are tiny in the release too (5,163 each)
    bounds = {"train": (0, n - 2 * n_small), "valid": (n - 2 * n_small, n - n_small), "test": (n - n_small, n)}
    for split, (a, b) in bounds.items():
        with open(dst / f"wikidata5m_transductive_{split}.txt", "w") as fh:
            fh.write("".join(f"Q{qids[h[i]]}\tP{pids[r[i]]}\tQ{qids[t[i]]}\n" for i in range(a, b)))
    tail_deg = np.bincount(t, minlength=n_ent)
    return {"entities": n_ent, "relations": n_rel, "triples": n,
            "max_tail_degree": int(tail_deg.max()), "max_head_degree": int(np.bincount(h).max()),
            "relation_types_used": int(len(np.unique(r))), "unique_names": len(set(names))}


# --------------------------------------------------------------------------- database reset
def fresh_db(settings) -> None:
    """Stop the local server, delete its `neo4j` database, start it again, apply the schema."""
    from kgqa.core.graph import Graph
    from kgqa.core.neo4j_local import LocalNeo4j

    server = LocalNeo4j(settings)
    server.stop()
    for sub in ("databases/neo4j", "transactions/neo4j"):
        shutil.rmtree(settings.neo4j_home / "data" / sub, ignore_errors=True)
    server.start(wait_s=180)
    with Graph(settings) as g:
        g.apply_schema()
        g.await_indexes()


# --------------------------------------------------------------------------- the naive loader
def naive_load(graph, folder: Path, chunk: int = 10_000) -> dict[str, tuple[int, float]]:
    from kgqa.loaders.wikidata5m.files import find_files

    files = find_files(folder)
    out = {}
    def run(graph, query, **params):    # kgqa's loader query by name, the naive one from bench/cypher
        return write(graph, query, **params) if query.startswith("bench_") else graph.write(query, **params)

    for name, path, query in (("relations", files.relation, "load_relations"),
                              ("entities", files.entity, "bench_naive_entities")):
        t0 = time.perf_counter()
        n = 0
        rows = []
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                cols = line.rstrip("\n").split("\t")
                rows.append({"id": cols[0], "name": cols[1], "aliases": cols[2:]})
                if len(rows) == chunk:
                    run(graph, query, rows=rows)
                    n += len(rows)
                    rows = []
        if rows:
            run(graph, query, rows=rows)
            n += len(rows)
        out[name] = (n, time.perf_counter() - t0)
    t0 = time.perf_counter()
    n = 0
    for path in files.triples:
        with open(path) as fh:
            while True:
                lines = [fh.readline() for _ in range(chunk)]
                lines = [ln for ln in lines if ln]
                if not lines:
                    break
                by_type: dict[str, list] = {}
                for ln in lines:
                    hd, rel, tl = ln.rstrip("\n").split("\t")
                    by_type.setdefault(rel, []).append([hd, tl])
                for rel, pairs in by_type.items():
                    write_typed(graph, "bench_naive_facts", rel, {"pairs": pairs})
                n += len(lines)
    out["facts"] = (n, time.perf_counter() - t0)
    return out


# --------------------------------------------------------------------------- neo4j-admin import
def admin_import(settings, folder: Path, scratch: Path) -> dict:
    from kgqa.core.kg import label_keys
    from kgqa.loaders.wikidata5m.files import find_files

    files = find_files(folder)
    home = scratch / "admin-home"
    for d in ("conf", "data", "logs", "import", "run", "plugins"):
        (home / d).mkdir(parents=True, exist_ok=True)
    (home / "conf" / "neo4j.conf").write_text(
        f"server.directories.data={home / 'data'}\nserver.directories.logs={home / 'logs'}\n")
    t0 = time.perf_counter()
    imp = home / "import"
    with open(imp / "entities.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id:ID(Entity)", "name", "aliases:string[]", "label_keys:string[]", ":LABEL"])
        with open(files.entity, encoding="utf-8") as src:
            for line in src:
                cols = line.rstrip("\n").split("\t")
                w.writerow([cols[0], cols[1], ";".join(cols[2:]), ";".join(label_keys(cols[1], cols[2:])), "Entity"])
    with open(imp / "relations.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id:ID(Relation)", "name", "aliases:string[]", ":LABEL"])
        with open(files.relation, encoding="utf-8") as src:
            for line in src:
                cols = line.rstrip("\n").split("\t")
                w.writerow([cols[0], cols[1], ";".join(cols[2:]), "Relation"])
    with open(imp / "facts.csv", "w") as fh:
        fh.write(":START_ID(Entity),:TYPE,:END_ID(Entity)\n")
        for path in files.triples:
            with open(path) as src:
                for line in src:
                    fh.write(line.replace("\t", ","))
    csv_s = time.perf_counter() - t0
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")}
    cmd = [settings.java, "-cp", f"{settings.neo4j_jars}/*", "org.neo4j.cli.AdminTool", "database", "import",
           "full", f"--nodes={imp / 'entities.csv'}", f"--nodes={imp / 'relations.csv'}",
           f"--relationships={imp / 'facts.csv'}", "--overwrite-destination=true", f"--report-file={imp / 'import.report'}", "neo4j"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    import_s = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:], "csv_s": csv_s}
    tail = [ln.strip() for ln in proc.stdout.splitlines()
            if "IMPORT DONE" in ln or "Peak memory" in ln or re.match(r"^\s+\d+ (nodes|relationships)$", ln)]
    return {"csv_s": csv_s, "import_s": import_s, "log": tail}


# --------------------------------------------------------------------------- main
#: The phases of ``--bulk`` that load the structure (the importer's phase includes the server's stop and start).
BULK_STRUCTURE = ("validate + import CSV", "neo4j-admin import", "schema")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--triples", type=int, default=1_000_000)
    ap.add_argument("--embed-triples", type=int, default=20_000,
                    help="embed the entities of the first N triples (CPU encoding is the slow part)")
    ap.add_argument("--batch-size", type=int, default=10_000)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--skip", default="", help="comma list of: rerun,embed,naive,admin,bulk")
    ap.add_argument("--wipe-local-db", action="store_true", help="required: the local database is wiped")
    args = ap.parse_args()
    if not args.wipe_local_db:
        sys.exit("bench/load.py wipes the local Neo4j database (KGQA_DATA_DIR); pass --wipe-local-db")
    skip = set(filter(None, args.skip.split(",")))

    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    settings = Settings()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kgqa-bench-load-"))
    data = work / "wd5m"
    t0 = time.perf_counter()
    stats = generate(data, args.triples)
    print(f"generated {data} in {time.perf_counter() - t0:.1f} s: {stats}", flush=True)
    print(f"Neo4j heap {settings.neo4j_heap}, page cache {settings.neo4j_pagecache}; "
          f"torch threads {settings.torch_threads}; batch size {args.batch_size}; CPU cores {os.cpu_count()}",
          flush=True)

    rows: list[tuple[str, str, int, float]] = []  # loader, phase, rows, seconds
    admin = None
    if "admin" not in skip:
        admin = admin_import(settings, data, work)
        print(f"neo4j-admin import: {admin}", flush=True)

    if "bulk" not in skip:
        from kgqa.loaders.wikidata5m.bulk import bulk_load_wikidata5m

        fresh_db(settings)
        g = Graph(settings)
        t_bulk = time.perf_counter()
        brep, steps = bulk_load_wikidata5m(g, data, options=LoadOptions(embeddings=False,
                                                                          batch_size=args.batch_size))
        bulk_wall = time.perf_counter() - t_bulk
        assert not steps, steps
        for p in brep.phases:
            if p.name in BULK_STRUCTURE:
                rows.append(("kgqa --bulk", p.name, p.rows, p.seconds))
            if p.name == "neo4j-admin import":
                for part in ("server_stop_s", "importer_s", "server_start_s"):
                    rows.append(("kgqa --bulk", f"  of which {part.removesuffix('_s').replace('_', ' ')}", 0,
                                 p.detail.get(part, 0.0)))
        rows.append(("kgqa --bulk", "whole command (no descriptions/images/embeddings)", 0, bulk_wall))
        print(f"kgqa --bulk: {brep.counts} in {bulk_wall:.1f} s", flush=True)

    fresh_db(settings)
    with Graph(settings) as g:
        rep = load_wikidata5m(g, data, options=LoadOptions(embeddings=False, batch_size=args.batch_size))
        for p in rep.phases:
            if p.name in ("validate", "relations", "entities", "facts"):
                rows.append(("kgqa", p.name, p.rows, p.seconds))
        print(f"kgqa structure: {rep.counts}; facts neo4j_s {rep.phase('facts').detail}", flush=True)
        if "rerun" not in skip:
            rep2 = load_wikidata5m(g, data, options=LoadOptions(embeddings=False, batch_size=args.batch_size))
            for p in rep2.phases:
                if p.name in ("validate", "relations", "entities", "facts"):
                    rows.append(("kgqa re-run (resume: all done)", p.name, p.rows, p.seconds))
            assert rep2.counts == rep.counts, (rep.counts, rep2.counts)
        if "embed" not in skip:
            rep3 = load_wikidata5m(g, data, options=LoadOptions(limit=args.embed_triples, batch_size=args.batch_size,
                                                               embeddings=True))
            ph = rep3.phase("embed entities")
            rows.append(("kgqa embeddings", "load encoder", 0, rep3.phase("load encoder").seconds))
            rows.append(("kgqa embeddings", "embed relations", rep3.phase("embed relations").rows,
                         rep3.phase("embed relations").seconds))
            rows.append(("kgqa embeddings", "embed entities", ph.rows, ph.seconds))
            print(f"kgqa embed entities detail: {ph.detail}", flush=True)
            ia = rep3.phase("await indexes")
            rows.append(("kgqa embeddings", "await indexes", 0, ia.seconds))
        kgqa_counts = rep.counts

    if "naive" not in skip:
        fresh_db(settings)
        with Graph(settings) as g:
            res = naive_load(g, data)
            for phase, (n, s) in res.items():
                rows.append(("naive 10k UNWIND MERGE", phase, n, s))
            naive_counts = g.read("graph_counts")[0]
        print(f"naive: {naive_counts} (kgqa: {kgqa_counts})", flush=True)
    fresh_db(settings)  # leave the local database empty

    from rich.console import Console
    from rich.table import Table

    con = Console(width=130)
    t = Table(title=f"Loading {stats['triples']:,} triples / {stats['entities']:,} entities / 822 relations "
                    f"(Wikidata5M format, generated) · torch threads {settings.torch_threads}")
    for c in ("loader", "phase", "rows", "seconds", "rows/s"):
        t.add_column(c, justify="left" if c in ("loader", "phase") else "right")
    for loader, phase, n, s in rows:
        t.add_row(loader, phase, f"{n:,}", f"{s:.1f}", f"{n / s:,.0f}" if s > 0 and n else "")
    if admin and "import_s" in admin:
        n_all = stats["triples"] + stats["entities"] + stats["relations"]
        t.add_row("neo4j-admin import", "CSV conversion (Python)", f"{n_all:,}", f"{admin['csv_s']:.1f}", "")
        t.add_row("neo4j-admin import", "import full (nodes+facts)", f"{n_all:,}", f"{admin['import_s']:.1f}",
                  f"{n_all / admin['import_s']:,.0f}")
    con.print(t)

    def total(loader, phases=("validate", "relations", "entities", "facts")):
        return sum(s for lo, ph, _, s in rows if lo == loader and ph in phases)

    k = total("kgqa")
    lines = [f"kgqa structure total (validate+relations+entities+facts): {k:.1f} s"]
    if "naive" not in skip:
        nv = total("naive 10k UNWIND MERGE")
        lines.append(f"naive structure total: {nv:.1f} s → kgqa is {nv / k:.2f}× faster (goal ≥ 3×)")
        kf, nf = total("kgqa", ("facts",)), total("naive 10k UNWIND MERGE", ("facts",))
        lines.append(f"facts only: kgqa {kf:.1f} s vs naive {nf:.1f} s → {nf / kf:.2f}×")
    if admin and "import_s" in admin:
        lines.append(f"neo4j-admin import: {admin['import_s']:.1f} s (+{admin['csv_s']:.1f} s CSV) → kgqa takes "
                     f"{k / admin['import_s']:.2f}× the importer's time (goal ≤ 1.5×); importer log: {admin['log']}")
    elif admin:
        lines.append(f"neo4j-admin import failed: {admin.get('error')}")
    if "bulk" not in skip:
        b = total("kgqa --bulk", BULK_STRUCTURE)
        bs = total("kgqa --bulk", BULK_STRUCTURE[:2])
        bi = total("kgqa --bulk", ("  of which importer",))
        lines.append(f"kgqa --bulk structure (validate + CSV + import + schema): {b:.1f} s → {k / b:.1f}× faster "
                     f"than the Bolt loader (goal ≥ 10×)")
        if admin and "import_s" in admin:
            bare = admin["import_s"] + admin["csv_s"]
            lines.append(f"  against the bare importer on the same files (its CSV conversion + import, "
                         f"{bare:.1f} s): {b / bare:.2f}× with the schema, {bs / bare:.2f}× without it "
                         f"(goal ≤ 1.2×); the importer alone {bi:.1f} s in --bulk vs {admin['import_s']:.1f} s bare")
    for ln in lines:
        con.print(ln)
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
