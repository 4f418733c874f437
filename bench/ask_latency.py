"""Where one ``kgqa ask`` spends its time: per stage, wall and CPU, cold and warm, before and after.

    .venv/bin/python -m bench.ask_latency                                  # this checkout, the buried 200k KG
    .venv/bin/python -m bench.ask_latency --compare /work/main/src --rounds 3   # before (that src) vs after
    .venv/bin/python -m bench.ask_latency --external --no-demo --questions SET.jsonl   # the server already running

Runs on the graph ``bench/scale.py`` builds (``--kg buried``: the demo KG among 200,000 distractors; build it
first with ``python -m bench.scale --kgs buried --build-only``), its server started here and stopped at the end.
Each round is one fresh process per code state (``--compare SRC`` adds a state whose ``kgqa`` is imported
from SRC; states alternate within a round, so a load change on the shared machine falls on both). A process:

1. builds the pipeline as ``kgqa ask`` does (VisPath, defaults, the reader on, graph-only:
   ``KGQA_CHAT_BACKEND=none``) and times it (imports, connection, models);
2. asks the demo questions from their images (``data/demo/questions.jsonl``), then the 4-hop set with its
   gold start (``data/demo/questions-4hop.jsonl``: no images), each once, rendering the answer as ``kgqa ask``
   prints it. The first question is the cold one (models and caches filled on first use); the rest are warm
   (the process has answered others, never this one). Every image is treated as new: the grounder's
   features and ranking of the query image are forgotten before each question (``--same-image`` keeps them).

Per stage it records exclusive wall seconds and CPU seconds (``time.process_time`` of this process, and the
Neo4j server's own CPU from ``/proc``), by wrapping the functions named in STAGES; nested stages are paths
("ask > hop 2 expand > cypher vispath_frontier_edges"). Prints the per-stage table (sum over warm questions,
share of the warm total, per-question mean), cold and warm p50 / p95 per state, and whether every question's
prediction (answer, answer id, ties, start entity) is the same in every state and round. Torch threads: 1
(KGQA_TORCH_THREADS), the load average is printed before and after. Asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (label, module, attribute path): each is wrapped so its time, minus the wrapped calls inside it, is its own.
# A label may hold "{hop}": filled from the call's arguments by HOP_OF.
STAGES = [
    ("ask", "kgqa.app.pipeline", "Pipeline.answer"),
    ("render", "kgqa.app.pipeline", "Pipeline.render"),
    ("image: query features (ORB, pHash, colour)", "kgqa.models.grounder", "ReferenceImageGrounder._query_features"),
    ("image: reference features", "kgqa.models.grounder", "ReferenceImageGrounder._ref_features"),
    ("image: match (shortlist, RANSAC)", "kgqa.models.grounder", "ReferenceImageGrounder._rank_all"),
    ("start: candidates (recognition, linking)", "kgqa.methods.vispath.algorithm", "VisPath.rank_start_candidates"),
    ("start: entity linking", "kgqa.core.kg", "KG.link_entities"),
    ("start: Eq. 2-3 validation", "kgqa.methods.vispath.algorithm", "VisPath.graph_aware_validation"),
    ("start: given entity", "kgqa.methods.vispath.algorithm", "VisPath.given_start"),
    ("grounding score", "kgqa.methods.vispath.algorithm", "measure_grounding"),
    ("reader ready", "kgqa.methods.vispath.algorithm", "VisPath._reader_ready"),
    ("sketch", "kgqa.methods.vispath.algorithm", "VisPath.analyze_question"),
    ("relation sketch", "kgqa.methods.vispath.scoring", "Scorer.relation_sketch"),
    ("hop {hop} intent", "kgqa.methods.vispath.algorithm", "VisPath.hop_intent"),
    ("hop {hop} expand (first cut, Eq. 5)", "kgqa.methods.vispath.scoring", "Scorer.expand_frontier"),
    ("hop {hop} chain reader keeps", "kgqa.methods.vispath.algorithm", "VisPath.reader_keeps"),
    ("Eq. 8 rules", "kgqa.methods.vispath.scoring", "Scorer.chain_scores"),
    ("hop evidence", "kgqa.methods.vispath.algorithm", "VisPath.evidence_statement"),
    ("hop answerability", "kgqa.methods.vispath.algorithm", "VisPath.answerability"),
    ("terminal selection", "kgqa.methods.vispath.algorithm", "VisPath.terminal_selection"),
    ("end kinds (reader)", "kgqa.methods.vispath.algorithm", "kind_scores"),
    ("rank ends", "kgqa.methods.vispath.scoring", "Scorer.rank_endpoints"),
    ("answer typing", "kgqa.methods.vispath.scoring", "Scorer.path_typing"),
    ("answer record", "kgqa.methods.vispath.algorithm", "to_answer"),
    ("trace write", "kgqa.core.trace", "write_trace"),
    # leaves: every query, every encoder call, the reader's forward, the loads
    ("cypher {name}", "kgqa.core.graph", "Graph.read"),
    ("cypher {name}", "kgqa.core.graph", "Graph.write"),
    ("SBERT encode", "kgqa.models.encoder", "SentenceEncoder.encode"),
    ("reader forward", "kgqa.models.heads.chain_reader", "ChainReader._vectors"),
    ("reader encode", "kgqa.models.heads.chain_reader", "ChainReader._encode"),
    ("chain vectors kept (memory, file)", "kgqa.core.chain_vectors", "ChainVectors.get"),
    ("GraSP: topic entity", "kgqa.methods.grasp.algorithm", "GraSP.topic_entity"),
    ("GraSP: extract subgraph", "kgqa.methods.grasp.algorithm", "GraSP.extract"),
    ("GraSP: reader orders chains", "kgqa.methods.grasp.reader", "chain_order"),
    ("GraSP: reader ranks nodes", "kgqa.methods.grasp.reader", "reader_ranking"),
    ("GraSP: node head (GAT)", "kgqa.methods.grasp.algorithm", "GraSP.score_nodes"),
    ("GraSP: select", "kgqa.methods.grasp.algorithm", "GraSP.select"),
    ("reader load", "kgqa.models.heads.chain_reader", "ReaderSlot.get"),
    ("relation catalogue", "kgqa.core.kg", "KG.relations"),
]
HOP_OF = {"VisPath.hop_intent": lambda a, k: a[4], "Scorer.expand_frontier": lambda a, k: a[4],
          "VisPath.reader_keeps": lambda a, k: a[4].hop}


class Clock:
    """Exclusive wall and CPU seconds per stage path; the Neo4j server's CPU from /proc when its pid is known."""

    def __init__(self, server_pid: int | None):
        self.stack: list[list] = []
        self.server_pid = server_pid
        self.rows: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])  # wall, cpu, server cpu, calls

    def server_cpu(self) -> float:
        if self.server_pid is None:
            return 0.0
        try:
            f = Path(f"/proc/{self.server_pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def now(self) -> tuple[float, float, float]:
        return time.perf_counter(), time.process_time(), self.server_cpu()

    def wrap(self, label: str, qual: str, fn):
        clock = self

        @functools.wraps(fn)
        def timed(*a, **k):
            name = label
            if "{hop}" in name and qual in HOP_OF:
                name = name.format(hop=HOP_OF[qual](a, k))
            elif "{name}" in name:
                name = name.format(name=a[1] if len(a) > 1 else k.get("name", "?"))
            path = " > ".join([f[0] for f in clock.stack] + [name])
            t0 = clock.now()
            clock.stack.append([name, 0.0, 0.0, 0.0])
            try:
                return fn(*a, **k)
            finally:
                frame = clock.stack.pop()
                d = [b - c for b, c in zip(clock.now(), t0)]
                row = clock.rows[path]
                for j in range(3):
                    row[j] += d[j] - frame[j + 1]
                row[3] += 1
                if clock.stack:
                    for j in range(3):
                        clock.stack[-1][j + 1] += d[j]
        return timed

    def install(self) -> list[str]:
        """Wrap every stage that this code state has; returns the ones it lacks."""
        missing = []
        for label, mod, attr in STAGES:
            try:
                m = importlib.import_module(mod)
                owner, name = (m, attr) if "." not in attr else (getattr(m, attr.split(".")[0]), attr.split(".")[1])
                setattr(owner, name, self.wrap(label, attr, getattr(owner, name)))
            except (ImportError, AttributeError):
                missing.append(f"{mod}.{attr}")
        return missing

    def take(self) -> dict:
        out = {k: list(v) for k, v in self.rows.items()}
        self.rows.clear()
        return out


# --------------------------------------------------------------------------- one process (one code state)
def worker(args) -> None:
    t_start = time.perf_counter()
    c_start = time.process_time()
    pid = int(args.server_pid) if args.server_pid else None
    clock = Clock(pid)
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.core.config import Settings

    missing = clock.install()
    demo, _ = load_questions(ROOT / "data" / "demo" / "questions.jsonl") if args.demo else ([], None)
    four, _ = load_questions(Path(args.questions) if args.questions else ROOT / "data" / "demo" / "questions-4hop.jsonl")
    asks = [("demo", q, False) for q in demo[: args.limit or None]]
    asks += [("4hop", q, True) for q in four[: args.limit or None]]
    s = Settings()
    p = Pipeline(s, args.method)
    build = (time.perf_counter() - t_start, time.process_time() - c_start)
    vision = p.models.vision
    out = []
    for k, (kind, q, gold) in enumerate(asks):
        if not args.same_image and hasattr(vision, "_ranked"):       # a photo the process has never seen
            vision._ranked.clear()
            if q.image_path is not None:
                from kgqa.core.images import load_image

                sha = load_image(q.image_path).sha256
                vision.features._mem.pop(sha, None)
                f = vision.features._file(sha)
                if f is not None:
                    f.unlink(missing_ok=True)
        t0 = clock.now()
        ans = p.answer(q.question, image=q.image_path, entity_id=q.topic.id if gold else None)
        lines = p.render(ans)
        d = [b - a for a, b in zip(t0, clock.now())]
        out.append({"set": kind, "id": q.id, "cold": k == 0, "wall": d[0], "cpu": d[1], "server_cpu": d[2],
                    "stages": clock.take(), "answer": ans.answer, "answer_id": ans.answer_id,
                    "start": ans.start_entity_id, "tied": ans.details.get("tied_with"), "lines": len(lines),
                    "gold": q.answer})
    Path(args.out).write_text(json.dumps({"build_wall": build[0], "build_cpu": build[1], "missing": missing,
                                          "questions": out}))


# --------------------------------------------------------------------------- the parent: rounds, states, tables
def pct(xs, q):
    from bench._common import percentile

    return percentile(xs, q)


def run_state(src: Path, args, env: dict, pid: int | None, method: str = "vispath") -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out = Path(fh.name)
    e = {**env, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}"}
    cmd = [sys.executable, "-m", "bench.ask_latency", "--worker", "--out", str(out), "--server-pid", str(pid or "")]
    cmd += ["--limit", str(args.limit)] if args.limit else []
    cmd += ["--same-image"] if args.same_image else []
    cmd += ["--questions", str(args.questions)] if args.questions else []
    cmd += [] if args.demo else ["--no-demo"]
    cmd += ["--method", method]
    proc = subprocess.run(cmd, env=e, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"worker for {src} failed: {proc.stderr.strip()[-2000:]}")
    rep = json.loads(out.read_text())
    out.unlink()
    return rep


def stage_table(reps: list[dict], name: str) -> None:
    """Per stage path over the warm questions of every round: seconds, share of the warm total, CPU."""
    rows: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    total = [0.0, 0.0, 0.0]
    n = 0
    for rep in reps:
        for q in rep["questions"]:
            if q["cold"]:
                continue
            n += 1
            total = [total[0] + q["wall"], total[1] + q["cpu"], total[2] + q["server_cpu"]]
            for path, v in q["stages"].items():
                for j in range(4):
                    rows[path][j] += v[j]
    print(f"\n{name}: warm questions' time by stage ({n} asks; exclusive seconds; share of the warm wall total "
          f"{total[0]:.1f} s; CPU: this process {total[1]:.1f} s, Neo4j server {total[2]:.1f} s)")
    print(f"  {'stage':<78}{'wall s':>8}{'share':>7}{'ms/ask':>8}{'cpu s':>8}{'neo4j':>7}{'calls':>7}")
    for path, (w, c, sc, calls) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
        if w < 0.002 * max(total[0], 1e-9):
            continue
        print(f"  {path[-78:]:<78}{w:8.2f}{100 * w / total[0]:6.1f}%{1000 * w / n:8.1f}{c:8.2f}{sc:7.2f}"
              f"{int(calls):7d}")


def summary(reps: list[dict], name: str) -> dict:
    warm = [q for r in reps for q in r["questions"] if not q["cold"]]
    cold = [q for r in reps for q in r["questions"] if q["cold"]]
    row = {"state": name, "build": pct([r["build_wall"] for r in reps], 50),
           "build_cpu": pct([r["build_cpu"] for r in reps], 50), "cold": pct([q["wall"] for q in cold], 50)}
    for kind in ("demo", "4hop"):
        w = [q for q in warm if q["set"] == kind]
        row[kind] = (pct([q["wall"] for q in w], 50), pct([q["wall"] for q in w], 95),
                     pct([q["cpu"] + q["server_cpu"] for q in w], 50), len(w))
    return row


def predictions(states: dict[str, list[dict]]) -> list[str]:
    """Questions whose prediction differs between any two states or rounds."""
    seen: dict[tuple, set] = defaultdict(set)
    for reps in states.values():
        for r in reps:
            for q in r["questions"]:
                seen[q["set"], q["id"]].add(json.dumps([q["answer"], q["answer_id"], q["start"], q["tied"]]))
    return [f"{s}/{i}: {sorted(v)}" for (s, i), v in seen.items() if len(v) > 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", type=Path, action="append", default=[],
                    help="another code state's src/ folder, measured in the same run: a whole checkout's (its data/ and "
                         "neo4j-local/pom.xml beside it, else its shipped reader is not found and the rules answer)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="first N questions of each set")
    ap.add_argument("--no-warmup", dest="warmup", action="store_false",
                    help="skip the untimed process per state that fills the on-disk caches and the page cache first")
    ap.add_argument("--same-image", action="store_true", help="keep query-image features between questions")
    ap.add_argument("--kg", default="buried", choices=("demo", "buried"))
    ap.add_argument("--external", action="store_true",
                    help="the graph of the environment's server (NEO4J_URI, KGQA_DATA_DIR), started and loaded already: "
                         "neither started nor stopped here (e.g. the full-size twin)")
    ap.add_argument("--questions", type=Path, default=None,
                    help="a gold-start set (kgqa eval format) asked instead of data/demo/questions-4hop.jsonl")
    ap.add_argument("--no-demo", dest="demo", action="store_false",
                    help="skip the demo set from its images (a graph without the demo KG's entities)")
    ap.add_argument("--methods", default="vispath", help="comma list of vispath, grasp (each with its defaults)")
    ap.add_argument("--keep-chain-store", action="store_true",
                    help="keep the graph's stored chain vectors (<data dir>/cache/chain-vectors.sqlite) from earlier "
                         "runs; by default the file is removed first, so round 1 meets most chains for the first time")
    ap.add_argument("--method", default="vispath", help=argparse.SUPPRESS)
    ap.add_argument("--bolt", type=int, default=int(os.environ.get("KGQA_NEO4J_BOLT_PORT", 25687)))
    ap.add_argument("--http", type=int, default=int(os.environ.get("KGQA_NEO4J_HTTP_PORT", 25474)))
    ap.add_argument("--heap", default="1g")
    ap.add_argument("--pagecache", default="1g")
    ap.add_argument("--root", type=Path, default=ROOT / ".kgqa" / "scale")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--server-pid", default="", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    from bench.scale import env_for, settings_for
    from kgqa.core.config import Settings
    from kgqa.core.neo4j_local import LocalNeo4j

    args.root = args.root.resolve()
    if args.external:
        from bench.scale import graph_only_env

        env = {**os.environ, **graph_only_env(), "KGQA_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}
        args.kg = f"the environment's ({Settings().neo4j_uri})"
    elif not (args.root / args.kg / "manifest.json").exists():
        raise SystemExit(f"no {args.kg} KG under {args.root}: build it with "
                         f"`python -m bench.scale --kgs {args.kg} --build-only`")
    else:
        env = {**env_for(args.kg, args), "KGQA_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}
    for p in args.compare:
        if not (p.resolve().parent / "neo4j-local" / "pom.xml").is_file():
            raise SystemExit(f"--compare {p}: not the src/ of a whole checkout (no ../neo4j-local/pom.xml): its "
                             "shipped chain reader would not be found")
    srcs = {"this checkout": ROOT / "src", **{f"compare {i + 1}: {p}": p.resolve()
                                               for i, p in enumerate(args.compare)}}
    methods = [m for m in args.methods.split(",") if m]
    states = {f"{name} · {m}": (src, m) for m in methods for name, src in srcs.items()}
    settings = Settings() if args.external else settings_for(args.kg, args)
    store = Path(settings.data_dir) / "cache" / "chain-vectors.sqlite"
    if not args.keep_chain_store:
        for f in (store, store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")):
            f.unlink(missing_ok=True)
    server = LocalNeo4j(settings)
    if not args.external:
        server.start(wait_s=300)
    load0 = os.getloadavg()
    reps: dict[str, list[dict]] = {k: [] for k in states}
    try:
        pid = server.status().pid
        if args.warmup:      # untimed: exports, reference-image features, the server's page cache
            for name in states:
                t0 = time.perf_counter()
                run_state(*states[name][:1], argparse.Namespace(**{**vars(args), "limit": 2}), env, pid,
                          states[name][1])
                print(f"  warm-up · {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
        for rnd in range(args.rounds):
            order = list(states) if rnd % 2 == 0 else list(states)[::-1]
            for name in order:
                t0 = time.perf_counter()
                reps[name].append(run_state(states[name][0], args, env, pid, states[name][1]))
                print(f"  round {rnd + 1} · {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    finally:
        if not args.external:
            server.stop()
    load1 = os.getloadavg()
    print(f"bench.ask_latency · {args.kg} KG · {', '.join(methods)} defaults, the reader on, graph-only · "
          f"encoder backend {env.get('KGQA_ENCODER_BACKEND', 'auto')} · "
          + (f"demo set from its images{' (images kept between questions)' if args.same_image else ' (each image new to the process)'}, "
             if args.demo else "")
          + f"{args.questions or '4-hop set'} gold start ('4hop' below) · {args.rounds} round(s), one fresh process per state per round · torch threads 1 · "
          f"{os.cpu_count()} CPUs shared · load average {load0[0]:.2f} before, {load1[0]:.2f} after")
    for name, rs in reps.items():
        if rs[0]["missing"]:
            print(f"  {name}: stages this code lacks: {', '.join(rs[0]['missing'])}")
        stage_table(rs, name)
    print(f"\n  {'state':<48}{'build s':>8}{'cold s':>8}{'demo p50':>9}{'p95':>7}{'cpu p50':>8}"
          f"{'4hop p50':>9}{'p95':>7}{'cpu p50':>8}")
    for name, rs in reps.items():
        for k, one in enumerate(rs):        # per round: round 1 meets most chains first, later rounds the store's
            r = summary([one], name)
            label = f"{name} · round {k + 1}"
            print(f"  {label[-48:]:<48}{r['build']:8.2f}{r['cold']:8.2f}{r['demo'][0]:9.3f}{r['demo'][1]:7.3f}"
                  f"{r['demo'][2]:8.3f}{r['4hop'][0]:9.3f}{r['4hop'][1]:7.3f}{r['4hop'][2]:8.3f}")
    print("  (warm p50 / p95 wall seconds per ask; cpu = this process + the Neo4j server, p50; build = imports, "
          "connection, models; cold = the first question)")
    diff = [f"{m}: {line}" for m in methods
            for line in predictions({k: v for k, v in reps.items() if states[k][1] == m})]   # per method
    n = len(reps[next(iter(reps))][0]["questions"])
    em = {s: sum(1 for q in rs[0]["questions"] if (q["answer"] or "").strip().lower() == q["gold"].strip().lower())
          for s, rs in reps.items()}
    print(f"\npredictions, per method: {n} questions × {args.rounds} round(s) × {len(srcs)} state(s): "
          + ("identical everywhere" if not diff else f"{len(diff)} differ"))
    for line in diff:
        print("  " + line)
    print("exact match (first round): " + ", ".join(f"{s}: {v}/{n}" for s, v in em.items()))


if __name__ == "__main__":
    main()
