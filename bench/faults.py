"""The fault suite (tests/faults) at N seeded random kill points per case, with a table: for each kind of
write (Bolt load of Wikidata5M, ``--bulk`` load, document load, ``docs rm``) how many kill -9s of Neo4j it took, and at how
many the invariants held after restart and rerun (counts of a clean run, 0 duplicates, 0 entities without a
vector, 0 orphan chunks, every document complete). Kills and restarts the Neo4j of the environment, so run
it as ``make test-faults`` does, on a server of its own:

    make test-faults                                           # once per case
    KGQA_DATA_DIR=$PWD/.kgqa/faults KGQA_NEO4J_BOLT_PORT=27687 KGQA_NEO4J_HTTP_PORT=27474 \\
      NEO4J_URI=bolt://127.0.0.1:27687 .venv/bin/python -m bench.faults --points 20
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KINDS = {"test_kill_neo4j_mid_bolt_load": "Bolt load (Wikidata5M)", "test_kill_neo4j_mid_bulk_load": "--bulk load",
         "test_kill_neo4j_mid_document_load": "document load", "test_kill_neo4j_mid_docs_rm": "docs rm"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=20)
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated test names")
    a = ap.parse_args()
    env = {**os.environ, "KGQA_FAULTS": "1", "KGQA_FAULT_POINTS": str(a.points)}
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                        "tests/faults/test_kill_neo4j.py", "tests/faults/test_kill_neo4j_bulk.py",
                        "-k", " or ".join(a.kinds.split(","))],
                       cwd=REPO, env=env, capture_output=True, text=True)
    out = p.stdout + p.stderr
    print(f"| write | kill points | invariants held | failed | missed (load ended before its kill) |"
          f"  ({time.perf_counter() - t0:,.0f} s)")
    print("|---|---:|---:|---:|---:|")
    for name in a.kinds.split(","):
        passed = len(re.findall(rf"^PASSED \S+::{name}\[", out, re.M))
        failed = len(re.findall(rf"^(?:FAILED|ERROR) \S+::{name}\[", out, re.M))
        missed = len(re.findall(rf"^SKIPPED \[\d+\] \S+: {name}\[\d+\]: missed", out, re.M))
        print(f"| {KINDS.get(name, name)} | {passed + failed} | {passed} | {failed} | {missed} |")
    # test_kill_neo4j_bulk prints what it killed, in which phase, and each redrawn miss
    kills = re.findall(r"^killed (server|neo4j-admin import) \(pid \d+\) in phase ([^(]+?) \(drawn: ([^,]+),", out, re.M)
    if kills:
        targets = [k[0] for k in kills]
        print(f"--bulk: Neo4j killed as the server {targets.count('server')} times, as neo4j-admin import "
              f"{targets.count('neo4j-admin import')} times")
        phases: dict[str, list[int]] = {}
        for _, ran, drawn in kills:
            phases.setdefault(drawn, [0, 0])[0] += 1
            phases.setdefault(ran, [0, 0])[1] += 1
        print("--bulk phases, drawn / killed in: " + ", ".join(f"{k} {v[0]} / {v[1]}" for k, v in phases.items()))
        redrawn = len(re.findall(r"^missed: the load ended before the kill", out, re.M))
        print(f"--bulk: {redrawn} draw(s) missed (the load ended first) and were drawn again, earlier")
    log = REPO / ".kgqa" / f"faults-{time.strftime('%Y%m%dT%H%M%S')}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(out, encoding="utf-8")                     # whole: each point's output, a failed one's cause
    print(f"pytest's whole output: {log}")
    if p.returncode != 0:
        fails = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
        print(f"failed: {', '.join(fails)}; pytest's whole output: {log}", file=sys.stderr)
        print(out[-3000:], file=sys.stderr)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
