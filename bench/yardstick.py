"""The yardstick: question sets nobody here tuned on, on their own KG and buried, in one run.

    .venv/bin/python -m bench.yardstick --entities 20000 --rows graph-only,paper-graph-only
    .venv/bin/python -m bench.yardstick --graphs more-dev,more-dev-buried-wl --gold-start
    .venv/bin/python -m bench.yardstick --baseline-src /tmp/before/src     # a "before" row per graph
    KGQA_ENCODER_BACKEND=model2vec .venv/bin/python -m bench.yardstick --graphs more-dev,demo --root DIR

With ``KGQA_ENCODER_BACKEND=model2vec`` the small graphs are loaded and asked with the static encoder (distilled
once under ``--root``); the manifest does not record the encoder, so give such a run a ``--root`` of its own.

Graphs (each on its own local Neo4j server, data dir ``<root>/<graph>``, built once; ``manifest.json``
records what was built and a re-run reuses it):

* ``demo``: the bundled demo KG, ``data/demo/questions.jsonl`` (a smoke test: its rules were fitted there);
* ``more-dev``: ``--more-dev`` (default ``../shared/datasets/more-dev``), 249 MORE questions over their own
  KG — no descriptions, no ``instance of``;
* ``<set>-buried``: the KG among ``--entities`` distractors by bench/scale_distractors.py (more-dev's local
  relation ids renamed to real PIDs of the same label for the generator and back,
  ``generate_for_kg``);
* ``<set>-buried-wl``: the KG among ``--entities`` distractors by bench/distractors_wikilike.py (heavy-
  tailed in- and out-degrees, incoming edges through the asked relations, distractors described with
  the asked type nouns).
Both generators' honesty (every gold answer unique and reachable by its gold chain; no distractor named
as a gold answer or alias) is asserted before anything is written.

Rows per graph: ``default`` (VisPath's defaults, the configured chat backend), ``paper`` (the paper's
literal reading, same backend), ``graph-only`` (defaults, ``KGQA_CHAT_BACKEND=none``: every LLM step on
its fallback — the floor), ``paper-graph-only``; ``--baseline-src DIR`` adds ``before`` (defaults,
graph-only, with ``kgqa`` imported from DIR, e.g. an older commit's ``src``). Columns: EM, SBERT@0.3,
start-entity accuracy, gold path retained, selection given retained (the gold path kept and chosen),
EM per hop; ``--gold-start`` gives the method the topic entity (path reasoning alone). Prints; asserts
nothing about accuracy. Threads: torch threads = KGQA_TORCH_THREADS (default 1), stated in the output.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from bench.scale import VARIANTS, graph_only_env, kgqa, reset_db, write_buried
from bench._common import ensure_built, rate

SETS = {"demo": (ROOT / "data" / "demo", None, ROOT / "data" / "demo" / "questions.jsonl")}
GRAPHS = ("demo", "demo-buried", "demo-buried-wl", "more-dev", "more-dev-buried", "more-dev-buried-wl")
ROWS = {  # label -> (VisPath options, graph-only)
    "default": ({}, False),
    "paper": (VARIANTS["paper"], False),
    "graph-only": ({}, True),
    "paper-graph-only": (VARIANTS["paper"], True),
}


def set_of(graph: str) -> str:
    return "more-dev" if graph.startswith("more-dev") else "demo"


def generator_of(graph: str) -> str | None:
    return "wikilike" if graph.endswith("-wl") else "scale" if graph.endswith("-buried") else None


def port_of(graph: str, args) -> tuple[int, int]:
    """The small graphs on --bolt/--http; each generator's buried graphs on a port pair of their own."""
    gen = generator_of(graph)
    return {None: (args.bolt, args.http), "scale": (args.bolt_a, args.http_a),
            "wikilike": (args.bolt_b, args.http_b)}[gen]


def settings_for(graph: str, args):
    from kgqa.core.config import Settings

    bolt, http = port_of(graph, args)
    big = generator_of(graph) is not None
    return Settings(data_dir=args.root / graph, neo4j_bolt_port=bolt, neo4j_http_port=http,
                    neo4j_uri=f"bolt://127.0.0.1:{bolt}", neo4j_heap=args.heap if big else "512m",
                    neo4j_pagecache=args.pagecache if big else "256m")


