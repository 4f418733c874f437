"""Benchmark P6 (GraSP): encoder time, extraction latency on hubs, model calls per question.

    KGQA_TORCH_THREADS=1 python -m bench.grasp                     # encoder + extraction on the loaded graph
    KGQA_TORCH_THREADS=1 python -m bench.grasp --calls report.json # + model calls from a `kgqa eval --json` report

1. GAT + projector encode time (Section 4.2) of one subgraph, on ``KGQA_TORCH_THREADS`` threads,
   for N = 61 (the default cap of 60 triples), 250 and 500 nodes with 2N facts, random 384-d
   features; side by side with the projector alone (the text soft-prompt ablation on N triples)
   and the goal of ≤ 10 ms at N ≤ 500. Milliseconds p50 / p95 over ``--repeat`` runs after a warm-up.
2. Extraction (Section 4.1, ``cypher/grasp_neighbours``, k1 = k2 = 8, 2 hops, cap 60) from start
   entities of the graph that is loaded (never written to): a random sample, the top 1 % by
   out-degree, and the largest hubs; a relation name of the catalogue as the question, as
   bench/hops.py does for VisPath. Milliseconds p50 / p95 (Cypher + Python), facts kept.
   Run it over bench/hops.py's 1M-entity graph (build that with bench/hops.py, then run this).
   ``--hub N`` instead adds a synthetic hub to the loaded graph (ids Q992…, P9920…; deleted afterwards):
   one entity with N incoming facts of one relation (N distinct neighbours) and 40 outgoing
   relations, loaded with the project's loader, and times the extraction from it with the
   scan cap (1000) beside the uncapped scan (scan_cap = N) as the baseline.
3. Model calls per question by role from a ``kgqa eval --json`` report: GraSP's small model
   (``softprompt``, LLM_select) and large model (``chat``, LLM_answer). The paper's Table 5
   compares these counts with ToG and LMP; its numbers did not survive in the text we have,
   so the design's own bound is printed beside ours: per round one small and one large call
   (plus the large model's JSON retries), at most ``iterations`` rounds.

Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import numpy as np
from bench._common import percentile, write


def load_avg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


# --------------------------------------------------------------------------- 1. encoder
def bench_encoder(repeat: int, llm_hidden: int) -> None:
    import torch

    from kgqa.gnn.encoder import GraphSoftPromptEncoder, TextSoftPromptEncoder

    torch.manual_seed(0)
    gat = GraphSoftPromptEncoder(384, 384, llm_hidden).eval()
    txt = TextSoftPromptEncoder(384, llm_hidden).eval()
    print(f"\n1. Encoder (GAT 2×128, 4 heads, edge_dim 32 from 40 relation embeddings, projector → {llm_hidden}); "
          f"torch threads {torch.get_num_threads()}, load {load_avg()}; ms p50 / p95 over {repeat} runs")
    head = f"{'nodes N':>8}{'facts':>7}{'GAT + projector':>20}{'projector only (text)':>24}{'goal':>8}"
    print(head)
    print("-" * len(head))
    for n in (61, 250, 500):
        g = torch.Generator().manual_seed(n)
        x = torch.nn.functional.normalize(torch.randn(n, 384, generator=g), dim=-1)
        e = 2 * n
        src = torch.randint(0, n, (e,), generator=g)
        dst = torch.randint(0, n, (e,), generator=g)
        ei = torch.stack([src, dst])
        n_rel = 40                                       # distinct relations in one subgraph
        rel = torch.nn.functional.normalize(torch.randn(n_rel, 384, generator=g), dim=-1)
        et = torch.randint(0, n_rel, (e,), generator=g)
        ea = torch.nn.functional.normalize(torch.randn(n, 384, generator=g), dim=-1)   # N triple sentences
        q = torch.nn.functional.normalize(torch.randn(384, generator=g), dim=0)
        topic = torch.zeros(n, dtype=torch.bool)
        topic[0] = True
        t_gat, t_txt = [], []
        with torch.inference_mode():
            for _ in range(3):
                gat(x, ei, et, rel, q, topic)
                txt(ea)
            for _ in range(repeat):
                t0 = time.perf_counter()
                out = gat(x, ei, et, rel, q, topic)
                t_gat.append((time.perf_counter() - t0) * 1e3)
                t0 = time.perf_counter()
                txt(ea)
                t_txt.append((time.perf_counter() - t0) * 1e3)
        assert out.shape == (n, llm_hidden)
        print(f"{n:>8}{e:>7}{percentile(t_gat, 50):>12.2f} / {percentile(t_gat, 95):<6.2f}{percentile(t_txt, 50):>15.2f} / "
              f"{percentile(t_txt, 95):<7.2f}{'≤ 10':>7}")


# --------------------------------------------------------------------------- 2. extraction
def bench_extraction(starts: int, hubs: int, seed: int) -> None:
    from types import SimpleNamespace

    from kgqa.core.config import Settings
    from kgqa.methods.grasp.algorithm import GraSP
    from kgqa.methods.grasp.options import GraSPOptions
    from kgqa.core.graph import Graph
    from kgqa.core.kg import KG
    from kgqa.core.method import Context
    from kgqa.models.encoder import get_encoder

    settings = Settings()
    graph = Graph(settings)
    enc = get_encoder(settings.encoder_model, device=settings.device, threads=settings.torch_threads)
    kg = KG(graph, enc)
    models = SimpleNamespace(encoder=enc, chat=None, vision=None, softprompt=None)
    m = GraSP(Context(settings=settings, graph=graph, models=models, kg=kg), GraSPOptions(triples_only=True))
    counts = graph.read("graph_counts")[0]
    degs = []
    for skip in range(0, counts["entities"], 250_000):
        degs += [(r["id"], r["degree"]) for r in graph.read("vispath_entity_degrees", skip=skip, limit=250_000)]
    degs.sort(key=lambda d: -d[1])
    rng = random.Random(seed)
    cut = max(1, len(degs) // 100)
    with_out = [d for d in degs if d[1] > 0]
    groups = {"random": rng.sample(with_out, min(starts, len(with_out))),
              "top-1% out-degree": rng.sample(degs[:cut], min(starts, cut)),
              f"top-{hubs} hubs": degs[:hubs]}
    rel_names = sorted({n for n, _ in kg.relations().values()})
    print(f"\n2. Extraction (k1 = k2 = 8 per direction, 2 hops, cap 60, scan cap 1000) on {counts['entities']:,} "
          f"entities / {counts['facts']:,} facts; Neo4j heap {settings.neo4j_heap}, page cache "
          f"{settings.neo4j_pagecache}; load {load_avg()}; ms p50 / p95 (warm page cache)")
    head = f"{'start entities':<20}{'n':>4}{'out-degree p50/max':>20}{'extract ms':>20}{'facts p50':>11}"
    print(head)
    print("-" * len(head))
    for name, group in groups.items():
        ts, facts = [], []
        for eid, _ in group:
            q_vec = kg.embed([rng.choice(rel_names)])[0]
            row = kg.entity(eid) or {"name": eid}
            m.extract(eid, row["name"] or eid, q_vec, [])                 # warm
            t0 = time.perf_counter()
            sub = m.extract(eid, row["name"] or eid, q_vec, [])
            ts.append((time.perf_counter() - t0) * 1e3)
            facts.append(len(sub.facts))
        d = [x for _, x in group]
        print(f"{name:<20}{len(group):>4}{int(np.median(d)):>12} / {max(d):<6}{percentile(ts, 50):>11.1f} / "
              f"{percentile(ts, 95):<7.1f}{int(np.median(facts)):>9}")
    graph.close()


def bench_hub(n: int, repeat: int) -> None:
    import tempfile
    from types import SimpleNamespace

    from kgqa.core.config import Settings
    from kgqa.methods.grasp.algorithm import GraSP
    from kgqa.methods.grasp.options import GraSPOptions
    from kgqa.core.graph import Graph
    from kgqa.core.kg import KG
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions
    from kgqa.core.method import Context
    from kgqa.models.encoder import get_encoder

    settings = Settings()
    graph = Graph(settings)
    hub = "Q992000000"
    people = [f"Q992{i:06d}" for i in range(1, n + 1)]
    outs = [f"Q993{i:06d}" for i in range(40)]
    rels = {"P99200": "citizen of", **{f"P992{10 + i}": f"property number {i}" for i in range(40)}}
    ents = [hub, *people, *outs]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        with open(d / "wikidata5m_entity.txt", "w") as f:
            f.write(f"{hub}\tBenchland\n")
            f.writelines(f"{p}\tBench person {i}\n" for i, p in enumerate(people))
            f.writelines(f"{o}\tBench thing {i}\n" for i, o in enumerate(outs))
        (d / "wikidata5m_relation.txt").write_text("".join(f"{k}\t{v}\n" for k, v in rels.items()))
        with open(d / "wikidata5m_transductive_train.txt", "w") as f:
            f.writelines(f"{p}\tP99200\t{hub}\n" for p in people)
            f.writelines(f"{hub}\tP992{10 + i}\t{o}\n" for i, o in enumerate(outs))
        for split in ("valid", "test"):
            (d / f"wikidata5m_transductive_{split}.txt").write_text("")
        load_wikidata5m(graph, d, options=LoadOptions(embeddings=False))
    load_s = time.perf_counter() - t0
    try:
        enc = get_encoder(settings.encoder_model, device=settings.device, threads=settings.torch_threads)
        kg = KG(graph, enc)
        models = SimpleNamespace(encoder=enc, chat=None, vision=None, softprompt=None)
        q = kg.embed(["Who is a citizen of Benchland?"])[0]
        print(f"\n2b. Synthetic hub: Benchland with {n:,} incoming facts of one relation and 40 outgoing relations "
              f"(loaded in {load_s:.0f} s, names not embedded: every neighbour scores -1, the scan cost is the "
              f"same); 2 hops, k1 = k2 = 8, cap 60; load {load_avg()}; ms p50 / p95 over {repeat}")
        print(f"{'scan cap':>12}{'extract ms':>22}{'facts':>7}")
        for cap_ in (1000, n):
            m = GraSP(Context(settings=settings, graph=graph, models=models, kg=kg),
                      GraSPOptions(triples_only=True, scan_cap=cap_))
            m.extract(hub, "Benchland", q, [])
            ts = []
            for _ in range(repeat):
                t1 = time.perf_counter()
                sub = m.extract(hub, "Benchland", q, [])
                ts.append((time.perf_counter() - t1) * 1e3)
            label = f"{cap_:,}" + (" (uncapped)" if cap_ == n else "")
            print(f"{label:>12}{percentile(ts, 50):>12.1f} / {percentile(ts, 95):<8.1f}{len(sub.facts):>7}")
    finally:
        for i in range(0, len(ents), 10_000):
            write(graph, "grasp_bench_delete_entities", ids=ents[i:i + 10_000])
        write(graph, "grasp_bench_delete_relations", ids=list(rels))
        graph.close()


# --------------------------------------------------------------------------- 3. calls
def bench_calls(path: Path) -> None:
    rep = json.loads(Path(path).read_text())
    rows = rep.get("questions", [])
    small = [((r.get("cost") or {}).get("softprompt") or {}).get("calls", 0) for r in rows]
    large = [((r.get("cost") or {}).get("chat") or {}).get("calls", 0) for r in rows]
    chat = rep.get("options", {}).get("chat", "?")
    print(f"\n3. Model calls per question ({len(rows)} questions of {path}; chat: {chat})")
    print(f"   small (LLM_select, soft prompt): mean {np.mean(small) if small else float('nan'):.2f}, max "
          f"{max(small, default=0)}  ·  large (LLM_answer): mean {np.mean(large) if large else float('nan'):.2f}, "
          f"max {max(large, default=0)}")
    print("   design bound: one small + one large call per round (+ JSON retries of the large model), ≤ 3 rounds; "
          "the paper's Table 5 values are not in our copy of the text")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--llm-hidden", type=int, default=576, help="the soft-prompt LLM's hidden size (SmolLM2-135M)")
    ap.add_argument("--starts", type=int, default=20)
    ap.add_argument("--hubs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-graph", action="store_true", help="only the encoder table")
    ap.add_argument("--calls", type=Path, help="a `kgqa eval --json --out` report of GraSP")
    ap.add_argument("--hub", type=int, help="add a synthetic hub of this in-degree, time extraction, delete it")
    args = ap.parse_args()

    import torch

    torch.set_num_threads(int(os.environ.get("KGQA_TORCH_THREADS", "1")))
    bench_encoder(args.repeat, args.llm_hidden)
    if args.hub:
        bench_hub(args.hub, min(args.repeat, 10))
    elif not args.no_graph:
        bench_extraction(args.starts, args.hubs, args.seed)
    if args.calls:
        bench_calls(args.calls)


if __name__ == "__main__":
    main()
