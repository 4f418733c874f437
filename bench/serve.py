"""``kgqa serve`` under concurrent clients vs the same questions run one by one through the CLI.

    python -m bench.serve [--questions data/demo/questions.jsonl] [--clients 20,50] [--cli N]
                          [--replay-cache DIR] [--url http://127.0.0.1:8765] [--token T] [--port 8799]

Without ``--url`` it starts ``kgqa serve`` itself (one worker, on the Neo4j of the environment, with
the replay cache given) and stops it at the end. Each round sends C requests at once (the demo
questions, cycled, each with its image as a multipart upload) and reports, per round: answered
(200 with a trace id), refused (503 queue_full), other errors, latency p50/p95 as each client saw it,
wall time and throughput. The baseline is ``kgqa ask`` run sequentially for the first ``--cli``
questions: one process per question, as a script calling the CLI would (each process loads the
models again). Prints torch threads and the machine load beside the figures.

Load the demo KG first (``kgqa load wikidata5m --path data/demo``); use a copy of data/demo/replay
as the replay cache (a miss is recorded into it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from bench._common import percentile, question_rows

REPO = Path(__file__).resolve().parent.parent
KGQA = str(Path(sys.executable).with_name("kgqa"))


def one_request(client, url: str, q: dict, headers: dict) -> tuple[int, float, dict]:
    t0 = time.perf_counter()
    if q.get("image_path"):
        with open(q["image_path"], "rb") as fh:
            r = client.post(f"{url}/ask", data={"question": q["question"]}, headers=headers,
                            files={"image": (Path(q["image_path"]).name, fh.read(), "application/octet-stream")})
    else:
        r = client.post(f"{url}/ask", json={"question": q["question"]}, headers=headers)
    dt = time.perf_counter() - t0
    try:
        body = r.json()
    except ValueError:
        body = {}
    return r.status_code, dt, body


def round_of(url: str, questions: list[dict], clients: int, headers: dict, timeout: float) -> dict:
    import httpx

    results: list[tuple[int, float, dict, dict]] = []
    lock = threading.Lock()
    start = threading.Barrier(clients)

    def worker(i):
        q = questions[i % len(questions)]
        with httpx.Client(timeout=timeout) as c:
            start.wait()
            try:
                code, dt, body = one_request(c, url, q, headers)
            except httpx.HTTPError as e:
                code, dt, body = -1, float("nan"), {"message": type(e).__name__}
        with lock:
            results.append((code, dt, body, q))

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ok = [(dt, b, q) for code, dt, b, q in results if code == 200 and b.get("trace_id")]
    refused = [dt for code, dt, _, _ in results if code == 503]
    errors = [(code, b.get("message")) for code, _, b, _ in results if code not in (200, 503)]
    lat = [dt for dt, _, _ in ok]
    em = sum(1 for _, b, q in ok if (b.get("answer") or "").strip().lower() == q["answer"].strip().lower())
    return {"clients": clients, "answered": len(ok), "refused_503": len(refused), "errors": errors,
            "p50_s": percentile(lat, 50), "p95_s": percentile(lat, 95), "refused_p95_s": percentile(refused, 95),
            "wall_s": wall, "throughput_qps": len(ok) / wall if wall else 0.0,
            "traces": [b["trace_id"] for _, b, _ in ok][:3], "exact": em}


def sequential_cli(questions: list[dict], n: int, replay: str | None, env: dict) -> dict:
    lat, ok = [], 0
    t0 = time.perf_counter()
    for q in questions[:n]:
        args = [KGQA, "ask", "--json"] + (["--replay-cache", replay] if replay else [])
        args += ([q["image_path"]] if q.get("image_path") else []) + [q["question"]]
        t = time.perf_counter()
        p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
        lat.append(time.perf_counter() - t)
        if p.returncode == 0 and json.loads(p.stdout).get("trace_id"):
            ok += 1
        else:
            print(f"cli {q['id']}: exit {p.returncode}: {p.stderr.strip()[-300:]}", file=sys.stderr)
    wall = time.perf_counter() - t0
    return {"clients": "CLI, sequential", "answered": ok, "refused_503": 0, "errors": [], "p50_s": percentile(lat, 50),
            "p95_s": percentile(lat, 95), "wall_s": wall, "throughput_qps": ok / wall if wall else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=Path, default=REPO / "data" / "demo" / "questions.jsonl")
    ap.add_argument("--clients", default="20,50")
    ap.add_argument("--cli", type=int, default=3, help="questions run sequentially through `kgqa ask` (0: none)")
    ap.add_argument("--replay-cache", default=None)
    ap.add_argument("--url", default=None, help="an already running kgqa serve (else one is started)")
    ap.add_argument("--token", default=os.environ.get("KGQA_API_TOKEN"))
    ap.add_argument("--port", type=int, default=8799)
    ap.add_argument("--queue", type=int, default=32, help="--queue of the server this script starts")
    ap.add_argument("--timeout", type=float, default=3600, help="client timeout per request (s)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    a = ap.parse_args()

    import httpx

    questions = question_rows(a.questions)
    headers = {"Authorization": f"Bearer {a.token}"} if a.token else {}
    env = {**os.environ}
    proc = None
    url = a.url
    if url is None:
        url = f"http://127.0.0.1:{a.port}"
        cmd = [KGQA, "serve", "--port", str(a.port), "--queue", str(a.queue), "--log-level", "warning"]
        cmd += ["--replay-cache", a.replay_cache] if a.replay_cache else []
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while True:
            try:
                if httpx.get(f"{url}/health", headers=headers, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                sys.exit(f"kgqa serve exited {proc.returncode}: {proc.stderr.read().decode()[-1000:]}")
            time.sleep(1)
        print(f"server up in {time.perf_counter() - t0:.1f} s (driver + encoder loaded once)", file=sys.stderr)
    try:
        health = httpx.get(f"{url}/health", headers=headers, timeout=30).json()
        # warm-up: the first question loads the chat LLM and the grounder's reference features
        w = round_of(url, questions, 1, headers, a.timeout)
        print(f"warm-up question: {w['p50_s']:.1f} s", file=sys.stderr)
        rows = []
        for c in [int(x) for x in a.clients.split(",") if x.strip()]:
            rows.append(round_of(url, questions, c, headers, a.timeout))
            print(f"{c} clients done: {rows[-1]['answered']} answered, {rows[-1]['refused_503']} refused",
                  file=sys.stderr)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(30)
    if a.cli:
        rows.append(sequential_cli(questions, a.cli, a.replay_cache, env))

    load = os.getloadavg()
    print(f"kgqa serve bench · {a.questions} ({len(questions)} questions, cycled) · chat: "
          f"{health['models']['chat']['setting']} · replay cache {health.get('replay_cache')}")
    print(f"torch threads {os.environ.get('KGQA_TORCH_THREADS', '1')} · {os.cpu_count()} cores · "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} (after the run) · one server worker")
    print()
    print("| clients | answered (trace id) | 503 queue_full | other errors | p50 s | p95 s | wall s | answers/s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['clients']} | {r['answered']} | {r['refused_503']} | {len(r['errors'])} | {r['p50_s']:.1f} | "
              f"{r['p95_s']:.1f} | {r['wall_s']:.1f} | {r['throughput_qps']:.3f} |")
    for r in rows:
        for code, msg in r["errors"][:3]:
            print(f"  {r['clients']} clients: HTTP {code}: {msg}")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "load": load, "health": health}, indent=2, default=str))


if __name__ == "__main__":
    main()