def env_for(graph: str, args, graph_only: bool) -> dict:
    s = settings_for(graph, args)
    env = {**os.environ, "KGQA_DATA_DIR": str(s.data_dir), "KGQA_NEO4J_BOLT_PORT": str(s.neo4j_bolt_port),
           "KGQA_NEO4J_HTTP_PORT": str(s.neo4j_http_port), "NEO4J_URI": s.neo4j_uri,
           "KGQA_NEO4J_HEAP": s.neo4j_heap, "KGQA_NEO4J_PAGECACHE": s.neo4j_pagecache,
           "KGQA_TORCH_THREADS": os.environ.get("KGQA_TORCH_THREADS", "1")}
    if graph_only:
        env.update(graph_only_env())
    return env


def load_argv(graph: str) -> list[str]:
    kg, images, _ = SETS[set_of(graph)]
    return ["--path", str(kg)] + (["--images", str(images)] if images else [])


def questions_of(graph: str) -> list[dict]:
    return [json.loads(line) for line in open(SETS[set_of(graph)][2], encoding="utf-8") if line.strip()]


# --------------------------------------------------------------------------- build
def manifest_key(graph: str, args) -> dict:
    from bench import distractors_wikilike
    from bench import scale_distractors

    kg = SETS[set_of(graph)][0]
    h = hashlib.sha256()
    for f in sorted(kg.glob("wikidata5m_*.txt")):
        h.update(f.read_bytes())
    key = {"graph": graph, "kg": h.hexdigest()[:16]}
    gen = generator_of(graph)
    if gen == "scale":
        key.update(generator=f"scale v{scale_distractors.GENERATOR_VERSION}", entities=args.entities,
                   facts=int(args.entities * 3.65), seed=args.seed)
    elif gen == "wikilike":
        key.update(generator=f"wikilike v{distractors_wikilike.GENERATOR_VERSION}", entities=args.entities,
                   seed=args.seed)
    return key


def generate(graph: str, args) -> tuple[dict, dict]:
    """The distractors of a buried graph and the honesty figures (asserted)."""
    kg = SETS[set_of(graph)][0]
    qs = questions_of(graph)
    if generator_of(graph) == "wikilike":
        from bench import distractors_wikilike as wl

        g = wl.generate(kg, qs, n_entities=args.entities, seed=args.seed)
        return g, wl.check(g, qs)
    from bench import scale_distractors as sd

    kw = dict(n_entities=args.entities, n_facts=int(args.entities * 3.65), max_out=3000, seed=args.seed)
    if kg == SETS["demo"][0]:
        g = sd.generate(kg, **kw)
    else:
        g = sd.generate_for_kg(kg, SETS["demo"][0], args.root / "tmp" / graph, **kw)
    honest = sd.check_honest(g["demo"], g["facts"])
    honest["gold_chains_checked"] = sd.gold_chains_unique(g["demo"], g["facts"], qs)
    # scale_distractors keeps off the KG's names and aliases, not a question set's answer aliases (MORE's
    # direct_answers: "Opel"): such a distractor gets a suffix, then the check below holds by construction
    gold = {a.casefold() for q in qs for a in [q["answer"], *q.get("aliases", [])]}
    g["names"] = [f"{n} (distractor)" if n.casefold() in gold else n for n in g["names"]]
    dnames = {n.casefold() for n in g["names"]}
    for q in qs:                       # an exact match must never be a distractor's name
        for a in [q["answer"], *q.get("aliases", [])]:
            assert a.casefold() not in dnames, f"{q['id']}: a distractor is named {a!r}"
    return g, honest


def static_encoder(s, args, env: dict) -> None:
    """With KGQA_ENCODER_BACKEND=model2vec, the graph's fresh data dir gets the static encoder, distilled once
    under ``--root`` (``kgqa encoder distil``, cached) and copied: the load and the questions use it."""
    if env.get("KGQA_ENCODER_BACKEND") != "model2vec":
        return
    kgqa({**env, "KGQA_DATA_DIR": str(args.root)}, "encoder", "distil")
    shutil.copytree(args.root / "models" / "model2vec", s.models_dir / "model2vec", dirs_exist_ok=True)


