"""The held-out-template set: generated questions phrased only with template families training never draws.

The chain reader ranks the gold chain first on almost every held-out *generated* question, because those are
phrased by the same templates it was trained on. This set is phrased with ``kgqa.core.walk_questions``'
``HELD_OUT_FAMILIES`` (a chain told step by step, stacked possessives, a statement with a gap), which neither
``kgqa train paths`` nor ``kgqa train terminal`` ever draws, over walks of 2–4 facts of the loaded KG:

    # on a loaded KG (the connection from the environment): write the set, then answer it, rows side by side
    .venv/bin/python -m bench.heldout write --n 120 --out .kgqa/heldout-demo.jsonl --exclude data/demo/questions.jsonl
    .venv/bin/python -m bench.heldout run --questions .kgqa/heldout-demo.jsonl

``write`` leaves out the walks (topic, relation chain) that the reader's training recipe draws (the same
generator, its seed and size: ``--train-examples``; with ``--weighted-from CKPT`` the weighted recipe's walks
starting from that reader as well), so each question is a new phrasing *and* a new walk where
the KG has enough walks (the count left out is printed). Each line is in the ``kgqa eval`` format (id, question,
answer, answer_id, aliases, hops, topic, path). ``run`` answers it graph-only, gold start (path reasoning
alone): rows ``rules`` (VisPath, no reader), ``reader`` (VisPath, the default reader and its terminal weights),
``grasp`` (GraSP's defaults: the node head, the default reader ranking; ``--grasp-option`` for others), and one
VisPath row per ``--reader`` checkpoint given; EM and EM per hop. Torch threads =
KGQA_TORCH_THREADS (default 1), stated. Prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from kgqa.training.heldout import em

ROOT = Path(__file__).resolve().parent.parent


def write(args) -> None:
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings
    from kgqa.core.qa_examples import topics_of
    from kgqa.training.heldout import heldout_set

    excl: set[str] = set()
    for p in args.exclude:
        excl |= topics_of(p)
    with open_runtime(Settings()) as rt:
        ctx = rt.context()
        weights = None
        if args.weighted_from:
            from kgqa.models.heads.chain_reader import read_meta
            from kgqa.training.walk_prior import walk_weights

            weights = walk_weights(ctx.graph, ctx.kg, read_meta(args.weighted_from))
        rows, trained = heldout_set(ctx.graph, ctx.kg, args.n, args.seed, excl, args.train_examples,
                                    args.train_seed, train_weights=weights)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    by = {h: sum(r["hops"] == h for r in rows) for h in (2, 3, 4)}
    print(f"{len(rows)} held-out-template questions → {args.out} (by hops {by}; {trained} training walks left out)")


def run(args) -> None:
    os.environ["KGQA_CHAT_BACKEND"] = "none"
    os.environ.setdefault("KGQA_TORCH_THREADS", "1")
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.eval.runner import run_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings

    s = Settings()
    questions, _ = load_questions(args.questions)
    if args.limit:
        questions = questions[:args.limit]
    extra = dict(kv.split("=", 1) for kv in args.option)
    grasp = dict(kv.split("=", 1) for kv in args.grasp_option)
    rows = {"rules": ("vispath", {"path_scorer": "rules"}), "reader": ("vispath", {"path_scorer": "reader", **extra}),
            "grasp": ("grasp", grasp)}
    rows = {k: v for k, v in rows.items() if k in args.rows.split(",")}
    for ck in args.reader:
        rows[f"reader {ck}"] = ("vispath", {"path_scorer": "reader", "reader_checkpoint": str(ck), **extra})
    print(f"{args.questions.name}: {len(questions)} questions · graph-only · gold start · torch threads "
          f"{s.torch_threads} · {os.cpu_count()} CPUs (shared)", flush=True)
    hops = sorted({q.hops for q in questions if q.hops})
    print(f"{'row':40s} {'EM':>6s} " + " ".join(f"{h}-hop".rjust(7) for h in hops) + "  gold kept  s")
    with open_runtime(s) as rt:
        shared = {"graph": rt.graph, "models": rt.models, "kg": rt.kg, "write_trace": False}
        for name, (method, opts) in rows.items():
            t0 = time.perf_counter()
            res = run_questions(questions, Pipeline(s, method, options=opts, **shared), gold_start=True)
            print(f"{name[-40:]:40s} {em(res):6.1f} " + " ".join(f"{em(res, h):7.1f}" for h in hops)
                  + f"  {100.0 * sum(bool(r.gold_path) for r in res) / max(len(res), 1):6.1f}"
                  + f"  {time.perf_counter() - t0:.0f}", flush=True)
            if args.misses:
                for r in res:
                    if not r.exact_match:
                        print(f"    miss {r.id}: {r.question!r} -> {r.prediction!r} (gold {r.gold!r})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", choices=("write", "run"))
    ap.add_argument("--out", type=Path, default=ROOT / ".kgqa" / "heldout.jsonl", help="write: the set's file")
    ap.add_argument("--questions", type=Path, default=ROOT / ".kgqa" / "heldout.jsonl", help="run: the set")
    ap.add_argument("--n", type=int, default=120)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--exclude", type=Path, action="append", default=[], help="write: leave these files' topics out")
    ap.add_argument("--train-examples", type=int, default=1500, help="write: the training recipe's --examples")
    ap.add_argument("--train-seed", type=int, default=0)
    ap.add_argument("--weighted-from", type=Path, default=None, help="write: also leave out the walks the weighted "
                    "recipe (kgqa train paths --walks weighted) starting from this reader draws")
    ap.add_argument("--limit", type=int, default=0, help="run: the first N questions only")
    ap.add_argument("--rows", default="rules,reader", help="run: which of the rows rules, reader, grasp")
    ap.add_argument("--reader", type=Path, action="append", default=[], help="run: a row per reader checkpoint")
    ap.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                    help="run: a VisPath option of the reader rows")
    ap.add_argument("--grasp-option", action="append", default=[], metavar="KEY=VALUE",
                    help="run: a GraSP option of the grasp row")
    ap.add_argument("--misses", action="store_true", help="run: print each wrong answer")
    args = ap.parse_args()
    {"write": write, "run": run}[args.step](args)


if __name__ == "__main__":
    main()
