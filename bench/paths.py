"""The learned relation-path retriever on more-dev, beside today's rules, in one run.

    .venv/bin/python -m bench.paths                          # all 249 questions, --gold-start and grounded
    .venv/bin/python -m bench.paths --limit 60 --folds 3 --settings gold-start

Needs a Neo4j holding the more-dev KG only (its own KG; the connection comes from the environment as for
every kgqa command: NEO4J_URI, NEO4J_PASSWORD), e.g.

    kgqa load wikidata5m --path ../shared/datasets/more-dev/kg --images ../shared/datasets/more-dev/kg/images

Graph-only (KGQA_CHAT_BACKEND=none is forced), VisPath's default options plus, per row:

* ``rules``: ``-o path_scorer=rules`` (today's default, the non-LLM sketch);
* ``learned (shipped)``: ``-o path_scorer=learned`` with the checkpoint in ``data/demo/paths/``, trained on
  the demo KG's generated questions only (it never saw more-dev: every question is held out for it);
* ``learned (more-dev folds)``: k-fold by topic entity: for each fold a retriever trained
  (``kgqa.training.path_supervision.train_path_retriever``, the questions of the other folds, answers only, paths
  searched) and evaluated on the fold's questions only;
* ``paper``: the paper's literal reading (bench/scale.py's "paper" variant), for reference.

Settings: ``gold-start`` (``kgqa eval --gold-start``: path reasoning alone) and ``grounded`` (the query image
grounds the start entity). Prints EM (and EM per hop count), gold path retained and seconds per question;
torch threads = KGQA_TORCH_THREADS (default 1), stated. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MORE = ROOT.parent / "shared" / "datasets" / "more-dev"
PAPER = {"intent_fallback": "question", "edge_relation_weight": "0", "chain_relation_weight": "0",
         "depth_fallback": "dmax", "chain_score": "sbert", "keep_label_match": "false", "answer_typing": "false",
         "M1_per_relation": "0", "delta": "0.05", "M3_fallback": "0", "delta_grounding": "0",
         "path_scorer": "rules"}


def folds_by_topic(questions, k: int, seed: int) -> list[list]:
    topics = sorted({q.topic.id for q in questions})
    random.Random(seed).shuffle(topics)
    fold_of = {t: i % k for i, t in enumerate(topics)}
    return [[q for q in questions if fold_of[q.topic.id] == i] for i in range(k)]


def summarise(results) -> dict:
    def rate(rs, attr):
        v = [getattr(r, attr) for r in rs if getattr(r, attr) is not None]
        return 100.0 * sum(v) / len(v) if v else float("nan")
    hops = sorted({r.hops for r in results if r.hops})
    return {"n": len(results), "em": rate(results, "exact_match"), "gold_path": rate(results, "gold_path"),
            "start": rate(results, "start_entity"),
            "per_hop": {h: rate([r for r in results if r.hops == h], "exact_match") for h in hops},
            "s_per_q": sum(r.seconds or 0 for r in results) / max(1, len(results)),
            "fallback_checkpoint": sum(r.fallbacks.get("checkpoint", 0) for r in results)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, default=MORE / "questions.jsonl")
    ap.add_argument("--limit", type=int, default=0, help="first N questions (0: all)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--settings", default="gold-start,grounded")
    ap.add_argument("--shipped", type=Path, default=ROOT / "data" / "demo" / "paths" / "path-retriever.safetensors")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()

    os.environ["KGQA_CHAT_BACKEND"] = "none"
    os.environ.setdefault("KGQA_TORCH_THREADS", "1")
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.eval.runner import run_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings
    from kgqa.training.path_supervision import train_path_retriever

    s = Settings()
    questions, _ = load_questions(args.questions)
    if args.limit:
        questions = questions[: args.limit]
    raw = {json.loads(line)["id"]: line for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()}
    settings = [x.strip() for x in args.settings.split(",") if x.strip()]
    print(f"more-dev: {len(questions)} questions, {len({q.topic.id for q in questions})} topics · graph-only · "
          f"torch threads {s.torch_threads} · {os.cpu_count()} CPUs (shared)")
    rows: dict[str, dict[str, dict]] = {}
    with open_runtime(s) as rt:
        shared = {"graph": rt.graph, "models": rt.models, "kg": rt.kg, "write_trace": False}

        def run(name: str, options: dict, qs, setting: str):
            p = Pipeline(s, "vispath", options=options, **shared)
            return run_questions(qs, p, gold_start=setting == "gold-start")

        # folds: one retriever per fold, trained on the other folds' questions (answers only)
        folds = folds_by_topic(questions, args.folds, seed=0)
        tmp = Path(tempfile.mkdtemp(prefix="kgqa-paths-"))
        ckpts, train_s = [], 0.0
        for i, fold in enumerate(folds):
            held = {q.id for q in fold}
            data = tmp / f"train-{i}.jsonl"
            data.write_text("\n".join(raw[q.id] for q in questions if q.id not in held) + "\n", encoding="utf-8")
            t0 = time.perf_counter()
            rep = train_path_retriever(rt.graph, rt.kg, checkpoint=tmp / f"fold-{i}.safetensors", data=data,
                                       examples=0, generated=False, epochs=args.epochs, seed=0)
            train_s += time.perf_counter() - t0
            ckpts.append(tmp / f"fold-{i}.safetensors")
            print(f"fold {i + 1}/{args.folds}: {len(fold)} held out, trained on {rep['used']} "
                  f"({rep['dropped_no_path']} without a path), loss {rep['epoch_losses'][0]:.3f} → "
                  f"{rep['epoch_losses'][-1]:.3f}", flush=True)
        for setting in settings:
            res = rows.setdefault(setting, {})
            res["rules (today's default)"] = summarise(run("rules", {"path_scorer": "rules"}, questions, setting))
            res["learned (shipped, demo KG only)"] = summarise(run("shipped", {
                "path_scorer": "learned", "path_checkpoint": str(args.shipped)}, questions, setting))
            fold_results = []
            for fold, ck in zip(folds, ckpts):
                fold_results += run("fold", {"path_scorer": "learned", "path_checkpoint": str(ck)}, fold, setting)
            res[f"learned (more-dev {args.folds}-fold, held out)"] = summarise(fold_results)
            res["paper's reading"] = summarise(run("paper", PAPER, questions, setting))
            print(f"[{setting} done]", flush=True)

    hops = sorted({h for r in rows.values() for v in r.values() for h in v["per_hop"]})
    for setting, res in rows.items():
        print(f"\n{setting}  (n={len(questions)}; EM %, per hop EM %, gold path retained %, start %, s/question)")
        print(f"{'scorer':<38} {'EM':>6} " + " ".join(f"{f'{h}-hop':>6}" for h in hops)
              + f" {'path':>6} {'start':>6} {'s/q':>6} {'ckpt fb':>7}")
        for name, m in res.items():
            print(f"{name:<38} {m['em']:6.1f} " + " ".join(f"{m['per_hop'].get(h, float('nan')):6.1f}" for h in hops)
                  + f" {m['gold_path']:6.1f} {m['start']:6.1f} {m['s_per_q']:6.2f} {m['fallback_checkpoint']:7d}")
    print(f"\nfold training: {train_s:.1f} s for {args.folds} retrievers")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