def build(graph: str, args) -> dict:
    from kgqa.core.neo4j_local import LocalNeo4j

    s = settings_for(graph, args)
    env = env_for(graph, args, graph_only=False)
    if generator_of(graph) is None:
        reset_db(s)
        static_encoder(s, args, env)
        LocalNeo4j(s).start(wait_s=300)
        t0 = time.perf_counter()
        kgqa(env, "load", "wikidata5m", *load_argv(graph))
        return {"load_s": round(time.perf_counter() - t0, 1)}
    t0 = time.perf_counter()
    g, honest = generate(graph, args)
    gen_s = time.perf_counter() - t0
    print(f"  {graph}: {len(g['ids']):,} distractors, {len(g['facts']):,} distractor facts "
          f"({g['demo_headed']:,} leaving KG entities) in {gen_s:.0f} s; {honest}", flush=True)
    info = write_buried(g, s, args, env, load_argv(graph))
    return {**honest, **info, "generate_s": round(gen_s, 1)}


def ensure(graph: str, args) -> None:
    ensure_built(settings_for(graph, args), manifest_key(graph, args), lambda: build(graph, args), graph,
                 rebuild=args.rebuild)


# --------------------------------------------------------------------------- evaluate
def evaluate(graph: str, label: str, options: dict, graph_only: bool, args, src: Path | None = None) -> dict:
    out = args.root / "reports" / f"{graph}.{label}{'.gold' if args.gold_start else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = ["eval", str(SETS[set_of(graph)][2]), "--method", "vispath", "--quiet", "--out", str(out), "--json"]
    if args.limit:
        argv += ["--limit", str(args.limit)]
    if args.gold_start:
        argv.append("--gold-start")
    for k, v in options.items():
        argv += ["-o", f"{k}={v}"]
    env = env_for(graph, args, graph_only)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    t0 = time.perf_counter()
    proc = kgqa(env, *argv, check=False)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]}
    rep = json.loads(out.read_text())
    rep["wall_s"] = time.perf_counter() - t0
    return rep


