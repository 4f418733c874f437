"""Scale check: the demo questions on the demo KG and on the same KG buried in Wikidata-sized hubs.

    .venv/bin/python -m bench.scale                       # build once (cached), then evaluate both KGs
    .venv/bin/python -m bench.scale --variants paper,default --limit 10
    .venv/bin/python -m bench.scale --kgs buried --variants default

Two graphs, each on its own local Neo4j server (own data dir under ``.kgqa/scale/``, never
committed; Bolt 25687 / HTTP 25474 by default, one server at a time; heap and page cache
from ``--heap`` / ``--pagecache``, default 1g / 1g):

* ``demo``: ``kgqa load wikidata5m --path data/demo`` (436 entities, 1,134 facts);
* ``buried``: the same demo KG plus generated distractors (bench/scale_distractors.py says how
  they are made: 200,000 entities named from the demo's own words, ~730,000 facts, demo entities
  as hubs with up to 3,000 out-edges, no distractor fact through a relation a demo entity already
  has, so every gold answer stays unique and reachable by the same path; both properties are
  asserted before anything is written). Structure goes in with ``neo4j-admin database import
  full``; then the real loader runs ``kgqa load wikidata5m --path data/demo`` over it (demo
  names, descriptions, images, relation and entity embeddings exactly as in the small KG), and
  the distractor names are embedded with the real all-MiniLM-L6-v2 into ``name_embedding``
  (the vector index the start-entity linking searches). Built once per generator version and
  parameters; ``manifest.json`` in the data dir records them and a re-run reuses the graph.

Then ``kgqa eval data/demo/questions.jsonl`` runs per graph × variant as a subprocess, in the
graph-only setting (every LLM step on its documented fallback: ``KGQA_CHAT_BACKEND=none``, or
before that backend existed an OpenAI backend on a closed port), and the table prints EM,
SBERT@0.3, start-entity accuracy, gold-path recall per hop count and seconds per question side
by side. Before the timed variants, each server answers the question set once untimed (the
default variant; ``--no-warmup`` skips it), so seconds compare the graphs on a warm page cache,
not one variant's cold start. Variants are VisPath option sets (``-o KEY=VALUE``), see VARIANTS. Rows for other
methods (GraSP's extraction, mKG-RAG's stage 2) go into METHOD_ROWS. Prints; asserts nothing
about accuracy. Threads: torch threads = KGQA_TORCH_THREADS (default 1), stated in the output.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from bench._common import ensure_built, rate

ROOT = Path(__file__).resolve().parent.parent

# VisPath option sets measured side by side (``kgqa eval -o KEY=VALUE``). "default" is whatever
# VisPathOptions defaults to; "paper" pins every scoring choice to the paper's literal reading.
VARIANTS: dict[str, dict[str, str]] = {
    "default": {},
    "paper": {"intent_fallback": "question", "edge_relation_weight": "0", "chain_relation_weight": "0",
              "depth_fallback": "dmax", "chain_score": "sbert", "keep_label_match": "false",
              "answer_typing": "false", "M1_per_relation": "0", "path_scorer": "rules"},
    "default -edge diversity": {"M1_per_relation": "0"},
    "default M1_per_relation=10": {"M1_per_relation": "10"},
    "default -typing": {"answer_typing": "false"},
    "default M3=6": {"M3": "6"},
    "default M3=10": {"M3": "10"},
    "default compat=sketch": {"compat_score": "sketch"},
    "default -label guard": {"keep_label_match": "false"},
    "intent=relations": {"intent_fallback": "relations"},
    "edge w=1": {"edge_relation_weight": "1"},
    "chain w=1": {"chain_relation_weight": "1"},
    "relations+chain w=1": {"intent_fallback": "relations", "chain_relation_weight": "1"},
    "relations+edge+chain": {"intent_fallback": "relations", "edge_relation_weight": "1",
                             "chain_relation_weight": "1"},
    "rel+edge+chain .5": {"intent_fallback": "relations", "edge_relation_weight": "0.5",
                          "chain_relation_weight": "0.5"},
    # the non-LLM sketch also gives D̂ (a range) and σ (relations aligned with the question's phrases)
    "sketch": {"intent_fallback": "relations", "edge_relation_weight": "1", "chain_relation_weight": "1",
               "depth_fallback": "sketch", "chain_score": "sketch"},
    "sketch -aliases": {"intent_fallback": "relations", "edge_relation_weight": "1",
                           "chain_relation_weight": "1", "depth_fallback": "sketch", "chain_score": "sketch",
                           "sketch_aliases": "false"},
    "sketch -mention skip": {"intent_fallback": "relations", "edge_relation_weight": "1",
                                "chain_relation_weight": "1", "depth_fallback": "sketch",
                                "chain_score": "sketch", "sketch_skip_mentions": "false"},
    "sketch edge w=0": {"intent_fallback": "relations", "edge_relation_weight": "0", "chain_relation_weight": "1",
                        "depth_fallback": "sketch", "chain_score": "sketch"},
    "sketch depth only": {"intent_fallback": "relations", "edge_relation_weight": "1",
                           "chain_relation_weight": "1", "depth_fallback": "sketch"},
}
# Other methods' rows over the same two graphs, added by their engineers:
# name -> (kgqa eval --method value, option set). Hubs matter to GraSP's k1/k2 ranking too.
# mKG-RAG has no row: its stage 2 runs over the documents' own KGs, which Wikidata hubs do not touch
# (its scale question is many documents: bench/mkgrag.py).
METHOD_ROWS: dict[str, tuple[str, dict[str, str]]] = {
    # GraSP with the encoder trained on the demo KG; its k1/k2 extraction ranks relations and
    # neighbours at the same hubs (the soft-prompt LLM_select runs live: SmolLM2 on transformers)
    "grasp": ("grasp", {"checkpoint": str(ROOT / "data" / "demo" / "grasp" / "grasp-gat.safetensors")}),
}


def settings_for(kg: str, args):
    from kgqa.core.config import Settings

    return Settings(data_dir=args.root / kg, neo4j_bolt_port=args.bolt, neo4j_http_port=args.http,
                    neo4j_uri=f"bolt://127.0.0.1:{args.bolt}", neo4j_heap=args.heap,
                    neo4j_pagecache=args.pagecache)


def env_for(kg: str, args, graph_only: bool = True) -> dict:
    env = {**os.environ, "KGQA_DATA_DIR": str(args.root / kg), "KGQA_NEO4J_BOLT_PORT": str(args.bolt),
           "KGQA_NEO4J_HTTP_PORT": str(args.http), "NEO4J_URI": f"bolt://127.0.0.1:{args.bolt}",
           "KGQA_NEO4J_HEAP": args.heap, "KGQA_NEO4J_PAGECACHE": args.pagecache,
           "KGQA_TORCH_THREADS": os.environ.get("KGQA_TORCH_THREADS", "1")}
    env.pop("KGQA_MODEL_CACHE_DIR", None)
    if graph_only:
        env.update(graph_only_env())
    return env


def graph_only_env() -> dict:
    """Every chat call fails on purpose, so every LLM step takes its documented fallback."""
    import typing

    from kgqa.core.config import Settings

    if "none" in typing.get_args(Settings.model_fields["chat_backend"].annotation):
        return {"KGQA_CHAT_BACKEND": "none"}
    return {"KGQA_CHAT_BACKEND": "openai", "KGQA_CHAT_BASE_URL": "http://127.0.0.1:9/v1"}


def kgqa(env: dict, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("kgqa")
    proc = subprocess.run([str(exe), *argv], env=env, cwd=ROOT, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit(f"kgqa {' '.join(argv[:3])} … failed ({proc.returncode}): "
                         + (proc.stderr or proc.stdout).strip()[-1500:])
    return proc


# --------------------------------------------------------------------------- build
def manifest_key(kg: str, args) -> dict:
    from bench.scale_distractors import GENERATOR_VERSION

    demo_hash = hashlib.sha256()
    for f in sorted((ROOT / "data" / "demo").glob("wikidata5m_*.txt")):
        demo_hash.update(f.read_bytes())
    key = {"kg": kg, "demo": demo_hash.hexdigest()[:16]}
    if kg == "buried":
        key.update(generator=GENERATOR_VERSION, entities=args.entities, facts=args.facts, max_out=args.max_out,
                   seed=args.seed)
    backend = settings_for(kg, args).encoder_backend
    if backend == "model2vec":     # the names' vectors differ by encoder: another graph (older keys stay valid)
        key["encoder_backend"] = backend
    return key


def ready_static_encoder(s, args) -> None:
    """With KGQA_ENCODER_BACKEND=model2vec: the distilled model in ``s``'s data dir (which ``reset_db`` empties),
    distilled once under ``args.root/cache`` and copied in; nothing for the other backends."""
    if s.encoder_backend != "model2vec":
        return
    from kgqa.models.encoder import default_model_path
    from kgqa.models.static_encoder import distil, distilled_path

    model = s.encoder_model or default_model_path()
    target = distilled_path(model, s.models_dir)
    if not (target / "model.safetensors").exists():
        shutil.copytree(distil(model, args.root / "cache" / "models"), target, dirs_exist_ok=True)


def reset_db(settings) -> None:
    """A fresh, password-initialised server with an empty ``neo4j`` database, stopped."""
    from kgqa.core.neo4j_local import LocalNeo4j

    server = LocalNeo4j(settings)
    server.stop()
    if settings.data_dir.exists():
        shutil.rmtree(settings.data_dir)
    server.start(wait_s=300)       # sets the initial password, creates the system database
    server.stop()
    for sub in ("databases/neo4j", "transactions/neo4j"):
        shutil.rmtree(settings.neo4j_home / "data" / sub, ignore_errors=True)


def build_demo(args) -> dict:
    from kgqa.core.neo4j_local import LocalNeo4j

    s = settings_for("demo", args)
    reset_db(s)
    ready_static_encoder(s, args)
    LocalNeo4j(s).start(wait_s=300)
    t0 = time.perf_counter()
    kgqa(env_for("demo", args, graph_only=False), "load", "wikidata5m", "--path", "data/demo")
    return {"load_s": round(time.perf_counter() - t0, 1)}


def build_buried(args) -> dict:
    from bench.scale_distractors import check_honest, generate, gold_chains_unique

    s = settings_for("buried", args)
    t0 = time.perf_counter()
    g = generate(ROOT / "data" / "demo", n_entities=args.entities, n_facts=args.facts, max_out=args.max_out,
                 seed=args.seed)
    honest = check_honest(g["demo"], g["facts"])
    questions = [json.loads(line) for line in open(ROOT / "data" / "demo" / "questions.jsonl", encoding="utf-8")]
    honest["gold_chains_checked"] = gold_chains_unique(g["demo"], g["facts"], questions)
    gen_s = time.perf_counter() - t0
    print(f"generated {len(g['ids']):,} distractors, {len(g['facts']):,} distractor facts "
          f"({g['demo_headed']:,} leaving demo entities) in {gen_s:.0f} s; {honest}", flush=True)
    info = write_buried(g, s, args, env_for("buried", args, graph_only=False), ["--path", "data/demo"])
    return {**honest, **info, "generate_s": round(gen_s, 1)}


def write_buried(g: dict, s, args, env: dict, load_argv: list[str]) -> dict:
    """A generator's output into a fresh server: the structure by ``neo4j-admin database import full``, then
    the real loader over it (``kgqa load wikidata5m`` + ``load_argv``: the KG's names, descriptions, images,
    relation and entity embeddings exactly as in the small KG), then the distractor names embedded with the
    real encoder into ``name_embedding`` (cached under ``args.root/cache`` by name list). Leaves the server
    running; returns timings and counts. ``g``: ``ids, names, descriptions, relations, facts`` and the KG
    itself as ``demo`` (``names``, ``facts``)."""
    import numpy as np

    from kgqa.core.graph import Graph
    from kgqa.core.kg import label_keys
    from kgqa.core.neo4j_local import LocalNeo4j
    from kgqa.models.encoder import encoder_for

    reset_db(s)
    ready_static_encoder(s, args)
    imp = s.data_dir.parent / f"import-{s.data_dir.name}"
    shutil.rmtree(imp, ignore_errors=True)
    imp.mkdir(parents=True)
    demo = g["demo"]

    def writer(path, header):
        fh = open(path, "w", encoding="utf-8", newline="")
        w = csv.writer(fh, delimiter="|", quoting=csv.QUOTE_ALL, lineterminator="\n")
        w.writerow(header)
        return fh, w

    fh, w = writer(imp / "entities.csv", ["id:ID(Entity)", "name", "label_keys:string[]", "description", ":LABEL"])
    for e, n in demo["names"].items():           # demo aliases, label keys and descriptions: the loader, below
        w.writerow([e, n, "", "", "Entity"])
    for e, n, d in zip(g["ids"], g["names"], g["descriptions"]):   # label keys as the loader stores them
        w.writerow([e, n, ";".join(label_keys(n)), d, "Entity"])
    fh.close()
    fh, w = writer(imp / "relations.csv", ["id:ID(Relation)", "name", ":LABEL"])
    for p, n in g["relations"].items():
        w.writerow([p, n, "Relation"])
    fh.close()
    fh, w = writer(imp / "facts.csv", [":START_ID(Entity)", ":TYPE", ":END_ID(Entity)"])
    for h, r, t in demo["facts"]:
        w.writerow([h, r, t])
    for h, r, t in g["facts"]:
        w.writerow([h, r, t])
    fh.close()
    admin_env = {**os.environ, "NEO4J_HOME": str(s.neo4j_home), "NEO4J_CONF": str(s.neo4j_home / "conf")}
    cmd = [s.java, "-cp", f"{s.neo4j_jars}/*", "org.neo4j.cli.AdminTool", "database", "import", "full",
           "--delimiter=|", "--array-delimiter=;", f"--nodes={imp / 'entities.csv'}",
           f"--nodes={imp / 'relations.csv'}", f"--relationships={imp / 'facts.csv'}",
           "--overwrite-destination=true", "--threads=2", f"--report-file={imp / 'import.report'}", "neo4j"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=admin_env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit("neo4j-admin import failed: " + (proc.stderr or proc.stdout)[-2000:])
    import_s = time.perf_counter() - t0
    shutil.rmtree(imp, ignore_errors=True)
    LocalNeo4j(s).start(wait_s=300)
    with Graph(s) as graph:
        graph.apply_schema()
        graph.await_indexes(timeout_s=1800)
    t0 = time.perf_counter()
    kgqa(env, "load", "wikidata5m", *load_argv)
    load_s = time.perf_counter() - t0

    # distractor name embeddings (cached by name list and encoder, so a fact-only change re-uses them)
    names_hash = hashlib.sha256("\n".join(g["names"]).encode()).hexdigest()[:16]
    by = "" if s.encoder_backend in ("auto", "torch") else f"_{s.encoder_backend}"
    cache = args.root / "cache" / f"distractor_names_{names_hash}{by}.npy"
    cache.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if cache.exists():
        vecs = np.load(cache)
    else:
        enc = encoder_for(s)       # the backend the questions are asked with (KGQA_ENCODER_BACKEND)
        uniq = list(dict.fromkeys(g["names"]))
        parts = []
        for i in range(0, len(uniq), 10_000):
            parts.append(enc.encode(uniq[i:i + 10_000], batch_size=256))
            print(f"  encoded {min(i + 10_000, len(uniq)):,}/{len(uniq):,} distractor names "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        pos = {n: k for k, n in enumerate(uniq)}
        u = np.concatenate(parts)
        vecs = u[[pos[n] for n in g["names"]]]
        np.save(cache, vecs)
    encode_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with Graph(s) as graph:
        for i in range(0, len(g["ids"]), 2000):
            graph.write("load_entity_embeddings", rows=[{"id": e, "vector": v.tolist()} for e, v in
                                                        zip(g["ids"][i:i + 2000], vecs[i:i + 2000])])
        graph.await_indexes(timeout_s=1800)
        counts = graph.read("graph_counts")[0]
    write_s = time.perf_counter() - t0
    return {"counts": counts, "import_s": round(import_s, 1), "demo_load_s": round(load_s, 1),
            "encode_s": round(encode_s, 1), "embed_write_s": round(write_s, 1)}


def ensure(kg: str, args) -> None:
    ensure_built(settings_for(kg, args), manifest_key(kg, args),
                 lambda: build_demo(args) if kg == "demo" else build_buried(args), f"the {kg} KG", rebuild=args.rebuild)


# --------------------------------------------------------------------------- evaluate
def evaluate(kg: str, label: str, method: str, options: dict, args) -> dict:
    out = args.root / "reports" / f"{kg}.{label.replace(' ', '_')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = ["eval", "data/demo/questions.jsonl", "--method", method, "--quiet", "--out", str(out), "--json"]
    if args.limit:
        argv += ["--limit", str(args.limit)]
    for k, v in options.items():
        argv += ["-o", f"{k}={v}"]
    t0 = time.perf_counter()
    proc = kgqa(env_for(kg, args), *argv, check=False)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"], "wall_s": 0}
    rep = json.loads(out.read_text())
    rep["wall_s"] = time.perf_counter() - t0
    return rep


def print_table(results: list[tuple[str, str, dict]], hop_keys: list[str]) -> None:
    head = (f"{'KG':<7}{'variant':<22}{'EM':>6}{'SBERT':>7}{'start':>7}"
            + "".join(f"{'path ' + h + 'h':>9}" for h in hop_keys) + f"{'path':>7}{'EM/h ' + '/'.join(hop_keys):>17}"
            + f"{'s/q p50':>9}{'s/q mean':>9}{'fail':>5}")
    print(head)
    print("-" * len(head))
    for kg, label, rep in results:
        if "error" in rep:
            print(f"{kg:<7}{label:<22}  error: {rep['error'][0][:100]}")
            continue
        o, bh = rep["overall"], rep["by_hops"]
        em_h = "/".join(rate(bh.get(h, {}).get("exact_match")).strip() for h in hop_keys)
        print(f"{kg:<7}{label:<22}{rate(o['exact_match']):>6}{rate(o['sbert@0.3']):>7}{rate(o['start_entity']):>7}"
              + "".join(f"{rate(bh.get(h, {}).get('gold_path')):>9}" for h in hop_keys)
              + f"{rate(o['gold_path']):>7}{em_h:>17}"
              + f"{o['latency_s']['p50'] or 0:9.2f}{o['latency_s']['mean'] or 0:9.2f}{o['failed']:>5}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kgs", default="demo,buried", help="comma list of demo, buried")
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma list of {', '.join(VARIANTS)}")
    ap.add_argument("--methods", action="store_true", help="also the other methods' rows (METHOD_ROWS)")
    ap.add_argument("--no-warmup", dest="warmup", action="store_false",
                    help="skip the untimed default-variant pass that warms each server before the timed ones")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--jobs", type=int, default=1, help="variants evaluated at once (seconds per question then "
                    "include their contention; the header states it)")
    ap.add_argument("--root", type=Path, default=ROOT / ".kgqa" / "scale")
    ap.add_argument("--bolt", type=int, default=25687)
    ap.add_argument("--http", type=int, default=25474)
    ap.add_argument("--heap", default="1g")
    ap.add_argument("--pagecache", default="1g")
    ap.add_argument("--entities", type=int, default=200_000)
    ap.add_argument("--facts", type=int, default=730_000)
    ap.add_argument("--max-out", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--rebuild", action="store_true", help="rebuild the graphs even when the manifest matches")
    ap.add_argument("--build-only", action="store_true")
    args = ap.parse_args()
    args.root = args.root.resolve()
    kgs = [k for k in args.kgs.split(",") if k]
    for k in kgs:
        if k not in ("demo", "buried"):
            raise SystemExit(f"--kgs: unknown graph {k!r} (demo, buried)")
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"--variants: unknown variant {v!r} (known: {', '.join(VARIANTS)})")

    from kgqa.core.neo4j_local import LocalNeo4j

    for k in kgs:
        ensure(k, args)
    if args.build_only:
        return
    rows = [(v, "vispath", VARIANTS[v]) for v in variants]
    if args.methods:
        rows += [(name, m, o) for name, (m, o) in METHOD_ROWS.items()]
    results = []
    for k in kgs:
        s = settings_for(k, args)
        server = LocalNeo4j(s)
        server.start(wait_s=300)
        try:
            if args.warmup:      # page cache and query plans warm, so seconds compare the graphs, not a cold start
                rep = evaluate(k, "warm-up", "vispath", {}, args)
                print(f"  {k} · warm-up (untimed): done ({rep.get('wall_s', 0):.0f} s)", file=sys.stderr, flush=True)
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=args.jobs) as pool:   # each job is its own kgqa process
                futures = [(label, pool.submit(evaluate, k, label, method, opts, args))
                           for label, method, opts in rows]
                for label, fut in futures:
                    rep = fut.result()
                    results.append((k, label, rep))
                    print(f"  {k} · {label}: done ({rep.get('wall_s', 0):.0f} s)", file=sys.stderr, flush=True)
        finally:
            server.stop()
    load = os.getloadavg()
    built = {k: json.loads((args.root / k / "manifest.json").read_text())["built"] for k in kgs}
    print()
    print(f"kgqa eval data/demo/questions.jsonl{' --limit %d' % args.limit if args.limit else ''}, graph-only "
          f"({' '.join(f'{k}={v}' for k, v in graph_only_env().items())}); torch threads "
          f"{os.environ.get('KGQA_TORCH_THREADS', '1')}, Neo4j heap {args.heap} / page cache {args.pagecache}, "
          f"{os.cpu_count()} CPUs shared, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, "
          f"{args.jobs} variant(s) at a time, "
          f"{'each server warmed by one untimed pass first' if args.warmup else 'cold servers (--no-warmup)'}")
    for k, b in built.items():
        if "counts" in b:
            c = b["counts"]
            print(f"  {k}: {c['entities']:,} entities · {c['facts']:,} facts · {c['relations']} relations · "
                  f"max out-degree {b['max_out_degree']:,} (demo entities: max {b['demo_max_out']:,}, "
                  f"median {b['demo_median_out']})")
    hop_keys = sorted({h for _, _, r in results if "by_hops" in r for h in r["by_hops"] if h.isdigit()}, key=int)
    print_table(results, hop_keys)
    print("EM = exact match, SBERT = SBERT@0.3, start = start-entity accuracy, path N h = gold-path recall on the "
          "N-hop questions, s/q = seconds per question (kgqa eval's own latency)")


if __name__ == "__main__":
    main()
