"""Longer fuzz runs of the parsers (tests/fuzz/parsers.py: the Wikidata5M line parsers, the image checks,
the Markdown, HTML and PDF parsers) and of both loaders' input folders (tests/fuzz/loaders.py), one after
another, each for ``--seconds``; prints a table of executions, coverage and crashes per target.

    .venv/bin/python -m bench.fuzz                       # 600 s per target (the issue's 10-minute run)
    .venv/bin/python -m bench.fuzz --seconds 60 --targets html,image

A crash leaves its input as ``<out>/crash-<sha1>`` (rerun it: ``python -m tests.fuzz.parsers --target T FILE``).
Exit 1 when any target crashed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARSERS = ("wd5m-line", "image", "markdown", "html", "pdf")


def run(target: str, seconds: int, seed: int, out: Path) -> dict:
    if target == "loaders":
        cmd = [sys.executable, "-m", "tests.fuzz.loaders"]
    else:
        cmd = [sys.executable, "-m", "tests.fuzz.parsers", "--target", target]
    cmd += [f"-max_total_time={seconds}", f"-seed={seed}", "-max_len=4096", "-len_control=0",
            "-rss_limit_mb=8192", "-print_final_stats=1", f"-artifact_prefix={out}/{target}-"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=seconds + 600)
    text = p.stdout + p.stderr
    execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
    cov = re.findall(r"cov: (\d+)", text)
    crash = "Uncaught Python exception" in text or p.returncode != 0
    why = ""
    if crash:
        m = re.search(r"=== Uncaught Python exception: ===\n(.+)", text)
        why = m.group(1) if m else text.strip().splitlines()[-1][:200]
    return {"target": target, "seconds": time.perf_counter() - t0, "execs": int(execs.group(1)) if execs else None,
            "cov": int(cov[-1]) if cov else None, "crash": why if crash else ""}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=600)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--targets", default=",".join((*PARSERS, "loaders")))
    ap.add_argument("--out", type=Path, default=Path("/tmp/kgqa-fuzz"))
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for t in a.targets.split(","):
        r = run(t.strip(), a.seconds, a.seed, a.out)
        rows.append(r)
        print(f"{r['target']:<10} {r['seconds']:7.0f} s  {r['execs'] or 0:>10,} executions  cov {r['cov']}  "
              f"{'CRASH: ' + r['crash'] if r['crash'] else 'no crash'}", flush=True)
    return 1 if any(r["crash"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