def print_table(results: list[tuple[str, str, dict]]) -> None:
    hops = sorted({h for _, _, r in results for h in r.get("by_hops", {}) if h.isdigit()}, key=int)
    cols = ["graph", "row", "n", "EM", "SBERT", "start", "path", "sel|path"] + [f"EM {h}h" for h in hops] + \
        [f"sel {h}h" for h in hops] + ["s/q", "fail"]
    width = [20, 17, 5, 7, 7, 7, 7, 10] + [8] * (2 * len(hops)) + [7, 6]
    print("".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cols, width))))
    print("-" * sum(width))
    for graph, label, rep in results:
        if "error" in rep:
            print(f"{graph:<20}{label:<17}  error: {rep['error'][0][:100]}")
            continue
        o, bh = rep["overall"], rep["by_hops"]
        vals = [str(o["n"]), rate(o["exact_match"], 0), rate(o["sbert@0.3"], 0), rate(o["start_entity"], 0),
                rate(o["gold_path"], 0), rate(o.get("selected"), 0)]
        vals += [rate(bh.get(h, {}).get("exact_match"), 0) for h in hops]
        vals += [rate(bh.get(h, {}).get("selected"), 0) for h in hops]
        vals += [f"{o['latency_s']['mean'] or 0:.2f}", str(o["failed"])]
        print(f"{graph:<20}{label:<17}" + "".join(v.rjust(w) for v, w in zip(vals, width[2:])))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default=",".join(GRAPHS), help=f"comma list of {', '.join(GRAPHS)}")
    ap.add_argument("--rows", default=",".join(ROWS), help=f"comma list of {', '.join(ROWS)}")
    ap.add_argument("--baseline-src", type=Path, default=None,
                    help="add a 'before' row: defaults, graph-only, kgqa imported from this src folder")
    ap.add_argument("--gold-start", action="store_true", help="give the method the topic entity (kgqa eval "
                    "--gold-start): path reasoning alone")
    ap.add_argument("--limit", type=int, default=None, help="first N questions of each set")
    ap.add_argument("--more-dev", type=Path, default=ROOT.parent / "shared" / "datasets" / "more-dev")
    ap.add_argument("--root", type=Path, default=ROOT / ".kgqa" / "yardstick")
    ap.add_argument("--bolt", type=int, default=46687)
    ap.add_argument("--http", type=int, default=46474)
    ap.add_argument("--bolt-a", type=int, default=56687, help="Bolt port of the scale_distractors graphs")
    ap.add_argument("--http-a", type=int, default=56474)
    ap.add_argument("--bolt-b", type=int, default=57687, help="Bolt port of the wikilike graphs")
    ap.add_argument("--http-b", type=int, default=57474)
    ap.add_argument("--heap", default="1g", help="heap of the buried graphs' servers (small ones: 512m)")
    ap.add_argument("--pagecache", default="1g")
    ap.add_argument("--entities", type=int, default=200_000, help="distractors per buried graph")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--build-only", action="store_true")
    args = ap.parse_args()
    args.root = args.root.resolve()
    md = args.more_dev.resolve()
    SETS["more-dev"] = (md / "kg", md / "kg" / "images", md / "questions.jsonl")
    graphs = [g for g in args.graphs.split(",") if g]
    rows = [r for r in args.rows.split(",") if r]
    for g in graphs:
        if g not in GRAPHS:
            raise SystemExit(f"--graphs: unknown graph {g!r} ({', '.join(GRAPHS)})")
    for r in rows:
        if r not in ROWS:
            raise SystemExit(f"--rows: unknown row {r!r} ({', '.join(ROWS)})")
    if any(set_of(g) == "more-dev" for g in graphs) and not SETS["more-dev"][2].exists():
        raise SystemExit(f"--more-dev: {SETS['more-dev'][2]} not found")
    if args.baseline_src is not None and not (args.baseline_src / "kgqa").is_dir():
        raise SystemExit(f"--baseline-src: {args.baseline_src} has no kgqa package")

    from kgqa.core.neo4j_local import LocalNeo4j

    for g in graphs:
        ensure(g, args)
    if args.build_only:
        return
    plan = [(r, *ROWS[r], None) for r in rows]
    if args.baseline_src is not None:
        plan.append(("before", {}, True, args.baseline_src.resolve()))
    results = []
    for g in graphs:
        server = LocalNeo4j(settings_for(g, args))
        server.start(wait_s=300)
        try:
            for label, opts, graph_only, src in plan:
                rep = evaluate(g, label, opts, graph_only, args, src)
                results.append((g, label, rep))
                print(f"  {g} · {label}: done ({rep.get('wall_s', 0):.0f} s)", file=sys.stderr, flush=True)
        finally:
            server.stop()
    load = os.getloadavg()
    print()
    print(f"kgqa eval --method vispath{' --gold-start' if args.gold_start else ''}"
          f"{' --limit %d' % args.limit if args.limit else ''}; graph-only rows: "
          f"{' '.join(f'{k}={v}' for k, v in graph_only_env().items())}; other rows: KGQA_CHAT_BACKEND="
          f"{os.environ.get('KGQA_CHAT_BACKEND', 'local (default)')}; torch threads "
          f"{os.environ.get('KGQA_TORCH_THREADS', '1')}, one question at a time, {os.cpu_count()} CPUs shared, "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    for g in graphs:
        b = json.loads((args.root / g / "manifest.json").read_text())
        if "counts" in b["built"]:
            c, k = b["built"]["counts"], b["key"]
            print(f"  {g}: {k['generator']}, {k['entities']:,} distractors → {c['entities']:,} entities · "
                  f"{c['facts']:,} facts · {c['relations']} relations; max out-degree "
                  f"{b['built']['max_out_degree']:,} (KG entities: max {b['built']['demo_max_out']:,}, median "
                  f"{b['built']['demo_median_out']})"
                  + (f"; max in-degree of a KG entity {b['built']['kg_max_in']:,}" if "kg_max_in" in b["built"]
                     else ""))
    print_table(results)
    print("EM = exact match (aliases accepted), SBERT = SBERT@0.3, start = start-entity accuracy, path = gold "
          "path among the retained paths, sel|path = of those, the gold path chosen (selection given retained), "
          "EM/sel N h = on the N-hop questions, s/q = mean seconds per question")


if __name__ == "__main__":
    main()
