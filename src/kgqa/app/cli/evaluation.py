"""``kgqa eval``: methods over a question set, with the metrics of ``kgqa.app.eval``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from kgqa.app.cli.common import METHOD_FLAGS, app, console, env_settings, no_abstain, scoped_options


@app.command("eval", context_settings=METHOD_FLAGS)
def eval_cmd(
    args: list[str] = typer.Argument(..., metavar="QUESTIONS.jsonl [METHOD FLAGS]",
                                     help="Question file (JSON lines); the methods' own flags (kgqa methods "
                                     "lists them) anywhere."),
    method: str = typer.Option("vispath", "--method", help="Method, or several comma-separated (side by side); "
                               "all = every method."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Evaluate only the first N questions."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON report to this file."),
    report_dir: Optional[Path] = typer.Option(None, "--report", metavar="DIR", help="Also write the report to this "
                                              "folder: report.json and report.html (a self-contained page: exact "
                                              "match per hop, why wrong, each wrong question with its trace link)."),
    baseline: Optional[Path] = typer.Option(None, "--baseline", metavar="REPORT.json", help="With --report: another "
                                            "run's JSON report (--out or --report), drawn beside this run's bars."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    lenient: bool = typer.Option(False, "--lenient", help="Skip and count bad lines instead of failing."),
    ablate: Optional[list[str]] = typer.Option(None, "--ablate", help="Ablation to switch on (repeatable; applies "
                                               "to the methods that have it; kgqa methods lists them)."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="[METHOD.]KEY=VALUE",
                                               help="A method option (repeatable)."),
    gold_start: bool = typer.Option(False, "--gold-start", help="Give the method topic.id as start entity "
                                    "(the paper's setting for text-only KGQA baselines)."),
    traces: bool = typer.Option(False, "--traces/--no-traces", help="Store a reasoning trace per question."),
    quiet: bool = typer.Option(False, "--quiet", help="No per-question progress lines on stderr."),
    drop_edges: float = typer.Option(0.0, "--drop-edges", min=0.0, max=0.99, help="Incomplete KG: hide this share "
                                     "of each topic entity's facts at query time (the graph is not changed)."),
    seed: int = typer.Option(0, "--seed", help="Seed choosing the hidden facts (--drop-edges)."),
    no_abstain_: bool = typer.Option(False, "--no-abstain", help="Never abstain, the papers' behaviour "
                                     "(VisPath: -o abstain_below=0; mKG-RAG's CPU reader: -o abstain=false)."),
):
    """Run methods over a question set: SBERT@0.3, exact match, Hits@1, start entity, gold path, cost, fallbacks.

    A method's own flags (kgqa methods lists them) apply to each method run that has them."""
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.eval.report import render_comparison, render_tables
    from kgqa.app.eval.runner import evaluate
    from kgqa.core.errors import InvalidInput
    from kgqa.core.method import split_method_flags
    from kgqa.methods.registry import get_method, method_names
    from kgqa.models import chat_setting

    names = method_names(method)
    base = _read_baseline(baseline, report_dir)
    rest, flags = split_method_flags(args, [get_method(m) for m in names])
    if len(rest) != 1:
        raise InvalidInput(f"takes one QUESTIONS.jsonl file, got {len(rest)} ({' '.join(rest)})")
    questions = Path(rest[0])
    qs, skipped = load_questions(questions, lenient=lenient)
    if limit is not None:
        qs = qs[:limit]
    if not qs:
        raise InvalidInput(f"{questions}: no valid questions to evaluate")
    s = env_settings()
    opts = scoped_options(option, names)
    if no_abstain_:
        no_abstain(opts, names)
    for m in names:     # -o wins over a method's flag
        opts[m] = {**flags[get_method(m).name], **opts[m]}
    ablations = [a.replace("-", "_") for a in (ablate or [])]
    abl = {m: [a for a in ablations if a in get_method(m).ablations] for m in names}
    for a in ablations:
        if not any(a in abl[m] for m in names):
            raise InvalidInput(f"ablation {a!r} is unknown to {', '.join(names)} (kgqa methods lists them)")
    from kgqa.app.pipeline import Pipeline
    from kgqa.models.encoder import encoder_for

    pipes = Pipeline.many(s, names, options=opts, ablations=abl, write_trace=traces, replay_cache=replay_cache)
    err = console(stderr=True)
    setting = chat_setting(s)
    reports = {}
    try:
        encoder = encoder_for(s)
        for pipe in pipes:
            name = pipe.method_name

            def progress(r, name=name):
                if quiet:
                    return
                mark = "failed: " + r.error if r.error else ("abstained" if r.abstained else repr(r.prediction))
                err.print(f"{name} {r.id}: {mark} (gold {r.gold!r}) · {r.seconds:.1f} s", markup=False, soft_wrap=True)

            options = {"ablations": abl[name], "options": {k: str(v) for k, v in opts.get(name, {}).items()},
                       "replay_cache": str(replay_cache) if replay_cache else None, "gold_start": gold_start,
                       "limit": limit, "chat": setting, "sbert_model": encoder.model_path,
                       "drop_edges": drop_edges, "seed": seed}
            reports[name] = evaluate(qs, pipe, encoder, questions_file=str(questions), method=name,
                                     skipped=skipped, options=options, gold_start=gold_start, on_result=progress,
                                     drop_edges=drop_edges, seed=seed)
    finally:
        for pipe in pipes:
            pipe.close()
    report = reports[names[0]] if len(names) == 1 else {"questions_file": str(questions), "chat": setting,
                                                         "methods": reports}
    text = json.dumps(report, indent=2, ensure_ascii=False, default=str)
    if out is not None:
        _write(out, text + "\n", "--out")
    if report_dir is not None:
        from kgqa.app.eval.html import render_html
        from kgqa.core.trace import browser_url

        try:
            report_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InvalidInput(f"--report {report_dir}: cannot create the folder ({e.strerror})") from e
        _write(report_dir / "report.json", text + "\n", "--report")
        _write(report_dir / "report.html", render_html(reports, questions_file=str(questions), chat=setting,
                                                        baseline=base, link=lambda t: browser_url(s, t)), "--report")
    if as_json:
        print(text)
    else:
        from rich.console import Console

        con = Console(highlight=False, width=max(Console().width, 110))  # the table is ~95 columns wide
        for r in reports.values():
            render_tables(r, con)
        if len(reports) > 1:
            render_comparison(reports, con)
        if out is not None:
            con.print(f"report written to {out}", markup=False)
        if report_dir is not None:
            con.print(f"report written to {report_dir / 'report.json'} and {report_dir / 'report.html'}", markup=False)


def _write(path: Path, text: str, option: str) -> None:
    """``text`` to ``path`` through a temporary file (a reader never sees half a report)."""
    from kgqa.core.errors import InvalidInput

    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as e:
        raise InvalidInput(f"{option} {path}: cannot write the report ({e.strerror})") from e


def _read_baseline(path: Optional[Path], report_dir: Optional[Path]) -> dict | None:
    """``--baseline``: a single method's JSON report, read before anything runs (one line when it is not one)."""
    from kgqa.core.errors import InvalidInput

    if path is None:
        return None
    if report_dir is None:
        raise InvalidInput("--baseline draws beside the bars of --report DIR; give --report too")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InvalidInput(f"--baseline {path}: not a readable JSON report ({e})") from None
    if isinstance(data, dict) and "methods" in data and isinstance(data["methods"], dict) and len(data["methods"]) == 1:
        data = next(iter(data["methods"].values()))
    if not (isinstance(data, dict) and isinstance(data.get("overall"), dict) and isinstance(data.get("by_hops"), dict)):
        raise InvalidInput(f"--baseline {path}: not the JSON report of one method (kgqa eval --out)")
    return data
