"""The chain reader (``kgqa train paths``) measured: held-out more-dev folds, the generated-only reader, a generated
4-hop set on the demo KG, and ``ask`` latency — each beside the rules and the paper's reading, graph-only.

    # on the more-dev KG's server (its own KG): a reader per fold, trained on the other folds' questions plus
    # questions generated from the KG; and one on generated questions only (no more-dev question)
    .venv/bin/python -m bench.chain_reader train --out /work/cr --folds 5 --examples 600
    # per graph (the connection from the environment): every row's per-question results, cached under --out
    .venv/bin/python -m bench.chain_reader run --graph more-dev --out /work/cr
    .venv/bin/python -m bench.chain_reader run --graph more-dev-buried-wl --out /work/cr   # its own server
    .venv/bin/python -m bench.chain_reader table --graphs more-dev,more-dev-buried-wl,more-dev-buried --out /work/cr
    # on the more-dev KG's server: EM per reader_rules_weight λ, and λ chosen per fold on the other folds
    .venv/bin/python -m bench.chain_reader lambdas --out /work/cr
    # on the demo KG: a 4-hop set of walks the shipped reader's training never drew, then kgqa eval on it
    .venv/bin/python -m bench.chain_reader fourhop --n 40 --out data/demo/questions-4hop.jsonl
    .venv/bin/python -m bench.chain_reader latency --questions ../shared/datasets/more-dev/questions.jsonl --n 40

Rows (VisPath ``-o`` sets; KGQA_CHAT_BACKEND=none is forced): ``paper`` (the paper's literal reading, rules),
``rules`` (today's rules, no reader), ``reader (generated only)`` and ``reader (folds)`` (fold k's questions
answered by the reader that never saw them; gold-start and grounded). Prints EM, EM per hop, gold path retained,
start accuracy; asserts nothing. Torch threads = KGQA_TORCH_THREADS (default 1), stated.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from bench.paths import MORE, PAPER, folds_by_topic

ROWS = {"paper": {**PAPER, "path_scorer": "rules"}, "rules": {"path_scorer": "rules"}}
GENERATED = "reader (generated only)"
FOLDS = "reader (folds)"
GRASP_HEAD = "grasp, node head"
GRASP_FOLDS = "grasp, reader (folds)"
GRASP_GEN = "grasp, reader (generated only)"
FIELDS = ("exact_match", "gold_path", "start_entity", "hops", "seconds")


def _env() -> None:
    os.environ["KGQA_CHAT_BACKEND"] = "none"
    os.environ.setdefault("KGQA_TORCH_THREADS", "1")


def train(args) -> None:
    """On the more-dev KG: fold readers (other folds' questions + generated) and a generated-only reader."""
    _env()
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings
    from kgqa.training.chain_reader import train_chain_reader

    s = Settings()
    questions, _ = load_questions(args.questions)
    raw = {json.loads(x)["id"]: x for x in args.questions.read_text(encoding="utf-8").splitlines() if x.strip()}
    args.out.mkdir(parents=True, exist_ok=True)
    with open_runtime(s) as rt:
        jobs = [("generated", None, [])]          # what a user runs: the loaded KG, no question file
        if args.folds:
            for i, fold in enumerate(folds_by_topic(questions, args.folds, seed=0)):
                held = {q.id for q in fold}
                data = args.out / f"train-{i}.jsonl"
                data.write_text("\n".join(raw[q.id] for q in questions if q.id not in held) + "\n", encoding="utf-8")
                excl = args.out / f"held-{i}.jsonl"
                excl.write_text("\n".join(raw[q.id] for q in fold) + "\n", encoding="utf-8")
                jobs.append((f"fold-{i}-of-{args.folds}", data, [excl]))
        for name, data, exclude in jobs:
            ck = args.out / f"{name}.safetensors"
            if ck.is_file():
                continue
            rep = train_chain_reader(rt.graph, rt.kg, checkpoint=ck, data=data, examples=args.examples,
                                     exclude=exclude, depth=args.depth, epochs=args.epochs, seed=0,
                                     threads=s.torch_threads, arch=args.arch)
            rep.pop("step_losses")
            print(f"{name}: {rep['questions']} questions ({rep['generated']} generated, {rep['from_file']} from "
                  f"more-dev), {rep['pairs']} pairs, train {rep['seconds']['train']} s ({rep['pairs_per_s']} pairs/s, "
                  f"threads {rep['threads']}), held-out gold first {rep['held_out']}", flush=True)


def answer_by_folds(s, shared: dict, questions: list, args, method: str, opts: dict, gold: bool) -> list:
    """Fold k's questions answered by ``method`` with fold k's reader (``args.out``/fold-k-of-N), which never saw
    them; the results of every fold in one list."""
    from kgqa.app.eval.runner import run_questions
    from kgqa.app.pipeline import Pipeline

    res = []
    for i, fold in enumerate(folds_by_topic(questions, args.folds, seed=0)):
        ck = args.out / f"fold-{i}-of-{args.folds}.safetensors"
        p = Pipeline(s, method, options={**opts, "reader_checkpoint": str(ck)}, **shared)
        res += run_questions(fold, p, gold_start=gold)
    return res


def run(args) -> None:
    _env()
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.eval.runner import run_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings

    s = Settings()
    extra = dict(kv.split("=", 1) for kv in args.option)       # VisPath options of the reader rows
    questions, _ = load_questions(args.questions)
    print(f"{args.graph}: {len(questions)} questions · graph-only · torch threads {s.torch_threads} · "
          f"{os.cpu_count()} CPUs (shared) · {s.neo4j_uri}", flush=True)

    def save(setting, name, results):
        p = args.out / args.graph / setting / f"{name}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({r.id: {f: getattr(r, f) for f in FIELDS} for r in results}), encoding="utf-8")

    def done(setting, name):
        return (args.out / args.graph / setting / f"{name}.json").is_file()

    with open_runtime(s) as rt:
        shared = {"graph": rt.graph, "models": rt.models, "kg": rt.kg, "write_trace": False}
        for setting in args.settings.split(","):
            gold = setting == "gold-start"
            rows = dict(ROWS)
            gen = args.out / "generated.safetensors"
            if gen.is_file():
                rows[GENERATED] = {"path_scorer": "reader", "reader_checkpoint": str(gen), **extra}
            for name, opts in rows.items():
                if done(setting, name):
                    continue
                t0 = time.perf_counter()
                res = run_questions(questions, Pipeline(s, "vispath", options=opts, **shared), gold_start=gold)
                save(setting, name, res)
                print(f"  {setting} · {name}: {time.perf_counter() - t0:.0f} s", flush=True)
            cks = sorted(args.out.glob(f"fold-*-of-{args.folds}.safetensors"))

            def by_folds(name: str, method: str, opts: dict) -> None:
                """Row ``name``: fold k's questions answered by ``method`` with fold k's reader (never saw them)."""
                if not cks or done(setting, name):
                    return
                t0 = time.perf_counter()
                save(setting, name, answer_by_folds(s, shared, questions, args, method, opts, gold))
                print(f"  {setting} · {name}: {time.perf_counter() - t0:.0f} s", flush=True)

            by_folds(FOLDS, "vispath", {"path_scorer": "reader", **extra,
                                        **({"terminal_weights": str(args.terminal_weights)}
                                           if args.terminal_weights else {})})
            if args.grasp_checkpoint:       # GraSP: its node head, and the fold readers ranking its subgraph's nodes
                head = {"checkpoint": str(args.grasp_checkpoint)}
                if not done(setting, GRASP_HEAD):
                    p = Pipeline(s, "grasp", options={**head, "ranker": "head"}, **shared)
                    save(setting, GRASP_HEAD, run_questions(questions, p, gold_start=gold))
                    print(f"  {setting} · {GRASP_HEAD}: done", flush=True)
                by_folds(GRASP_FOLDS, "grasp", {**head, "ranker": "reader"})
                if gen.is_file() and not done(setting, GRASP_GEN):
                    p = Pipeline(s, "grasp", options={**head, "ranker": "reader", "reader_checkpoint": str(gen)},
                                 **shared)
                    save(setting, GRASP_GEN, run_questions(questions, p, gold_start=gold))
                    print(f"  {setting} · {GRASP_GEN}: done", flush=True)


def _pct(rows, field, pred=lambda r: True):
    v = [r[field] for r in rows if pred(r) and r.get(field) is not None]
    return f"{100.0 * sum(v) / len(v):5.1f}" if v else "    –"


def _distinct(rows: dict, text: dict) -> str:
    """EM over distinct question texts (each text's questions averaged first): more-dev repeats some texts up to
    20 times on one topic, so a single confusion moves the per-question EM by whole blocks."""
    by: dict[str, list] = {}
    for qid, r in rows.items():
        by.setdefault(text.get(qid, qid), []).append(bool(r["exact_match"]))
    return f"{100.0 * sum(sum(v) / len(v) for v in by.values()) / len(by):5.1f}" if by else "    –"


def table(args) -> None:
    from kgqa.app.eval.questions import load_questions

    text = {q.id: q.question for q in load_questions(args.questions)[0]}
    for setting in args.settings.split(","):
        print(f"\n== {setting} · graph-only · EM (2-hop / 3-hop) · gold path retained · start · EM over distinct "
              "question texts ==")
        names = list(ROWS) + [GENERATED, FOLDS, GRASP_HEAD, GRASP_FOLDS, GRASP_GEN]
        graphs = args.graphs.split(",")
        print(f"{'row':32s}" + "".join(f"{g:>42s}" for g in graphs))
        for name in names:
            cells = []
            for g in graphs:
                p = args.out / g / setting / f"{name}.json"
                if not p.is_file():
                    cells.append(f"{'–':>42s}")
                    continue
                by_id = json.loads(p.read_text())
                rows = list(by_id.values())
                cells.append(f"{_pct(rows, 'exact_match')} ({_pct(rows, 'exact_match', lambda r: r['hops'] == 2)} /"
                             f"{_pct(rows, 'exact_match', lambda r: r['hops'] == 3)}) {_pct(rows, 'gold_path')} "
                             f"{_pct(rows, 'start_entity')} {_distinct(by_id, text)}".rjust(42))
            print(f"{name:32s}" + "".join(cells))


def fourhop(args) -> None:
    """Walks of exactly 4 facts on the loaded KG (the demo's), phrased by the generator with another seed, minus
    every walk the shipped reader's training drew (same generator, its seed and size): the kgqa eval format."""
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings
    from kgqa.core.qa_examples import topics_of
    from kgqa.core.walk_questions import generate_walk_questions

    s = Settings()
    with open_runtime(s) as rt:
        ctx = rt.context()
        excl = topics_of(args.exclude) if args.exclude else set()
        seen = {(g.example.topic_id, g.relations) for g in
                generate_walk_questions(ctx.graph, ctx.kg, args.train_examples, args.train_seed, excl)}
        cand = generate_walk_questions(ctx.graph, ctx.kg, 20 * args.n, args.seed, excl,
                                       hop_weights=(0.0, 0.0, 0.0, 1.0))
        out, used = [], set()
        for g in cand:
            key = (g.example.topic_id, g.relations)
            if len(g.relations) != 4 or key in seen or key in used:
                continue
            used.add(key)
            ids = (g.example.topic_id,) + g.entities
            topic = ctx.kg.entity(g.example.topic_id) or {}
            out.append({"id": f"h4-{len(out) + 1:03d}", "question": g.example.question, "answer": g.example.answer,
                        "answer_id": g.example.answer_id, "hops": 4,
                        "topic": {"id": g.example.topic_id, "label": topic.get("name") or g.example.topic_id},
                        "path": [[ids[k], r, ids[k + 1]] for k, r in enumerate(g.relations)]})
            if len(out) >= args.n:
                break
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out), encoding="utf-8")
    print(f"{len(out)} 4-hop questions → {args.out} ({len(seen)} training walks left out)")


