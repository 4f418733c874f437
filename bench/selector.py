"""VisPath's learned terminal selection (``-o selector=learned``): features, folds, the shipped weights.

    # 1. per graph (the connection from the environment): run VisPath graph-only with today's defaults and
    #    keep, per question, every retained path's features (kgqa.methods.vispath.selection.FEATURES), whether
    #    its endpoint is an answer (exact match with the answer or an alias) and what the rules chose
    .venv/bin/python bench/selector.py dump --graph more-dev --out DIR [--settings gold-start,grounded]
    # 2. k folds by topic entity (bench/paths.folds_by_topic, the folds of bench/choose_defaults.py): per fold
    #    a ranker fitted on the other folds' questions of every graph given, scored on the fold's own; then one
    #    fitted on all of them, written to --write (the shipped file: src/kgqa/methods/vispath/selector.json)
    .venv/bin/python bench/selector.py fit --out DIR --graphs more-dev,more-dev-buried-wl,more-dev-buried \
        [--write src/kgqa/methods/vispath/selector.json] [--fold-weights DIR/folds]

The terminal ranking does not change what a hop retains, so a ranker's held-out EM is read off the dump
exactly: the top-scored path's endpoint is the answer. ``--fold-weights`` writes each fold's weights, so that
bench/choose_defaults.py can run them through ``kgqa``'s own code (``--selector-folds``) and confirm it.

Prints, per graph and setting: the rules' EM, the learned ranker's held-out EM (per hop), the questions it
fixes and breaks, the oracle (an answer among the retained endpoints). Torch threads = KGQA_TORCH_THREADS
(default 1), stated. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from paths import MORE, folds_by_topic  # noqa: E402


def dump(args) -> None:
    os.environ["KGQA_CHAT_BACKEND"] = "none"
    os.environ.setdefault("KGQA_TORCH_THREADS", "1")
    from kgqa.app.eval.metrics import exact_match
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings

    s = Settings()
    questions, _ = load_questions(args.questions)
    opts = dict(o.split("=", 1) for o in args.option)
    print(f"{args.graph}: {len(questions)} questions · graph-only · torch threads {s.torch_threads} · "
          f"{os.cpu_count()} CPUs · options {opts or 'defaults'}", flush=True)
    with open_runtime(s) as rt:
        p = Pipeline(s, "vispath", options={**opts, "selector": "rules"}, graph=rt.graph, models=rt.models,
                     kg=rt.kg, write_trace=False)
        vp = p.method
        runs = []
        run = vp.run

        def keep(*a, **k):            # the run itself: the Answer carries only what the user sees
            r = run(*a, **k)
            runs.append(r)
            return r

        vp.run = keep
        for setting in args.settings.split(","):
            out = args.out / args.graph / f"{setting}.json"
            if out.is_file():
                continue
            t0 = time.perf_counter()
            rows = {}
            for q in questions:
                runs.clear()
                has_image = q.image_path is not None
                p.answer(q.question, image=q.image_path,
                         entity_id=q.topic.id if setting == "gold-start" and q.topic else None)
                r = runs[-1]
                paths = ([x for h in r.hops for x in h.retained if x.edges and x.end_id != r.start.id]
                         if r.start is not None else [])
                row = {"hops": q.hops, "rules": bool(exact_match(r.answer, q.answer, q.aliases)), "X": [], "y": []}
                rs = r.relation_sketch
                if paths and rs is not None and rs.sims is not None:
                    typing = vp.scorer.path_typing(q.question, has_image, paths) if vp.opt.answer_typing else {}
                    row["X"] = vp.scorer.selection_features(q.question, has_image, rs, paths, typing).round(5).tolist()
                    row["y"] = [bool(exact_match(x.end_name, q.answer, q.aliases)) for x in paths]
                rows[q.id] = row
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(rows), encoding="utf-8")
            print(f"  {setting}: {time.perf_counter() - t0:.0f} s", flush=True)


def fit_cmd(args) -> None:
    from kgqa.app.eval.questions import load_questions
    from kgqa.methods.vispath.selection import FEATURES, fit

    questions, _ = load_questions(args.questions)
    folds = folds_by_topic(questions, args.folds, seed=0)
    fold_of = {q.id: i for i, f in enumerate(folds) for q in f}
    graphs = args.graphs.split(",")
    data = {}                                           # (graph, setting) -> {qid: row}
    for g in graphs:
        for setting in args.settings.split(","):
            f = args.out / g / f"{setting}.json"
            if f.is_file():
                data[(g, setting)] = json.loads(f.read_text(encoding="utf-8"))
    if not data:
        sys.exit(f"no dumps under {args.out} for {args.graphs}: run `bench/selector.py dump` first")

    def groups(keep) -> list:
        return [(np.array(r["X"]), np.array(r["y"])) for (g, st), rows in data.items() if st in args.train_settings
                for qid, r in rows.items() if r["X"] and keep(qid)]

    def top_right(sel, r) -> bool:
        if not r["X"]:
            return r["rules"]
        s = sel.scores(np.array(r["X"]))
        best = np.flatnonzero(s == s.max())
        # ties: the first in retained order (rank_endpoints breaks them by σ, the first feature)
        sig = np.array(r["X"])[best, 0]
        return bool(r["y"][best[int(np.argmax(sig))]])

    t0 = time.perf_counter()
    fold_sel = []
    for i in range(args.folds):
        fold_sel.append(fit(groups(lambda qid, i=i: fold_of[qid] != i), l2=args.l2))
        if args.fold_weights:
            fold_sel[-1].meta = {"trained_on": f"more-dev folds other than {i} of {args.folds} (seed 0), "
                                                f"graphs {args.graphs}, settings {','.join(args.train_settings)}"}
            fold_sel[-1].save(args.fold_weights / f"fold-{i}-of-{args.folds}.json")
    print(f"fitted {args.folds} fold rankers in {time.perf_counter() - t0:.1f} s (L2 {args.l2}; trained on "
          f"{', '.join(args.train_settings)})\n")
    hops = sorted({r["hops"] for rows in data.values() for r in rows.values() if r["hops"]})
    head = f"{'graph':<20}{'setting':<12}{'n':>5}{'rules':>8}{'learned':>9}" + "".join(f"{f'{h}h':>12}" for h in hops)
    print(head + f"{'fixes':>7}{'breaks':>7}{'oracle':>8}")
    for (g, st), rows in data.items():
        rules = [r["rules"] for r in rows.values()]
        learned = {qid: top_right(fold_sel[fold_of[qid]], r) for qid, r in rows.items()}
        per_hop = "".join(
            f"{100 * np.mean([r['rules'] for r in rows.values() if r['hops'] == h]):>5.0f}→"
            f"{100 * np.mean([learned[q] for q, r in rows.items() if r['hops'] == h]):<4.0f}  " for h in hops)
        fixes = sum(1 for q, r in rows.items() if learned[q] and not r["rules"])
        breaks = sum(1 for q, r in rows.items() if r["rules"] and not learned[q])
        oracle = np.mean([any(r["y"]) if r["X"] else r["rules"] for r in rows.values()])
        print(f"{g:<20}{st:<12}{len(rows):>5}{100 * np.mean(rules):>8.1f}{100 * np.mean(list(learned.values())):>9.1f}"
              f"  {per_hop}{fixes:>5}{breaks:>7}{100 * oracle:>8.1f}")
    full = fit(groups(lambda qid: True), l2=args.l2)
    print("\nweights fitted on every question (standardised features):")
    for f, w in zip(FEATURES, full.weights):
        print(f"  {f:<16}{w:+.3f}")
    if args.write:
        full.meta = {"trained_on": f"more-dev ({len(questions)} MORE questions; graphs {args.graphs}; settings "
                                   f"{','.join(args.train_settings)}), graph-only VisPath defaults; bench/selector.py",
                     "held_out": "bench/selector.py fit --folds 5 reports it on folds by topic it did not see",
                     "l2": args.l2}
        full.save(args.write)
        print(f"wrote {args.write}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--graph", required=True, help="the graph's name (the server is the environment's)")
    d.add_argument("--settings", default="gold-start,grounded")
    d.add_argument("-o", "--option", action="append", default=[], help="a VisPath option KEY=VALUE")
    f = sub.add_parser("fit")
    f.add_argument("--graphs", default="more-dev,more-dev-buried-wl,more-dev-buried")
    f.add_argument("--settings", default="gold-start,grounded", help="the dumps to report")
    f.add_argument("--train-settings", default="gold-start,grounded", type=lambda v: v.split(","))
    f.add_argument("--folds", type=int, default=5)
    f.add_argument("--l2", type=float, default=0.01)
    f.add_argument("--write", type=Path, help="write the ranker fitted on every question here")
    f.add_argument("--fold-weights", type=Path, help="write each fold's ranker here (fold-<i>-of-<k>.json)")
    for p in (d, f):
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--questions", type=Path, default=MORE / "questions.jsonl")
    args = ap.parse_args()
    dump(args) if args.cmd == "dump" else fit_cmd(args)


if __name__ == "__main__":
    main()
