"""Benchmark GraSP's node-scoring head (``head=nodes``) beside VisPath's default, one run.

    KGQA_TORCH_THREADS=1 python -m bench.grasp_nodes --questions data/demo/questions.jsonl \
        --checkpoint data/demo/grasp/grasp-nodes.safetensors [--train 5000] [--drop 0,0.2] [--limit N]
        [--settings grounded,gold-start] [--folds 5 [--fold-data]] [--out DIR]

Needs the KG of the questions loaded in the Neo4j the environment names (KGQA_*/NEO4J_*).

1. P6: encoder + head (``GraphNodeScorer``, hop one-hot and path features as ``kgqa train grasp`` builds
   it) forward time at N = 61, 250, 500 nodes (2N facts, 40 relations, random 384-d features) beside the soft-prompt encoder (GAT + projector to 576,
   SmolLM2-135M's width) on the same graph; ms p50 / p95 on ``KGQA_TORCH_THREADS`` threads
   (set 1); the goal ≤ 10 ms p50 at 250 nodes.
2. ``--train N``: ``kgqa train grasp --head nodes --examples N`` (generated questions, the
   topics of ``--questions`` excluded) into ``--checkpoint``; examples/s and the minutes that
   5,000 examples take at this rate (generation + subgraphs + 3 epochs), the loss curve beside it.
3. VisPath (defaults) and GraSP (``head=nodes``) graph-only (``KGQA_CHAT_BACKEND=none``: no chat LLM
   for either; GraSP's head is its LLM_select), in one process (``kgqa eval``'s runner), for every
   ``--settings`` (grounded: the start from the image; gold-start: the topic given) and every
   ``--drop`` share of the topic entity's facts hidden (seed 0); EM, start-entity accuracy and gold
   path side by side and the points each loses against 0 %. ``--folds K`` (a KG the checkpoint was
   not trained on, e.g. more-dev): a checkpoint per fold by topic entity, trained without the fold's
   topics, scores the fold (``--fold-data``: plus the other folds' QA pairs).

Prints tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


KGQA = str(Path(sys.executable).with_name("kgqa"))


def bench_p6(repeat: int, layers: int) -> None:
    import torch

    from kgqa.gnn.encoder import GraphNodeScorer, GraphSoftPromptEncoder
    from kgqa.methods.grasp.subgraph import PATH_FEATURES

    threads = int(os.environ.get("KGQA_TORCH_THREADS", "1"))
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    head = GraphNodeScorer(384, 384, num_layers=layers, hop_features=4,
                           path_features=PATH_FEATURES).eval()     # as kgqa train grasp makes it
    soft = GraphSoftPromptEncoder(384, 384, 576).eval()
    print(f"\n1. P6: GAT ({layers} layers × 128, 4 heads, hop one-hot, {PATH_FEATURES} path features) + "
          f"node-scoring head vs GAT (2 layers) + "
          f"soft-prompt projector (→ 576); "
          f"torch threads {threads}; {repeat} runs after a warm-up")
    print("   wall = perf_counter; cpu = this thread's CPU time (the fair figure when the machine is shared)")
    print(f"{'nodes':>6} {'facts':>6} {'head wall p50':>13} {'cpu p50':>8} {'p95':>7} {'soft wall p50':>13} "
          f"{'cpu p50':>8} {'p95':>7}  {'goal (cpu p50)':<13} {'path feats':>10}")
    for n in (61, 250, 500):
        g = torch.Generator().manual_seed(n)
        inp = (torch.randn(n, 384, generator=g), torch.randint(0, n, (2, 2 * n), generator=g),
               torch.randint(0, 40, (2 * n,), generator=g), torch.randn(40, 384, generator=g),
               torch.randn(384, generator=g), torch.tensor([True] + [False] * (n - 1)))
        hop = torch.cat([torch.zeros(1, dtype=torch.long), torch.randint(1, 4, (n - 1,), generator=g)])
        path = torch.rand(n, PATH_FEATURES, generator=g)
        row = []
        for m, args in ((head, inp + (hop, path)), (soft, inp)):
            with torch.inference_mode():
                for _ in range(3):
                    m(*args)
                ts, cs = [], []
                for _ in range(repeat):
                    t, c = time.perf_counter(), time.thread_time()
                    m(*args)
                    ts.append((time.perf_counter() - t) * 1000)
                    cs.append((time.thread_time() - c) * 1000)
            row += [np.percentile(ts, 50), np.percentile(cs, 50), np.percentile(cs, 95)]
        goal = ("≤ 10 ms: " + ("met" if row[1] <= 10 else "NOT met")) if n == 250 else ""
        feats = path_feature_ms(n, repeat)
        print(f"{n:>6} {2 * n:>6} {row[0]:>13.2f} {row[1]:>8.2f} {row[2]:>7.2f} {row[3]:>13.2f} {row[4]:>8.2f} "
              f"{row[5]:>7.2f}  {goal:<13} {feats:>10.2f}")
    print("   path feats = kgqa.methods.grasp.subgraph.path_features on a synthetic 3-hop subgraph of that size "
          "(cpu p50, ms; computed once per subgraph, outside P6's encoder + head)")


def path_feature_ms(n: int, repeat: int) -> float:
    """Thread CPU ms p50 of ``path_features`` on a synthetic breadth-first 3-hop subgraph: n nodes (an eighth
    at hop 1, a third at hop 2, the rest at hop 3), each linked to a random node of the hop before, then facts
    between random nodes of consecutive hops up to 2n facts; 40 relations, random unit 384-d embeddings."""
    from kgqa.methods.grasp.subgraph import Fact, Subgraph, path_features

    rng = np.random.default_rng(n)
    sizes = [1, max(1, n // 8), max(1, n // 3)]
    sizes.append(n - sum(sizes))
    hops = [h for h, k in enumerate(sizes) for _ in range(k)]
    ids = [f"Q{i}" for i in range(n)]
    by_hop = [[i for i in range(n) if hops[i] == h] for h in range(4)]
    facts, seen = [], set()

    def add(a: int, b: int) -> None:
        r = f"P{int(rng.integers(40))}"
        h, t = (a, b) if rng.random() < 0.5 else (b, a)
        if (h, r, t) not in seen:
            seen.add((h, r, t))
            facts.append(Fact(ids[h], r, ids[t], hops[b], 0.5))

    for i in range(1, n):
        add(int(rng.choice(by_hop[hops[i] - 1])), i)
    while len(facts) < 2 * n:
        h = int(rng.integers(1, 4))
        add(int(rng.choice(by_hop[h - 1])), int(rng.choice(by_hop[h])))
    sub = Subgraph(ids[0], {i: i for i in ids}, facts, {}, {ids[i]: hops[i] for i in range(n)})
    rel = rng.standard_normal((40, 384)).astype(np.float32)
    rel /= np.linalg.norm(rel, axis=1, keepdims=True)
    q = rng.standard_normal(384).astype(np.float32)
    q /= np.linalg.norm(q)
    index = {f"P{i}": i for i in range(40)}
    path_features(sub, index, rel, q)
    cs = []
    for _ in range(repeat):
        c = time.thread_time()
        path_features(sub, index, rel, q)
        cs.append((time.thread_time() - c) * 1000)
    return float(np.percentile(cs, 50))


def bench_train(n: int, questions: Path, checkpoint: Path, epochs: int, hops: int | None) -> None:
    print(f"\n2. kgqa train grasp --head nodes --examples {n} --epochs {epochs} (topics of {questions} excluded)")
    t = time.perf_counter()
    p = subprocess.run([KGQA, "train", "grasp", "--head", "nodes", "--examples", str(n), "--epochs", str(epochs),
                        "--exclude", str(questions), "--checkpoint", str(checkpoint), "--json"]
                       + (["-o", f"hops={hops}"] if hops else []),
                       capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode:
        print("   failed:", (p.stderr.strip().splitlines() or ["?"])[-1])
        return
    r = json.loads(p.stdout[p.stdout.index("{"):])
    s = r["seconds"]
    per = (s["generate"] + s["prepare"]) / max(r["examples"], 1) + s["train"] / max(r["used"], 1)
    print(f"   {r['examples']} generated, {r['used']} used ({r['dropped_answer_not_in_subgraph']} answers not in the "
          f"subgraph); generate {s['generate']:.0f} s, subgraphs {s['prepare']:.0f} s, train {s['train']:.0f} s "
          f"({r['used'] * epochs / max(s['train'], 1e-9):.0f} examples/s per epoch step); wall {wall:.0f} s")
    print(f"   5,000 examples at this rate: {per * 5000 / 60:.1f} min; loss per epoch "
          + " → ".join(f"{v:.3f}" for v in r["epoch_losses"]) + f"; curve {r['plot']}; KG {r['kg_fingerprint']}")


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


def fold_checkpoints(rt, questions, raw: dict, a) -> list[tuple[list, Path]]:
    """One nodes checkpoint per fold by topic entity, each trained without the fold: generated questions
    whose topics are not the fold's (``--fold-examples``), plus with ``--fold-data`` the other folds' QA pairs."""
    import tempfile

    from bench.paths import folds_by_topic

    from kgqa.methods.grasp.options import GraSPOptions
    from kgqa.methods.grasp.training import train_grasp

    tmp = Path(tempfile.mkdtemp(prefix="kgqa-grasp-folds-"))
    out = []
    for i, fold in enumerate(folds_by_topic(questions, a.folds, seed=0)):
        held = {q.id for q in fold}
        excl = write_lines(tmp / f"fold-{i}.jsonl", [raw[q.id] for q in fold])
        data = write_lines(tmp / f"train-{i}.jsonl", [raw[q.id] for q in questions if q.id not in held]) \
            if a.fold_data else None
        ck = tmp / f"fold-{i}.safetensors"
        t = time.perf_counter()
        rep = train_grasp(rt.context(), options=GraSPOptions(**({"hops": a.hops} if a.hops else {})), variant="nodes",
                          data=data, exclude=excl, epochs=a.epochs, lr=1e-3, seed=0, checkpoint=ck,
                          examples=a.fold_examples, **({"with_generated": True} if data else {}))
        print(f"   fold {i + 1}/{a.folds}: {len(fold)} held-out questions; trained on {rep['used']} of "
              f"{rep['examples']} examples ({rep['how']}) in {time.perf_counter() - t:.0f} s", flush=True)
        out.append((fold, ck))
    return out


def bench_eval(a) -> None:
    """VisPath (defaults) and GraSP (head=nodes) graph-only, in one process, every setting × drop share."""
    os.environ["KGQA_CHAT_BACKEND"] = "none"
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.eval.runner import run_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings

    s = Settings()
    questions, _ = load_questions(a.questions)
    questions = questions[: a.limit] if a.limit else questions
    raw = {json.loads(x)["id"]: x for x in a.questions.read_text(encoding="utf-8").splitlines() if x.strip()}
    drops = [float(x) for x in a.drop.split(",")]
    settings = [x for x in a.settings.split(",") if x]
    how = (f"{a.folds} folds by topic entity, a checkpoint per fold trained without it"
           + (" (generated questions + the other folds' QA pairs)" if a.fold_data else " (generated questions)")
           if a.folds else f"checkpoint {a.checkpoint}")
    print(f"\n3. {a.questions} ({len(questions)} questions), VisPath defaults vs GraSP head=nodes, graph-only "
          f"(KGQA_CHAT_BACKEND=none), drop-edges seed 0; GraSP: {how}; {s.neo4j_uri}", flush=True)

    def rate(rs, attr) -> float:
        v = [getattr(r, attr) for r in rs if getattr(r, attr) is not None]
        return 100.0 * sum(bool(x) for x in v) / len(v) if v else float("nan")

    fields = ("exact_match", "start_entity", "gold_path", "why_wrong", "prediction", "hops", "seconds", "error")
    with open_runtime(s) as rt:
        shared = {"graph": rt.graph, "models": rt.models, "kg": rt.kg, "write_trace": False}
        cks = fold_checkpoints(rt, questions, raw, a) if a.folds else [(questions, a.checkpoint)]
        vis = Pipeline(s, "vispath", options={}, **shared)
        grasp = [(fold, Pipeline(s, "grasp", options={"head": "nodes", "checkpoint": str(ck)}, **shared))
                 for fold, ck in cks]
        table = []
        for setting in settings:
            gold = setting == "gold-start"
            for d in drops:
                t = time.perf_counter()
                rv = run_questions(questions, vis, gold_start=gold, drop_edges=d, seed=0)
                tv = time.perf_counter() - t
                rg = [r for fold, p in grasp for r in run_questions(fold, p, gold_start=gold, drop_edges=d, seed=0)]
                tg = time.perf_counter() - t - tv
                if a.out:
                    a.out.mkdir(parents=True, exist_ok=True)
                    for m, rs in (("vispath", rv), ("grasp", rg)):
                        (a.out / f"{setting}.{d:g}.{m}.json").write_text(json.dumps(
                            {r.id: {f: getattr(r, f) for f in fields} for r in rs}, indent=1), encoding="utf-8")
                table.append((setting, d, rv, rg, tv / len(rv), tg / max(len(rg), 1)))
                print(f"   {setting} drop {d:.0%}: VisPath EM {rate(rv, 'exact_match'):.1f}, GraSP EM "
                      f"{rate(rg, 'exact_match'):.1f} ({tv + tg:.0f} s)", file=sys.stderr, flush=True)
    print(f"{'setting':<11} {'drop':>5} {'n':>4} {'VisPath EM':>10} {'start':>6} {'path':>5} {'lost':>5} "
          f"{'GraSP EM':>9} {'start':>6} {'path':>5} {'lost':>5} {'errors':>6} {'s/q V · G':>11}")
    for setting, d, rv, rg, sv, sg in table:
        base = next(x for x in table if x[0] == setting and x[1] == 0.0) if 0.0 in drops else None
        lv = rate(base[2], "exact_match") - rate(rv, "exact_match") if base else float("nan")
        lg = rate(base[3], "exact_match") - rate(rg, "exact_match") if base else float("nan")
        print(f"{setting:<11} {d:>5.0%} {len(rv):>4} {rate(rv, 'exact_match'):>9.1f}% {rate(rv, 'start_entity'):>5.0f}% "
              f"{rate(rv, 'gold_path'):>4.0f}% {lv:>5.1f} {rate(rg, 'exact_match'):>8.1f}% "
              f"{rate(rg, 'start_entity'):>5.0f}% {rate(rg, 'gold_path'):>4.0f}% {lg:>5.1f} "
              f"{sum(1 for r in rg if r.error):>6} {sv:>5.2f} · {sg:<5.2f}")
    print("EM = exact match (aliases accepted); start = start-entity accuracy; path = gold path among the "
          "evidence paths; lost = EM points below the same setting at 0 %; errors = GraSP questions that raised")
    errs = sorted({r.error for _, _, _, rg, _, _ in table for r in rg if r.error})
    for e in errs[:3]:
        print(f"   GraSP error: {e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=Path, required=True)
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--train", type=int, help="train the checkpoint first on this many generated questions")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--hops", type=int, help="extraction hops of the checkpoints trained here (default: GraSP's)")
    ap.add_argument("--drop", default="0,0.2", help="shares of the topic's facts hidden, comma-separated")
    ap.add_argument("--settings", default="grounded,gold-start", help="grounded (start from the image / question) "
                    "and/or gold-start (the topic entity given: kgqa eval --gold-start), comma-separated")
    ap.add_argument("--folds", type=int, default=0, help="train a checkpoint per fold by topic entity, without the "
                    "fold (a KG the --checkpoint was not trained on, e.g. more-dev); 0: --checkpoint for all")
    ap.add_argument("--fold-examples", type=int, default=5000, help="generated questions per fold checkpoint")
    ap.add_argument("--fold-data", action="store_true", help="also train each fold's checkpoint on the other "
                    "folds' QA pairs (--data)")
    ap.add_argument("--out", type=Path, help="write per-question results here (setting.drop.method.json)")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--no-eval", action="store_true")
    a = ap.parse_args()
    print(f"bench/grasp_nodes.py · torch threads {os.environ.get('KGQA_TORCH_THREADS', '(unset)')} · "
          f"load {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    bench_p6(a.repeat, a.hops or 2)
    if a.train:
        bench_train(a.train, a.questions, a.checkpoint, a.epochs, a.hops)
    if not a.no_eval:
        bench_eval(a)


if __name__ == "__main__":
    main()