def latency(args) -> None:
    """p50 / p90 seconds of one graph-only ask (gold start) with the reader and with the rules, same questions,
    same process, torch threads stated."""
    _env()
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings

    s = Settings()
    questions, _ = load_questions(args.questions)
    questions = questions[: args.n]
    rows = {"reader": {"path_scorer": "reader", **({"reader_checkpoint": str(args.checkpoint)}
                                                   if args.checkpoint else {})},
            "rules": {"path_scorer": "rules"}}
    for name, opts in rows.items():     # the reader first and each row on its own runtime: no row reuses the
        with open_runtime(s) as rt:     # other's cached encodings (the reader's own chain cache starts cold)
            shared = {"graph": rt.graph, "models": rt.models, "kg": rt.kg, "write_trace": False}
            p = Pipeline(s, "vispath", options=opts, **shared)
            p.answer(questions[0].question, entity_id=questions[0].topic.id)          # warm: load models
            ts = []
            for q in questions:
                t0 = time.perf_counter()
                p.answer(q.question, entity_id=q.topic.id)
                ts.append(time.perf_counter() - t0)
            ts.sort()
            print(f"{name:7s} n={len(ts)} p50 {statistics.median(ts):.3f} s · p90 {ts[int(0.9 * (len(ts) - 1))]:.3f} s"
                  f" · torch threads {s.torch_threads} · {s.neo4j_uri}", flush=True)


