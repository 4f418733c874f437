"""GraSP's depth weight (relation chains without a reader or head: ``-o depth_weight=W``) chosen on folds by topic.

    for w in 0 0.02 0.05 0.1 0.2 0.5 2; do
        kgqa eval ../shared/datasets/more-dev/questions.jsonl --gold-start --method grasp \\
            -o grasp.depth_weight=$w --quiet --out .kgqa/depth/grasp-w$w.json
    done
    .venv/bin/python -m bench.grasp_depth .kgqa/depth/grasp-w*.json

Reads the ``kgqa eval --out`` reports (one per weight, the option read from each report) of one question file,
folds its questions by topic entity (``bench.paths.folds_by_topic``, 5 folds, seed 0), and per fold picks the
weight with the best EM on the other folds' questions (a tie: the smaller weight), scored on the fold's own.
Prints each weight's EM overall and per hop, each fold's choice and held-out EM, and the held-out total per hop.
Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from types import SimpleNamespace

from bench.paths import folds_by_topic


def load(path: Path) -> tuple[float, dict[str, dict]]:
    report = json.loads(path.read_text())
    report = report["methods"]["grasp"] if "methods" in report else report
    opts = (report.get("options") or {}).get("options") or {}
    weight = [float(v) for k, v in opts.items() if k.split(".")[-1] == "depth_weight"]
    if not weight:
        raise SystemExit(f"{path}: no -o depth_weight=W in this report's options")
    return weight[0], {q["id"]: q for q in report["questions"]}


def em(rows: list[dict]) -> str:
    by = {}
    for r in rows:
        by.setdefault(r["hops"], []).append(bool(r["exact_match"]))
    pct = lambda v: 100.0 * sum(v) / max(1, len(v))    # noqa: E731
    return f"{pct([bool(r['exact_match']) for r in rows]):.1f} (" + " / ".join(
        f"{pct(by[h]):.1f}" for h in sorted(by)) + f"; n {len(rows)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+", type=Path)
    ap.add_argument("--questions", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets"
                    / "more-dev" / "questions.jsonl")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    runs = dict(sorted(load(p) for p in args.reports))
    lines = [json.loads(x) for x in args.questions.read_text().splitlines() if x.strip()]
    qs = [SimpleNamespace(id=q["id"], topic=SimpleNamespace(id=q["topic"]["id"])) for q in lines]
    for w, rows in runs.items():
        print(f"depth_weight {w:g}: EM {em([rows[q.id] for q in qs])}")
    held: list[dict] = []
    for i, fold in enumerate(folds_by_topic(qs, args.folds, seed=0)):
        inside = {q.id for q in fold}
        rest = [q.id for q in qs if q.id not in inside]
        pick = max(runs, key=lambda w: (sum(bool(runs[w][i_]["exact_match"]) for i_ in rest), -w))
        rows = [runs[pick][q.id] for q in fold]
        held += rows
        print(f"fold {i}: chosen {pick:g} on the other folds; held out EM {em(rows)}")
    print(f"held out, all folds: EM {em(held)}")


if __name__ == "__main__":
    main()
