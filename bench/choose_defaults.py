"""VisPath's graph-only defaults chosen on more-dev by cross-validation, reported on folds the choice did not see.

Two steps, so that each graph is run on its own server and the choice sees every graph at once:

    # 1. per graph (the connection from the environment, as for every kgqa command): every candidate's
    #    per-question results, cached under --out/<graph>/<setting>/<candidate>.json (a re-run reuses them)
    .venv/bin/python -m bench.choose_defaults run --graph more-dev
    .venv/bin/python -m bench.choose_defaults run --graph more-dev-buried-wl     # the server of that graph
    # 2. the choice: k folds by topic entity; per fold, the candidate with the best mean EM over the graphs on
    #    the other folds' questions, scored on the fold's own; the held-out figures beside every candidate
    .venv/bin/python -m bench.choose_defaults choose --graphs more-dev,more-dev-buried-wl

Candidates (VisPath ``-o`` sets, graph-only: KGQA_CHAT_BACKEND=none is forced): today's default; the paper's
literal reading; the default with each of its departures from the paper undone one at a time; the previous
default (before M3_fallback, coverage_edge_cost and delta_grounding were chosen); chain_alignment=mean and
δ = 0.05 alone; Eq. 3 off (the start as the grounder ranked it); Eq. 3's margin and grounding margin; wider
hops (M1, M2, M1_per_relation, M3_fallback) and what an edge costs under coverage; the learned
relation-path retriever (``path_scorer=learned``) shipped (trained on the demo KG's generated questions, never
on more-dev) and trained per fold on the other folds' more-dev questions (answers only; its results are held
out per question); the untrained all-MiniLM-L6-v2 as a retriever (a zero head: plain cosine of question and
relation chain); each of those three mixed into the rules (``path_scorer=mixed``, ``learned_weight`` λ in
LAMBDAS), and any other checkpoint given with ``--checkpoint LABEL=PATH``, alone and mixed. ``choose --only``
restricts the per-fold choice to the rows named: e.g. the default and one retriever's λ rows, so λ is chosen
on folds and reported held out. The per-fold choice reads the learned-by-fold results of the other folds too,
whose retrievers saw the held-out fold's questions in training: a small optimistic bias for that one candidate
(a nested split would remove it; 5 × 4 retrievers instead of 5).

With the chain reader on (``--grid reader``, issue 60): the reader scores the chains in every row that does not
name its own scorer (``--reader CKPT``, else the reader VisPath loads on that KG), beside the rules alone; the rows are
today's default, the paper's option set, each of the paper's departures undone one at a time, and the weights the
reader adds (READER_GRID). Any question file and its graph (the demo sets, a held-out-template set) folds by topic
the same way:

    .venv/bin/python -m bench.choose_defaults run --grid reader --reader <reader> --graph more-dev \
        --settings gold-start
    .venv/bin/python -m bench.choose_defaults run --grid reader --graph demo-4hop \
        --questions data/demo/questions-4hop.jsonl --settings gold-start
    .venv/bin/python -m bench.choose_defaults choose --graphs demo-4hop --questions … --settings gold-start

Prints EM, per hop EM, gold path retained, selection given retained, start accuracy per candidate and graph;
then per fold the chosen candidate and its held-out EM, and the held-out total beside the default and the
paper's reading (and the rules alone, where run) on the same questions, per hop, and each row's wrong answers by
the eval's cause (``why_wrong``). Torch threads = KGQA_TORCH_THREADS (default 1), stated. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from bench.paths import MORE, PAPER, folds_by_topic
from kgqa.methods.vispath.options import VisPathOptions

#: departures of today's default from the paper's reading, undone one at a time
ONE_BACK = {k: {k: v} for k, v in PAPER.items()}
CANDIDATES: dict[str, dict[str, str]] = {
    "default": {},
    "paper": PAPER,
    **{f"default, {k}={v}": opt for k, opt in ONE_BACK.items() for v in opt.values()},
    # the defaults before this round (2026-12-02, morning: no M3_fallback, edge cost 0.01, Eq. 3 without the
    # grounding margin); the round before's (chain_alignment=mean, δ = 0.05) undone one at a time
    "previous default": {"M3_fallback": "0", "coverage_edge_cost": "0.01", "delta_grounding": "0"},
    # round 2's default (2026-12-02, evening): answer typing ranked first, before depth and σ
    "round-2 default": {"typing_weight": "0"},
    "default, chain_alignment=mean": {"chain_alignment": "mean"},
    "default, delta=0.05": {"delta": "0.05"},
    # Eq. 3 off: the start as the grounder or linker ranked it
    "default, no_graph_validation": {"no_graph_validation": "true"},
    # retention at hubs (thousands of edges): how many edges and paths each hop keeps
    "default, M1=60": {"M1": "60"},
    "default, M2=60": {"M2": "60"},
    "default, M1_per_relation=10": {"M1_per_relation": "10"},
    "learned (shipped)": {"path_scorer": "learned"},
    # graph-only: paths kept per hop when no LLM examined the chains (M3 = 3 is what the paper's LLM keeps)
    "default, M3_fallback=10": {"M3_fallback": "10"},
    "default, M3_fallback=30": {"M3_fallback": "30"},
    # Eq. 3's margin: the paper's 0.05, today's 0.2, wider
    "default, delta=0.3": {"delta": "0.3"},
    "default, delta=0.5": {"delta": "0.5"},
    "default, compat_score=sketch": {"compat_score": "sketch"},
    # Eq. 3's margin grown by the rival's grounding gap (retrieval score) to the first candidate
    "default, delta_grounding=0.5": {"delta_grounding": "0.5"},
    "default, delta_grounding=1": {"delta_grounding": "1"},
    "default, delta=0.05, delta_grounding=1": {"delta": "0.05", "delta_grounding": "1"},
    # what an edge costs under coverage: a weak phrase match (≥ sketch_min_cos) no longer pays for a hop
    "default, M3_fallback=10, coverage_edge_cost=0.2": {"M3_fallback": "10", "coverage_edge_cost": "0.2"},
    "default, M3_fallback=10, coverage_edge_cost=0.3": {"M3_fallback": "10", "coverage_edge_cost": "0.3"},
    "default, M3_fallback=10, coverage_edge_cost=0.4": {"M3_fallback": "10", "coverage_edge_cost": "0.4"},
    "default, coverage_edge_cost=0.3": {"coverage_edge_cost": "0.3"},
    # the three together (M3_fallback, coverage_edge_cost, delta_grounding)
    **{f"default, M3_fallback={m}, coverage_edge_cost={c}, delta_grounding=1":
       {"M3_fallback": m, "coverage_edge_cost": c, "delta_grounding": "1"}
       for m, c in (("10", "0.3"), ("10", "0.4"), ("10", "0.5"), ("5", "0.4"), ("20", "0.4"), ("10", "0.6"),
                    ("10", "0.7"), ("15", "0.5"))},
    "default, M3_fallback=15, coverage_edge_cost=0.5, delta_grounding=0.5":
        {"M3_fallback": "15", "coverage_edge_cost": "0.5", "delta_grounding": "0.5"},
    # answer typing: what an entity without type evidence earns (a KG that describes its distractors but not
    # every real entity: more-dev's own entities have no description)
    "default, typing_unknown=0.5": {"typing_unknown": "0.5"},
    "default, typing_unknown=1": {"typing_unknown": "1"},
    # the reverse reading order (English names the last hop first) weighed against coverage, not a tie-break
    **{f"default, reading_order_weight={w}": {"reading_order_weight": w} for w in ("0.1", "0.25", "0.5")},
    **{f"default, typing_weight={w}": {"typing_weight": w} for w in ("0.05", "0.1", "0.2", "0.4")},
}
#: the learned retriever mixed into the rules (path_scorer=mixed), at each weight λ, and the untrained all-MiniLM-L6-v2
#: (a head of zeros: plain cosine of question and relation chain) as a retriever, alone and mixed. "{untrained}" is
#: replaced by a zero head the run writes under --out.
LAMBDAS = ("0.1", "0.3", "0.5", "1", "2", "5")
UNTRAINED = "{untrained}"
CANDIDATES.update({
    **{f"learned + rules λ={w} (shipped)": {"path_scorer": "mixed", "learned_weight": w} for w in LAMBDAS},
    "learned (untrained MiniLM)": {"path_scorer": "learned", "path_checkpoint": UNTRAINED},
    **{f"learned + rules λ={w} (untrained MiniLM)":
       {"path_scorer": "mixed", "learned_weight": w, "path_checkpoint": UNTRAINED} for w in LAMBDAS},
})
LEARNED_FOLDS = "learned (more-dev folds)"
#: the candidates whose retriever is trained per fold on the other folds' more-dev questions (held out per question)
FOLD_CANDIDATES: dict[str, dict[str, str]] = {
    LEARNED_FOLDS: {"path_scorer": "learned"},
    **{f"learned + rules λ={w} (more-dev folds)": {"path_scorer": "mixed", "learned_weight": w} for w in LAMBDAS},
}
FIELDS = ("exact_match", "gold_path", "selected", "start_entity", "hops", "seconds", "why_wrong")

#: ``--grid reader``: the chain reader on (``path_scorer=reader``, ``--reader`` its checkpoint) in every row that does
#: not name its own scorer: today's default and the paper's option set with the reader, each of the paper's departures
#: undone one at a time under the reader, the weights the reader adds; and the rules alone beside them.
PAPER_READER = {**PAPER, "path_scorer": "reader"}
READER_GRID: dict[str, dict[str, str]] = {
    "default": {},
    "paper": PAPER_READER,
    "rules": {"path_scorer": "rules"},
    "paper, rules": PAPER,
    "default, reader_rules_weight=0": {"reader_rules_weight": "0"},
    **{f"default, {k}={v}": {k: v} for k, v in PAPER.items()
       if k != "path_scorer" and VisPathOptions(**{k: v}) != VisPathOptions()},     # depth_fallback is the paper's
    "default, reader_rules_weight=4": {"reader_rules_weight": "4"},
    "default, reader_typing_weight=0": {"reader_typing_weight": "0"},
}
#: options that act only on the start entity (Eq. 2–3): a gold-start run gives the default's answers, so
#: ``--grid reader`` runs them only where the start is grounded
GROUNDING_ONLY = {"delta", "delta_grounding", "keep_label_match", "compat_score", "delta_step", "K", "rank_top"}


def run_graph(args) -> None:
    os.environ["KGQA_CHAT_BACKEND"] = "none"
    os.environ.setdefault("KGQA_TORCH_THREADS", "1")
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.eval.runner import run_questions
    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings
    from kgqa.training.path_supervision import train_path_retriever

    s = Settings()
    for spec in args.checkpoint:          # --checkpoint LABEL=PATH: rows for another retriever, alone and mixed
        label, _, path = spec.partition("=")
        if not label or not Path(path).is_file():
            sys.exit(f"--checkpoint {spec!r}: expected LABEL=PATH of an existing checkpoint")
        CANDIDATES[f"learned ({label})"] = {"path_scorer": "learned", "path_checkpoint": str(Path(path).resolve())}
        for w in LAMBDAS:
            CANDIDATES[f"learned + rules λ={w} ({label})"] = {"path_scorer": "mixed", "learned_weight": w,
                                                              "path_checkpoint": str(Path(path).resolve())}
    if args.grid == "reader":
        CANDIDATES.clear()
        reader = {"path_scorer": "reader", **({"reader_checkpoint": str(args.reader.resolve())} if args.reader else {})}
        for name, opt in READER_GRID.items():
            if "gold-start" in args.settings and opt and set(opt) <= GROUNDING_ONLY:
                continue
            CANDIDATES[name] = {**reader, **opt} if "path_scorer" not in opt or opt["path_scorer"] == "reader" \
                else dict(opt)
    questions, _ = load_questions(args.questions)
    raw = {json.loads(x)["id"]: x for x in args.questions.read_text(encoding="utf-8").splitlines() if x.strip()}
    names = [c for c in CANDIDATES if not args.only or c in args.only.split(";")]
    print(f"{args.graph}: {len(questions)} questions · graph-only · torch threads {s.torch_threads} · "
          f"{os.cpu_count()} CPUs (shared) · {s.neo4j_uri}", flush=True)

    def save(setting: str, name: str, results) -> None:
        p = args.out / args.graph / setting / f"{name}.json"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps({r.id: {f: getattr(r, f) for f in FIELDS} for r in results}), encoding="utf-8")

    def done(setting: str, name: str) -> bool:
        return (args.out / args.graph / setting / f"{name}.json").is_file()

    untrained = args.out / "untrained-minilm.safetensors"
    fold_names = [c for c in FOLD_CANDIDATES if args.grid != "reader" and (not args.only or c in args.only.split(";"))]

    with open_runtime(s) as rt:
        shared = {"graph": rt.graph, "models": rt.models, "kg": rt.kg, "write_trace": False}
        if any(UNTRAINED in CANDIDATES[n].values() for n in names) and not untrained.is_file():
            from kgqa.models.heads.path_retriever import new_head, save_checkpoint
            untrained.parent.mkdir(parents=True, exist_ok=True)
            dim = int(rt.kg.embed(["dimension"]).shape[1])
            save_checkpoint(untrained, new_head(dim, 0), {"encoder": "all-MiniLM-L6-v2",
                                                          "note": "untrained: a zero head, plain cosine"})
        for setting in args.settings.split(","):
            for name in names:
                if done(setting, name):
                    continue
                t0 = time.perf_counter()
                opts = {k: (str(untrained) if v == UNTRAINED else v) for k, v in CANDIDATES[name].items()}
                p = Pipeline(s, "vispath", options=opts, **shared)
                save(setting, name, run_questions(questions, p, gold_start=setting == "gold-start"))
                print(f"  {setting} · {name}: {time.perf_counter() - t0:.0f} s", flush=True)
            todo = [c for c in fold_names if not done(setting, c)]
            if args.folds and todo:
                folds = folds_by_topic(questions, args.folds, seed=0)
                tmp = args.out / args.graph / "fold-retrievers"     # one per fold, reused by a re-run
                tmp.mkdir(parents=True, exist_ok=True)
                results: dict[str, list] = {c: [] for c in todo}
                for i, fold in enumerate(folds):
                    held = {q.id for q in fold}
                    ck = tmp / f"fold-{i}-of-{args.folds}-epochs-{args.epochs}.safetensors"
                    if not ck.is_file():
                        data = tmp / f"train-{i}.jsonl"
                        data.write_text("\n".join(raw[q.id] for q in questions if q.id not in held) + "\n",
                                        encoding="utf-8")
                        train_path_retriever(rt.graph, rt.kg, checkpoint=ck, data=data, examples=0, generated=False,
                                             epochs=args.epochs, seed=0)
                    for c in todo:
                        p = Pipeline(s, "vispath", options={**FOLD_CANDIDATES[c], "path_checkpoint": str(ck)},
                                     **shared)
                        results[c] += run_questions(fold, p, gold_start=setting == "gold-start")
                for c in todo:
                    save(setting, c, results[c])
                    print(f"  {setting} · {c}: done", flush=True)


def rate(rows: list[dict], field: str) -> float:
    v = [r[field] for r in rows if r.get(field) is not None]
    return 100.0 * sum(bool(x) for x in v) / len(v) if v else float("nan")


def per_hop(rows: list[dict], hops: list[int]) -> str:
    return "/".join(f"{rate([r for r in rows if r['hops'] == h], 'exact_match'):.1f}" for h in hops)


def choose(args) -> None:
    from kgqa.app.eval.metrics import WHY_WRONG
    from kgqa.app.eval.questions import load_questions

    questions, _ = load_questions(args.questions)
    graphs = args.graphs.split(",")
    folds = folds_by_topic(questions, args.folds, seed=0)
    for setting in args.settings.split(","):
        res: dict[str, dict[str, dict]] = {}          # candidate -> graph -> qid -> row
        for g in graphs:
            for p in sorted((args.out / g / setting).glob("*.json")):
                res.setdefault(p.stem, {})[g] = json.loads(p.read_text(encoding="utf-8"))
        cands = [c for c in res if all(g in res[c] for g in graphs)
                 and (not args.only or c in args.only.split(";"))]
        if not cands:
            print(f"{setting}: no results for {graphs} under {args.out}")
            continue
        hops = sorted({q.hops for q in questions if q.hops})
        print(f"\n== {setting} · graph-only · {len(questions)} questions · {args.folds} folds by topic entity ==")
        print(f"{'candidate':<46} " + " ".join(f"{g[:26]:>26}" for g in graphs))
        print(f"{'':<46} " + " ".join(f"{'EM ' + '/'.join(f'{h}h' for h in hops) + ' start path sel':>26}" for g in graphs))
        for c in cands:
            cells = []
            for g in graphs:
                rows = [res[c][g][q.id] for q in questions if q.id in res[c][g]]
                ph = "/".join(f"{rate([r for r in rows if r['hops'] == h], 'exact_match'):.0f}" for h in hops)
                cells.append(f"{rate(rows, 'exact_match'):5.1f} {ph} {rate(rows, 'start_entity'):3.0f} "
                             f"{rate(rows, 'gold_path'):3.0f} {rate(rows, 'selected'):3.0f}")
            print(f"{c:<46} " + " ".join(f"{x:>26}" for x in cells))

        def mean_em(c: str, ids: set[str]) -> float:
            return sum(rate([v for k, v in res[c][g].items() if k in ids], "exact_match") for g in graphs) / len(graphs)

        held: dict[str, list[dict]] = {g: [] for g in graphs}
        base: dict[str, dict[str, list[dict]]] = {b: {g: [] for g in graphs} for b in ("default", "paper", "rules")}
        print(f"\nper fold: the candidate with the best mean EM over {', '.join(graphs)} on the other folds")
        for i, fold in enumerate(folds):
            ids = {q.id for q in fold}
            train = {q.id for q in questions} - ids
            best = max(cands, key=lambda c: (round(mean_em(c, train), 6), c == "default"))
            line = []
            for g in graphs:
                held[g] += [res[best][g][q] for q in ids if q in res[best][g]]
                for b in base:
                    base[b][g] += [res[b][g][q] for q in ids if q in res[b][g]] if b in res else []
                line.append(f"{g} {rate([res[best][g][q] for q in ids], 'exact_match'):.1f}")
            print(f"  fold {i + 1} ({len(ids)} q): {best!r} (train mean EM {mean_em(best, train):.1f}) → held out "
                  + ", ".join(line))
        overall = max(cands, key=lambda c: (round(mean_em(c, {q.id for q in questions}), 6), c == "default"))
        print(f"\nheld-out EM (each fold scored by the choice made without it) beside the fixed rows, same questions:")
        for g in graphs:
            print(f"  {g:<24} chosen-by-folds {rate(held[g], 'exact_match'):5.1f} ({per_hop(held[g], hops)}) · "
                  + " · ".join(f"{b} {rate(base[b][g], 'exact_match'):5.1f} ({per_hop(base[b][g], hops)})"
                               for b in base if b in res))
        print("why wrong (the eval's miss causes: " + ", ".join(WHY_WRONG) + "), same questions:")
        for g in graphs:
            rows = {"chosen-by-folds": held[g], **{b: base[b][g] for b in base if b in res}}
            print(f"  {g:<24} " + " · ".join(f"{k} " + "/".join(str(sum(r.get("why_wrong") == w for r in v))
                                                               for w in WHY_WRONG) for k, v in rows.items()))
        print(f"chosen on the whole set (the new default if the held-out folds agree): {overall!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("run", "choose"))
    ap.add_argument("--graph", default="more-dev", help="run: the name the results are stored under")
    ap.add_argument("--graphs", default="more-dev", help="choose: comma list of graphs run before")
    ap.add_argument("--questions", type=Path, default=MORE / "questions.jsonl")
    ap.add_argument("--settings", default="grounded,gold-start")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--only", default="", help=";-separated candidate names (default: all); choose: the "
                    "candidates the per-fold choice is made among")
    ap.add_argument("--out", type=Path, default=ROOT / ".kgqa" / "choose")
    ap.add_argument("--checkpoint", action="append", default=[], metavar="LABEL=PATH",
                    help="run: rows 'learned (LABEL)' and 'learned + rules λ=… (LABEL)' for another path-retriever "
                         "checkpoint (repeatable)")
    ap.add_argument("--grid", choices=("rules", "reader"), default="rules", help="run: the candidates of the "
                    "rules' rounds (default), or the reader grid (READER_GRID: the chain reader on in every row that "
                    "does not name its scorer; with --settings gold-start the rows that only move the start are left "
                    "out)")
    ap.add_argument("--reader", type=Path, default=None, help="run, --grid reader: the reader's checkpoint (default: "
                    "the one VisPath loads)")
    args = ap.parse_args()
    (run_graph if args.step == "run" else choose)(args)


if __name__ == "__main__":
    sys.exit(main())