def lambdas(args) -> None:
    """EM of the generated-only and the fold readers for each ``reader_rules_weight`` λ (gold start), then λ
    chosen per fold on the other folds' questions and the held-out EM at that choice (nested: neither the
    reader nor λ saw the fold)."""
    _env()
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.eval.runner import run_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings

    s = Settings()
    questions, _ = load_questions(args.questions)
    fold_of = {q.id: i for i, f in enumerate(folds_by_topic(questions, args.folds, seed=0)) for q in f}
    ws = [float(x) for x in args.lambdas.split(",")]
    em: dict[tuple[str, float], dict[str, bool]] = {}
    with open_runtime(s) as rt:
        shared = {"graph": rt.graph, "models": rt.models, "kg": rt.kg, "write_trace": False}
        for w in ws:
            opts = {"path_scorer": "reader", "reader_rules_weight": w}
            gen = Pipeline(s, "vispath", options={**opts, "reader_checkpoint": str(args.out / "generated.safetensors")},
                           **shared)
            rows = {"generated": run_questions(questions, gen, gold_start=True),
                    "folds": answer_by_folds(s, shared, questions, args, "vispath", opts, True)}
            for row, res in rows.items():
                em[row, w] = {r.id: bool(r.exact_match) for r in res}
    print(f"λ ({len(questions)} questions, gold start, graph-only, torch threads {s.torch_threads}): "
          + "  ".join(f"{w:g}" for w in ws))
    for row in ("folds", "generated"):
        print(f"  {row:10s} EM " + "  ".join(f"{100 * sum(em[row, w].values()) / len(questions):.1f}" for w in ws))
        right = 0
        for i in range(args.folds):
            other = [k for k, f in fold_of.items() if f != i]
            best = max(ws, key=lambda w: (sum(em[row, w][k] for k in other), -w))
            mine = [k for k, f in fold_of.items() if f == i]
            right += sum(em[row, best][k] for k in mine)
            print(f"    fold {i}: λ {best:g} chosen on the other folds, held out {sum(em[row, best][k] for k in mine)}"
                  f" / {len(mine)}")
        print(f"  {row:10s} λ chosen per fold: held-out EM {100 * right / len(questions):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("train", "run", "table", "lambdas", "fourhop", "latency"))
    ap.add_argument("--questions", type=Path, default=MORE / "questions.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / ".kgqa" / "chain-reader")
    ap.add_argument("--graph", default="more-dev")
    ap.add_argument("--graphs", default="more-dev")
    ap.add_argument("--settings", default="gold-start,grounded")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--lambdas", default="1,2,4,8,16,32,64", help="lambdas: reader_rules_weight values")
    ap.add_argument("--examples", type=int, default=600, help="train: generated questions per reader")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--arch", choices=("bi", "cross"), default="bi", help="train: the reader's arrangement")
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--train-examples", type=int, default=800, help="fourhop: the shipped reader's --examples")
    ap.add_argument("--train-seed", type=int, default=0)
    ap.add_argument("--exclude", type=Path, default=ROOT / "data" / "demo" / "questions.jsonl")
    ap.add_argument("--checkpoint", type=Path, default=None, help="latency: the reader (default: the shipped one)")
    ap.add_argument("--terminal-weights", type=Path, default=None, help="run: the fold rows' VisPath terminal "
                    "weights (default: each fold reader's own <reader>.terminal.json when fitted, else the fixed sum)")
    ap.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE", help="run: a VisPath "
                    "option of the reader rows (repeatable), e.g. ends_split=false")
    ap.add_argument("--grasp-checkpoint", type=Path, default=None, help="run: GraSP rows with this node head "
                    "(kgqa train grasp --head nodes on the same KG)")
    args = ap.parse_args()
    {"train": train, "run": run, "table": table, "lambdas": lambdas, "fourhop": fourhop, "latency": latency}[args.step](args)


if __name__ == "__main__":
    main()
