"""Benchmark: one VisPath expansion hop on a large skewed Wikidata5M-format graph, side by side.

    KGQA_NEO4J_HEAP=2g KGQA_NEO4J_PAGECACHE=2g python -m bench.hops --wipe-local-db --triples 4500000

1. builds the graph (skipped with ``--reuse``): bench/load.py's generator (822 relation types,
   Zipf relation frequencies, power-law head/tail degrees, entities = 0.223 × triples, so
   4.5M triples ≈ 1M entities), imported with ``neo4j-admin database import full`` into the
   local server's ``neo4j`` database (``kgqa neo4j start``, KGQA_DATA_DIR: it is WIPED), then
   the kgqa schema; relation names and the names of the entities the benchmark touches are
   embedded with the real SBERT (all-MiniLM-L6-v2) and stored as the loader stores them;
2. samples start entities: uniformly at random, and from the top 1 % by out-degree;
3. per start entity and a hop intent (a relation name from the catalogue, as an intent reads), times
   * kgqa first cut: ``cypher/vispath_frontier_edges`` (relation-score pre-rank, then the tails'
     stored name embeddings via vector.similarity.cosine, ≤ first_cut edges) + exact Eq. 5 in Python
     (SBERT of "r ‖ e_t" for the cut edges, cold cache) → top M1;
   * exact: every outgoing edge (``vispath_frontier_edges_all``), SBERT of every "r ‖ e_t" → top M1;
     the first cut's accuracy is its recall of the exact top M1;
   * naive: uncapped variable-length ``[*1..2]`` expansion (``vispath_naive_two_hop``), paths counted;
4. runs whole questions (Dmax = 3, M1 = 30, M2 = 30, M3 = 3, start entity given) with instant
   scripted model stand-ins, so the figures are kgqa's own CPU outside model generation: this
   process's CPU (SBERT encoding included) and the Neo4j server's CPU, per question.

Prints tables; asserts nothing. Threads: torch threads = KGQA_TORCH_THREADS (default 1).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
from bench._common import percentile



# --------------------------------------------------------------------------- build
def build(settings, triples: int, workdir: Path) -> dict:
    from bench.load import generate  # bench/load.py, the loader engineer's generator

    from kgqa.core.graph import Graph
    from kgqa.core.neo4j_local import LocalNeo4j

    data = workdir / "wd5m"
    t0 = time.perf_counter()
    stats = generate(data, triples)
    gen_s = time.perf_counter() - t0
    imp = workdir / "import"
    imp.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    with open(imp / "entities.csv", "w", encoding="utf-8") as out, open(data / "wikidata5m_entity.txt") as src:
        out.write("id:ID(Entity)|name|aliases:string[]|:LABEL\n")
        for line in src:
            cols = line.rstrip("\n").replace("|", " ").split("\t")
            out.write(f"{cols[0]}|{cols[1]}|{';'.join(cols[2:])}|Entity\n")
    with open(imp / "relations.csv", "w", encoding="utf-8") as out, open(data / "wikidata5m_relation.txt") as src:
        out.write("id:ID(Relation)|name|aliases:string[]|:LABEL\n")
        for line in src:
            cols = line.rstrip("\n").replace("|", " ").split("\t")
            out.write(f"{cols[0]}|{cols[1]}|{';'.join(cols[2:])}|Relation\n")
    with open(imp / "facts.csv", "w") as out:
        out.write(":START_ID(Entity)|:TYPE|:END_ID(Entity)\n")
        for split in ("train", "valid", "test"):
            with open(data / f"wikidata5m_transductive_{split}.txt") as src:
                for line in src:
                    out.write(line.replace("\t", "|"))
    csv_s = time.perf_counter() - t0

    server = LocalNeo4j(settings)
    server.stop()
    home = settings.neo4j_home
    shutil.rmtree(home / "data" / "databases" / "neo4j", ignore_errors=True)
    shutil.rmtree(home / "data" / "transactions" / "neo4j", ignore_errors=True)
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")}
    cmd = [settings.java, "-cp", f"{settings.neo4j_jars}/*", "org.neo4j.cli.AdminTool", "database", "import",
           "full", "--delimiter=|", "--array-delimiter=;", f"--nodes={imp / 'entities.csv'}",
           f"--nodes={imp / 'relations.csv'}", f"--relationships={imp / 'facts.csv'}",
           "--overwrite-destination=true", "--threads=2", f"--report-file={imp / 'import.report'}", "neo4j"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    import_s = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit("neo4j-admin import failed: " + (proc.stderr or proc.stdout)[-2000:])
    server.start(wait_s=300)
    t0 = time.perf_counter()
    with Graph(settings) as g:
        g.apply_schema()
        g.await_indexes(timeout_s=1800)
    schema_s = time.perf_counter() - t0
    shutil.rmtree(imp, ignore_errors=True)
    return {**stats, "generate_s": round(gen_s, 1), "csv_s": round(csv_s, 1), "import_s": round(import_s, 1),
            "schema_s": round(schema_s, 1)}


def embed_names(graph, encoder, ids: list[str], query: str, read_query: str, batch: int = 2000) -> float:
    """SBERT the names of ``ids`` and store them as the loader does; returns seconds."""
    t0 = time.perf_counter()
    for i in range(0, len(ids), batch):
        rows = graph.read(read_query, ids=ids[i:i + batch])
        if not rows:
            continue
        vecs = encoder.encode([r["name"] or r["id"] for r in rows])
        graph.write(query, rows=[{"id": r["id"], "vector": v.tolist()} for r, v in zip(rows, vecs)])
    return time.perf_counter() - t0


# --------------------------------------------------------------------------- measure
def neo4j_cpu_s(settings) -> float:
    """utime + stime of the local Neo4j server process, in seconds."""
    from kgqa.core.neo4j_local import LocalNeo4j

    pid = LocalNeo4j(settings).status().pid
    with open(f"/proc/{pid}/stat") as fh:
        f = fh.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def sample_starts(graph, n_entities: int, n: int, n_hubs: int, seed: int):
    """Random sample, top-1% sample, the top hubs by out-degree, and the top-1% threshold (full degree scan)."""
    rng = random.Random(seed)
    degs = []
    for skip in range(0, n_entities, 250_000):
        degs += [(r["id"], r["degree"]) for r in graph.read("vispath_entity_degrees", skip=skip, limit=250_000)]
    degs.sort(key=lambda x: -x[1])
    cut = max(1, len(degs) // 100)
    thr = degs[cut - 1][1]
    with_out = [d for d in degs if d[1] > 0]
    return (rng.sample(with_out, min(n, len(with_out))), rng.sample(degs[:cut], min(n, cut)), degs[:n_hubs], thr)


def hop_once(vp, head: str, q_vec, mode: str):
    """One expansion hop from ``head``; (seconds total, seconds in Cypher, kept edges, edges considered)."""
    vp.kg.clear_cache()                                # cold cache: every "r ‖ e_t" string is encoded
    rel = vp.kg.relations()
    t0 = time.perf_counter()
    if mode == "firstcut":
        rel_scores = {rid: float(v @ q_vec) for rid, (_, v) in rel.items() if v is not None}
        rows = vp.graph.read("vispath_frontier_edges", frontier=[head], relation_scores=rel_scores,
                             intent=q_vec.tolist(), pre_cap=vp.opt.pre_cut, cap=vp.opt.first_cut, hidden=[], per_relation=0)
    else:
        rows = vp.graph.read("vispath_frontier_edges_all", frontier=[head], hidden=[])
    cy = time.perf_counter() - t0
    if rows:
        texts = [f"{rel.get(r['relation_id'], (r['relation_id'], None))[0]} {r['tail_name']}" for r in rows]
        s = vp.kg.embed(texts) @ q_vec                          # Eq. 5
        order = np.argsort(-s, kind="stable")[: vp.opt.M1]
        kept = [(rows[i]["relation_id"], rows[i]["tail_id"]) for i in order]
    else:
        kept = []
    return time.perf_counter() - t0, cy, kept, len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--triples", type=int, default=4_500_000)
    ap.add_argument("--starts", type=int, default=40, help="start entities per group (random, top-1%%)")
    ap.add_argument("--hubs", type=int, default=12, help="the largest out-degree entities, as a third group")
    ap.add_argument("--questions", type=int, default=12, help="whole questions for the CPU-per-question table")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/kgqa-bench-hops"))
    ap.add_argument("--reuse", action="store_true", help="measure the graph already in the local database")
    ap.add_argument("--wipe-local-db", action="store_true", help="required to build: the local database is wiped")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    from types import SimpleNamespace

    from kgqa.core.config import Settings
    from kgqa.core.kg import KG
    from kgqa.core.method import Context
    from kgqa.methods.vispath.algorithm import VisPath
    from kgqa.methods.vispath.options import VisPathOptions
    from kgqa.core.graph import Graph
    from kgqa.models.encoder import get_encoder

    settings = Settings()
    import torch

    torch.set_num_threads(settings.torch_threads)
    built = {}
    if not args.reuse:
        if not args.wipe_local_db:
            raise SystemExit("bench/hops.py wipes the local database: pass --wipe-local-db (or --reuse)")
        print(f"building {args.triples:,} triples into {settings.neo4j_uri} …", flush=True)
        built = build(settings, args.triples, args.workdir)
        print(built, flush=True)

    enc = get_encoder(settings.encoder_model, device=settings.device, threads=settings.torch_threads)
    graph = Graph(settings)
    counts = graph.read("graph_counts")[0]
    print(f"graph: {counts['entities']:,} entities · {counts['relations']:,} relations · {counts['facts']:,} facts"
          f" · torch threads {torch.get_num_threads()} · Neo4j heap {settings.neo4j_heap}, "
          f"page cache {settings.neo4j_pagecache} · {os.cpu_count()} CPUs (shared)", flush=True)

    # relation catalogue embeddings (822 names)
    rel_ids = [r["id"] for r in graph.read("kg_relation_catalogue") if r["embedding"] is None]
    t_rel = embed_names(graph, enc, rel_ids, "load_relation_embeddings", "vispath_relation_names") if rel_ids else 0.0

    rnd, top, hubs, thr = sample_starts(graph, counts["entities"], args.starts, args.hubs, args.seed)
    print(f"start entities: {len(rnd)} random (median out-degree {int(np.median([d for _, d in rnd]))}), "
          f"{len(top)} top-1% (out-degree ≥ {thr}, median {int(np.median([d for _, d in top]))}, "
          f"max {max(d for _, d in top)}), {len(hubs)} largest hubs (out-degree {hubs[-1][1]}–{hubs[0][1]})",
          flush=True)

    # SBERT name embeddings for the neighbourhoods the benchmark touches (2 hops of the question starts)
    q_starts = [e for e, _ in (rnd[: args.questions // 2] + top[: args.questions - args.questions // 2])]
    def tails(ids, cap=None):
        out: set[str] = set()
        ids = list(ids)
        for i in range(0, len(ids), 200):
            out |= {r["tail_id"] for r in graph.read("vispath_frontier_edges_all", frontier=ids[i:i + 200], hidden=[])}
            if cap and len(out) >= cap:
                break
        return out

    touch = {e for e, _ in rnd + top + hubs}
    touch |= tails(touch)                                    # 1 hop of every sampled start
    q1 = tails(q_starts)
    touch |= q1 | tails(q1, cap=30_000)                      # 2 hops of the question starts
    touch_ids = sorted(touch)
    t_ent = embed_names(graph, enc, touch_ids, "load_entity_embeddings", "vispath_entity_names")
    print(f"embedded {len(rel_ids)} relation names ({t_rel:.1f} s) and {len(touch_ids):,} entity names "
          f"({t_ent:.1f} s) with SBERT", flush=True)

    kg = KG(graph, enc)                                       # one relation catalogue and SBERT cache

    def vispath(model, options: VisPathOptions) -> VisPath:
        models = SimpleNamespace(encoder=enc, chat=model, vision=model)
        return VisPath(Context(settings=settings, graph=graph, models=models, kg=kg), options)

    vp = vispath(None, VisPathOptions())
    rel = kg.relations()
    rel_names = sorted({n for n, _ in rel.values()})
    rng = random.Random(args.seed)

    # ---- one hop: first cut vs exact vs naive [*1..2]
    results = {}
    for group, starts in (("random", rnd), ("top-1% degree", top), (f"top-{len(hubs)} hubs", hubs)):
        fc, fc_cy, ex, ex_cy, nv, nv_paths, recall, considered = [], [], [], [], [], [], [], []
        for eid, _deg in starts:
            q_vec = enc.encode([rng.choice(rel_names)])[0]
            hop_once(vp, eid, q_vec, "firstcut")                          # warm the page cache for both
            t, cy, kept_fc, n_fc = hop_once(vp, eid, q_vec, "firstcut")
            fc.append(t), fc_cy.append(cy), considered.append(n_fc)
            t, cy, kept_ex, _ = hop_once(vp, eid, q_vec, "exact")
            ex.append(t), ex_cy.append(cy)
            if kept_ex:
                recall.append(len(set(kept_fc) & set(kept_ex)) / len(kept_ex))
            t0 = time.perf_counter()
            n = graph.read("vispath_naive_two_hop", id=eid)[0]["paths"]
            nv.append(time.perf_counter() - t0), nv_paths.append(n)
        results[group] = dict(fc=fc, fc_cy=fc_cy, ex=ex, ex_cy=ex_cy, nv=nv, nv_paths=nv_paths, recall=recall,
                              considered=considered)

    print()
    print(f"One expansion hop (M1 = {vp.opt.M1}, first cut ≤ {vp.opt.first_cut} edges after a relation pre-rank of "
          f"≤ {vp.opt.pre_cut}); milliseconds, p50 / p95; cold SBERT cache")
    head = f"{'start entities':<16}{'kgqa first cut':>22}{'  (Cypher part)':>18}{'exact Eq. 5':>20}" \
           f"{'  (Cypher part)':>18}{'naive [*1..2]':>20}{'naive paths p50/max':>22}{'recall@M1':>11}"
    print(head)
    print("-" * len(head))
    for group, r in results.items():
        f = lambda xs: f"{percentile(xs, 50) * 1e3:8.1f} / {percentile(xs, 95) * 1e3:8.1f}"  # noqa: E731
        print(f"{group:<16}{f(r['fc']):>22}{f(r['fc_cy']):>18}{f(r['ex']):>20}{f(r['ex_cy']):>18}{f(r['nv']):>20}"
              f"{int(percentile(r['nv_paths'], 50)):>12,} / {max(r['nv_paths']):>7,}"
              f"{np.mean(r['recall']) if r['recall'] else float('nan'):>11.3f}")

    # ---- first-cut size on the hubs: accuracy (recall of the exact top M1) vs latency
    print()
    print(f"First-cut size on the {len(hubs)} largest hubs: recall of exact top-{vp.opt.M1} and ms per hop (p50 / p95)")
    print(f"{'first cut':>10}{'recall@M1':>12}{'ms p50 / p95':>22}")
    q_vecs = {eid: enc.encode([rng.choice(rel_names)])[0] for eid, _ in hubs}
    exact_top = {eid: hop_once(vp, eid, q_vecs[eid], "exact")[2] for eid, _ in hubs}
    for cap in (50, 100, 200, 500, 1000):
        cvp = vispath(None, VisPathOptions(first_cut=cap))
        ts, rec = [], []
        for eid, _ in hubs:
            t, _, kept, _ = hop_once(cvp, eid, q_vecs[eid], "firstcut")
            ts.append(t)
            if exact_top[eid]:
                rec.append(len(set(kept) & set(exact_top[eid])) / len(exact_top[eid]))
        print(f"{cap:>10}{np.mean(rec):>12.3f}{percentile(ts, 50) * 1e3:>12.1f} / {percentile(ts, 95) * 1e3:7.1f}", flush=True)

    # ---- whole questions, models scripted to answer instantly
    from kgqa.methods.vispath import prompts as P

    class Instant:
        """Model stand-in that answers at once: sketch of depth 3, intents from relation names, never answerable."""

        name = "instant"

        def __init__(self):
            self.r = random.Random(args.seed)

        def generate_json(self, *a, **k):
            schema = a[-1] if len(a) in (2, 3) else k["schema"]
            v = {"QuestionSketch": {"sketch": ["a", "b", "c"], "depth": 3},
                 "HopIntent": {"intent": self.r.choice(rel_names)},
                 "ChainSelection": {"selected": [1, 2, 3]},
                 "EvidenceStatement": {"statement": "evidence"},
                 "Answerability": {"answerable": False, "answer": ""}}.get(schema.__name__)
            if v is None:
                from kgqa.core.errors import ModelUnavailable

                raise ModelUnavailable("instant stand-in")
            return schema.model_validate(v)

        def recognize(self, image, hint):
            return ""

    m = Instant()
    qvp = vispath(m, VisPathOptions())
    wall, cpu, srv = [], [], []
    for eid in q_starts:
        kg.clear_cache()
        s0, c0, w0 = neo4j_cpu_s(settings), time.process_time(), time.perf_counter()
        qvp.run("Which entity is reached from the one shown?", None, entity_id=eid)
        wall.append(time.perf_counter() - w0), cpu.append(time.process_time() - c0)
        srv.append(neo4j_cpu_s(settings) - s0)
    print()
    print(f"Whole question outside model generation (Dmax = 3 hops run, M1 = 30, M2 = 30, M3 = 3, "
          f"{len(q_starts)} start entities, half top-1%); seconds, p50 / p95")
    print(f"{'wall':>22}{'kgqa process CPU':>22}{'Neo4j server CPU':>22}")
    print(f"{percentile(wall, 50):10.3f} / {percentile(wall, 95):7.3f}{percentile(cpu, 50):12.3f} / {percentile(cpu, 95):7.3f}"
          f"{percentile(srv, 50):12.3f} / {percentile(srv, 95):7.3f}")
    graph.close()


if __name__ == "__main__":
    main()
