"""Which VisPath LLM steps help on a CPU: the demo questions live, one step switched on at a time.

    .venv/bin/python -m bench.llm_steps                          # every variant, all demo questions
    .venv/bin/python -m bench.llm_steps --variants floor,ranking,all --limit 10
    .venv/bin/python -m bench.llm_steps --variants all --runtime transformers --limit 3

Each variant is one ``kgqa eval data/demo/questions.jsonl`` subprocess against the running demo
Neo4j (``make demo`` loads it), with VisPath's ``-o llm_steps=…``: the steps named ask the local
chat model, every other step takes its documented fallback (fallback code ``off``), exactly as in
the graph-only setting. ``floor`` is the graph-only setting itself (``KGQA_CHAT_BACKEND=none``),
``all`` the paper (every step asks the model). No replay cache: every model call is live
(``KGQA_MODEL_CACHE_DIR`` is removed from the environment), so seconds are real; the model's
load is paid once per variant and is not in the per-question figures.

Prints EM, SBERT@0.3, start-entity accuracy, gold-path recall, chat calls, completion tokens and
chat seconds per question, and seconds per question (p50, mean) side by side. Threads: llama.cpp
and torch threads = ``--threads`` (KGQA_TORCH_THREADS), stated in the header. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from bench._common import rate

ROOT = Path(__file__).resolve().parent.parent

VARIANTS: dict[str, str | None] = {
    "floor": None,                       # KGQA_CHAT_BACKEND=none: the graph-only floor
    "expression": "expression",
    "ranking": "ranking",
    "sketch": "sketch",
    "intent": "intent",
    "chain": "chain",
    "answer steps": "evidence,answerability,final",
    "verify": "verify",
    "all": "all",
}


def run_variant(label: str, steps: str | None, args) -> dict:
    out = Path(args.out_dir) / f"{label.replace(' ', '_')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "KGQA_TORCH_THREADS": str(args.threads), "KGQA_LOCAL_LLM_RUNTIME": args.runtime}
    env.pop("KGQA_MODEL_CACHE_DIR", None)
    argv = [str(Path(sys.executable).with_name("kgqa")), "eval", str(args.questions), "--quiet", "--json",
            "--out", str(out)]
    if steps is None:
        env["KGQA_CHAT_BACKEND"] = "none"
    else:
        env["KGQA_CHAT_BACKEND"] = "local"
        argv += ["-o", f"llm_steps={steps}"]
    if args.limit:
        argv += ["--limit", str(args.limit)]
    for kv in args.option or []:
        argv += ["-o", kv]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["?"]}
    rep = json.loads(out.read_text())
    rep["wall_s"] = time.perf_counter() - t0
    return rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma list of {', '.join(VARIANTS)}")
    ap.add_argument("--questions", type=Path, default=ROOT / "data" / "demo" / "questions.jsonl")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runtime", default="llamacpp", choices=["llamacpp", "transformers"])
    ap.add_argument("-o", "--option", action="append", help="a VisPath option KEY=VALUE for every variant")
    ap.add_argument("--out-dir", default=str(ROOT / ".kgqa" / "llm_steps"))
    args = ap.parse_args()
    labels = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in labels if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"--variants: unknown {', '.join(unknown)} (known: {', '.join(VARIANTS)})")
    results = []
    for label in labels:
        rep = run_variant(label, VARIANTS[label], args)
        print(f"  {label}: {'error' if 'error' in rep else 'done'} ({rep.get('wall_s', 0):.0f} s)", flush=True)
        results.append((label, rep))

    print(f"\nkgqa eval {args.questions.relative_to(ROOT) if args.questions.is_relative_to(ROOT) else args.questions}"
          f", VisPath defaults{' + ' + ' '.join(args.option) if args.option else ''}; local chat SmolLM2-135M-"
          f"Instruct on {args.runtime}, {args.threads} thread(s); live (no replay cache); load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    head = (f"{'steps asking the LLM':<22}{'EM':>6}{'SBERT':>7}{'start':>7}{'path':>7}{'chat/q':>8}{'tok/q':>7}"
            f"{'chat s/q':>9}{'s/q p50':>9}{'s/q mean':>9}{'fail':>5}")
    print(head)
    print("-" * len(head))
    for label, rep in results:
        if "error" in rep:
            print(f"{label:<22}  error: {rep['error'][0][:100]}")
            continue
        o = rep["overall"]
        chat = (o.get("cost_per_question") or {}).get("chat") or {}
        name = "none (graph-only floor)" if VARIANTS[label] is None else VARIANTS[label]
        print(f"{name[:21]:<22}{rate(o['exact_match']):>6}{rate(o['sbert@0.3']):>7}{rate(o['start_entity']):>7}"
              f"{rate(o['gold_path']):>7}{chat.get('calls', 0):8.1f}{chat.get('completion_tokens', 0):7.0f}"
              f"{chat.get('seconds', 0):9.1f}{o['latency_s']['p50'] or 0:9.1f}{o['latency_s']['mean'] or 0:9.1f}"
              f"{o['failed']:>5}")
    print("chat/q = chat-model calls per question (the reference-image grounder's text steps included), "
          "tok/q = completion tokens per question, s/q = seconds per question (model load excluded)")


if __name__ == "__main__":
    main()
