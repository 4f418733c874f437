"""Does GraSP's first subgraph hold the gold path? Recall per hop of the question and per step of the path.

    KGQA_TORCH_THREADS=1 python -m bench.grasp_subgraph data/demo/questions-4hop.jsonl /work/data/heldout-demo.jsonl
        [--grasp-option KEY=VALUE ...] [--limit N] [--misses]

Needs the KG of the questions loaded in the Neo4j the environment names (KGQA_*/NEO4J_*). For each question with a
gold ``path``, GraSP's round-1 extraction (Section 4.1) from the gold topic, with its defaults (the chain reader
orders the facts where it fits the KG) or the options given: whether every fact of the gold path is in the
subgraph, per hop of the question, and for the questions where it is not, at which step of the path the first
gold fact is missing (1 = the topic's own fact); the subgraph's mean facts and nodes, and how many facts each
hop took. Graph-only, one run; prints; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter, defaultdict
from pathlib import Path


def gold_lost_at(path: list[list[str]], keys: set[str]) -> int:
    """0 when every fact of ``path`` ([head, relation, tail] each) is in ``keys``, else the 1-based step of the
    first one missing."""
    for k, (h, r, t) in enumerate(path, 1):
        if f"{h}|{r}|{t}" not in keys:
            return k
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("questions", type=Path, nargs="+")
    ap.add_argument("--grasp-option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--misses", action="store_true", help="print each question whose gold path is not kept")
    args = ap.parse_args()
    os.environ["KGQA_CHAT_BACKEND"] = "none"
    os.environ.setdefault("KGQA_TORCH_THREADS", "1")
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings

    s = Settings()
    opts = dict(kv.split("=", 1) for kv in args.grasp_option)
    with open_runtime(s) as rt:
        g = Pipeline(s, "grasp", options=opts, graph=rt.graph, models=rt.models, kg=rt.kg, write_trace=False).method
        for qfile in args.questions:
            rows = [json.loads(line) for line in qfile.read_text(encoding="utf-8").splitlines() if line.strip()]
            rows = [r for r in rows if r.get("path")][: args.limit or None]
            kept: dict[int, list[int]] = defaultdict(list)
            lost_at: Counter = Counter()
            facts = nodes = 0
            per_hop: Counter = Counter()
            for r in rows:
                q_vec = g.kg.embed([r["question"]])[0]
                reader = None
                if g.variant == "nodes" and g.reader is not None:
                    reader = g.reader.get()
                hops = g.opt.reader_hops if reader is not None and not g.hops_set else g.opt.hops
                sub = g.extract(r["topic"]["id"], r["topic"].get("label", ""), q_vec, [], hops,
                                reader if g.opt.chain_extraction else None, r["question"])
                at = gold_lost_at(r["path"], {f.key for f in sub.facts})
                kept[len(r["path"])].append(at == 0)
                lost_at[at] += at > 0
                facts += len(sub.facts)
                nodes += len(sub.names)
                per_hop.update(f.hop for f in sub.facts)
                if at and args.misses:
                    print(f"    lost at step {at}: {r['id']} {r['question']!r}")
            n = max(len(rows), 1)
            cells = " · ".join(f"{h}-hop {100.0 * sum(v) / len(v):.1f} ({sum(v)}/{len(v)})"
                               for h, v in sorted(kept.items()))
            total = sum(sum(v) for v in kept.values())
            print(f"{qfile.name}: gold path kept {100.0 * total / n:.1f} % ({cells}); lost at step "
                  f"{dict(sorted((k, v) for k, v in lost_at.items() if k))}; mean facts {facts / n:.1f}, nodes "
                  f"{nodes / n:.1f}; facts per extraction hop {dict(sorted((h, round(c / n, 1)) for h, c in per_hop.items()))}"
                  f" · options {opts or 'defaults'}", flush=True)


if __name__ == "__main__":
    main()
