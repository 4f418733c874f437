"""The ``kgqa`` command line.

One Typer sub-app per group. Imports of anything heavy (the Neo4j driver, torch,
models) happen inside the commands, so ``kgqa --help`` is instant. Every
KgqaError becomes one line on stderr and its exit code; ``KGQA_DEBUG=1`` shows
the traceback instead.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(
    help="Multimodal knowledge-graph question answering over Neo4j.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
neo4j_app = typer.Typer(help="Run the local Neo4j server (no Docker needed) and apply the schema.",
                        no_args_is_help=True)
load_app = typer.Typer(help="Load knowledge graphs into Neo4j.", no_args_is_help=True)
trace_app = typer.Typer(help="Show and remove stored reasoning traces.", no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(load_app, name="load")
app.add_typer(trace_app, name="trace")


def _settings(**overrides):
    from kgqa.config import Settings

    s = Settings()
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return s.model_copy(update=overrides) if overrides else s


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


# --------------------------------------------------------------------------- neo4j
@neo4j_app.command("start")
def neo4j_start(
    wait: float = typer.Option(120.0, help="Seconds to wait for Bolt to answer."),
    init: bool = typer.Option(True, help="Apply the kgqa schema once the server answers."),
):
    """Start the local Neo4j 5.26 server (a second start is a no-op)."""
    from kgqa.neo4j_local import LocalNeo4j

    s = _settings()
    server = LocalNeo4j(s)
    st, started = server.start(wait_s=wait)
    con = _console()
    con.print(f"neo4j {'started' if started else 'already running'} · pid {st.pid} · {st.bolt} · {st.http}")
    if init:
        from kgqa.graph import Graph

        with Graph(s) as g:
            g.apply_schema()


@neo4j_app.command("stop")
def neo4j_stop():
    """Stop the local Neo4j server cleanly."""
    from kgqa.neo4j_local import LocalNeo4j

    stopped = LocalNeo4j(_settings()).stop()
    _console().print("neo4j stopped" if stopped else "neo4j was not running")


@neo4j_app.command("status")
def neo4j_status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """Say whether the local server runs and answers (exit 1 when it does not)."""
    from kgqa.neo4j_local import LocalNeo4j

    s = _settings()
    st = LocalNeo4j(s).status()
    info = st.as_dict()
    if st.bolt_answers:
        from kgqa.errors import KgqaError
        from kgqa.graph import Graph

        try:
            with Graph(s) as g:
                row = g.read("server_info")[0]
            info["version"] = f"{row['version']} {row['edition']}"
        except KgqaError as e:
            info["version"] = None
            info["error"] = str(e)
    if as_json:
        print(json.dumps(info, indent=2))
    else:
        con = _console()
        if st.running:
            con.print(f"running · pid {st.pid} · {st.bolt} "
                      f"({'answers' if st.bolt_answers else 'not answering'}) · Browser {st.http}")
            if info.get("version"):
                con.print(f"Neo4j {info['version']} · home {st.home}")
            if info.get("error"):
                con.print(info["error"])
        else:
            con.print(f"not running · home {st.home}")
    raise typer.Exit(0 if st.running and st.bolt_answers else 1)


@neo4j_app.command("init")
def neo4j_init():
    """Apply cypher/schema.cypher (idempotent) and wait for the indexes to be ONLINE."""
    from kgqa.graph import Graph

    with Graph(_settings()) as g:
        n = g.apply_schema()
        g.await_indexes()
    _console().print(f"schema applied ({n} statements), indexes ONLINE")


# --------------------------------------------------------------------------- doctor
@app.command("doctor")
def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    models: bool = typer.Option(True, help="Check the model roles too (loads local models)."),
):
    """Check Neo4j, the schema, the model roles and the data paths."""
    from kgqa.doctor import run_checks

    checks = run_checks(_settings(), models=models)
    failed = [c for c in checks if c.required and not c.ok]
    if as_json:
        print(json.dumps({"ok": not failed, "checks": [c.as_dict() for c in checks]}, indent=2))
    else:
        from rich.table import Table

        t = Table(title="kgqa doctor")
        t.add_column("check")
        t.add_column("status")
        t.add_column("detail", overflow="fold")
        for c in checks:
            status = "[green]ok[/]" if c.ok else ("[red]FAIL[/]" if c.required else "[yellow]warn[/]")
            t.add_row(c.name, status, c.detail)
        _console().print(t)
    raise typer.Exit(1 if failed else 0)


# --------------------------------------------------------------------------- load wikidata5m
@load_app.command("wikidata5m")
def load_wikidata5m_cmd(
    path: Path = typer.Option(..., "--path", help="Folder with the official Wikidata5M files."),
    images: Optional[Path] = typer.Option(None, "--images", help="Folder of <QID>.<jpg|jpeg|png|webp> images."),
    splits: str = typer.Option("train,valid,test", "--splits", help="Triple splits to load, comma-separated."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Load only the first N triples (and their entities)."),
    strict: bool = typer.Option(True, "--strict/--lenient",
                                help="Stop at the first bad line (strict) or skip it into a rejects file."),
    embeddings: bool = typer.Option(True, "--embeddings/--no-embeddings",
                                    help="Embed entity and relation names (a later run can add them)."),
    batch_size: int = typer.Option(10_000, "--batch-size", help="Rows per write transaction."),
    device: Optional[str] = typer.Option(None, "--device", help="Encoder device: cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Load Wikidata5M (entities, relations, facts, descriptions, images, embeddings) into Neo4j."""
    from kgqa.errors import InvalidInput
    from kgqa.graph import Graph
    from kgqa.loaders.wikidata5m import LoadOptions, load_wikidata5m

    if device is not None and device not in ("cpu", "cuda"):
        raise InvalidInput(f"--device {device!r}: must be cpu or cuda")
    s = _settings(device=device)
    opts = LoadOptions(splits=tuple(x.strip() for x in splits.split(",") if x.strip()), limit=limit,
                       strict=strict, embeddings=embeddings, batch_size=batch_size, device=s.device,
                       progress=not as_json and sys.stderr.isatty())
    with Graph(s) as g:
        report = load_wikidata5m(g, path, images=images, options=opts)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
        return
    from rich.table import Table

    t = Table(title=f"kgqa load wikidata5m · {report.seconds:.1f} s · torch threads {report.torch_threads}"
                    f" · device {report.device}")
    t.add_column("phase")
    t.add_column("rows", justify="right")
    t.add_column("seconds", justify="right")
    t.add_column("rows/s", justify="right")
    t.add_column("where the time went", overflow="fold")
    for p in report.phases:
        detail = ", ".join(f"{k} {v:,.2f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in p.detail.items())
        t.add_row(p.name, f"{p.rows:,}", f"{p.seconds:.2f}", f"{p.rows_per_s:,.0f}", detail)
    con = _console()
    con.print(t)
    c = report.counts
    con.print(f"graph: {c.get('entities', 0):,} entities · {c.get('relations', 0):,} relations · "
              f"{c.get('facts', 0):,} facts · {c.get('images', 0):,} images")
    if report.modes:
        con.print("writes: " + " · ".join(f"{k} {v}" for k, v in report.modes.items()), soft_wrap=True)
    for what, n in report.skipped.items():
        con.print(f"skipped: {n:,} {what}", soft_wrap=True)
    if report.rejects:
        reasons = ", ".join(f"{k} {v}" for k, v in report.rejects_by_reason.items())
        con.print(f"rejected {report.rejects:,} bad lines ({reasons}) → {report.rejects_path}", soft_wrap=True)


# --------------------------------------------------------------------------- ask (VisPath section)
@app.command("ask")
def ask(
    args: list[str] = typer.Argument(..., metavar="[IMAGE] QUESTION",
                                     help="An optional image file, then the question."),
    entity: Optional[str] = typer.Option(None, "--entity", help="Start entity id (skips grounding), e.g. Q90."),
    method: str = typer.Option("vispath", "--method", help="vispath (mkgrag, grasp: not implemented yet)."),
    m1: Optional[int] = typer.Option(None, "--m1", help="M1: edges kept per frontier entity (default 30)."),
    m2: Optional[int] = typer.Option(None, "--m2", help="M2: paths kept by chain score (default 30)."),
    m3: Optional[int] = typer.Option(None, "--m3", help="M3: paths kept after LLM examination (default 3)."),
    dmax: Optional[int] = typer.Option(None, "--dmax", help="Dmax: maximum search depth (default 3)."),
    delta: Optional[float] = typer.Option(None, "--delta", help="δ of Eq. 3 (default 0.05, +0.01 per rank)."),
    expansion: Optional[str] = typer.Option(None, "--expansion", help="firstcut (default) or exact edge scoring."),
    selection: Optional[str] = typer.Option(None, "--selection", help="How the LLM ranks candidates and examines "
                                            "chains: generate (JSON, the paper's; default) or likelihood "
                                            "(scores the allowed options; for small local models)."),
    no_graph_validation: bool = typer.Option(False, "--no-graph-validation", help="Ablation: take e_Q,1 as is."),
    no_visual_intent: bool = typer.Option(False, "--no-visual-intent", help="Ablation: score edges against Q."),
    no_chain_pruning: bool = typer.Option(False, "--no-chain-pruning", help="Ablation: keep paths by edge score."),
    no_evidence_check: bool = typer.Option(False, "--no-evidence-check", help="Ablation: always run Dmax hops."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    as_json: bool = typer.Option(False, "--json", help="Print the Answer as JSON."),
):
    """Answer a question about an image (or a plain question) over the KG, and store its reasoning trace."""
    from kgqa.errors import InvalidInput
    from kgqa.pipeline import Pipeline

    if len(args) > 2:
        raise InvalidInput(f"ask takes [IMAGE] QUESTION, got {len(args)} arguments (quote the question)")
    image, question = (Path(args[0]), args[1]) if len(args) == 2 else (None, args[0])
    s = _settings()
    opts = {"M1": m1, "M2": m2, "M3": m3, "Dmax": dmax, "delta": delta, "expansion": expansion,
            "selection": selection,
            "no_graph_validation": no_graph_validation or None, "no_visual_intent": no_visual_intent or None,
            "no_chain_pruning": no_chain_pruning or None, "no_evidence_check": no_evidence_check or None,
            "replay_cache": replay_cache}
    pipe = Pipeline(s, method=method, **{k: v for k, v in opts.items() if v is not None})
    try:
        ans = pipe.answer(question, image=image, entity_id=entity)
    finally:
        pipe.close()
    if as_json:
        print(json.dumps(ans.as_dict(), indent=2, ensure_ascii=False, default=str))
        return
    # plain print: entity and relation names may hold [brackets] that Rich would read as markup
    con = print
    con(f"answer: {ans.answer if ans.answer is not None else '(none)'}"
              + (f"  [{ans.answer_id}]" if ans.answer_id else ""))
    d = ans.details
    start = f"{ans.start_entity_name} [{ans.start_entity_id}]" if ans.start_entity_id else "(none)"
    extra = f"  (recognised: {d.get('object_name')!r})" if d.get("object_name") else ""
    if d.get("start_replaced"):
        extra += "  (replaced e_Q,1 by graph-aware validation)"
    con(f"start entity: {start}{extra}")
    con(f"sketch: {' → '.join(d.get('sketch', []))}  (D̂={d.get('depth_hat')}, hops run {ans.hops})")
    for p in ans.paths:
        chain = p.steps[0].head_name if p.steps else ""
        for st in p.steps:
            chain += f" -[{st.relation_name}]-> {st.tail_name}"
        con(f"path {p.rank} (σ={p.score if p.score is not None else '-'}): {chain}")
    suff = {True: "yes", False: "no", None: "not checked"}[ans.sufficient]
    con(f"evidence sufficient: {suff} · {ans.stop_reason}")
    total_calls = sum(c.calls for c in ans.cost.values())
    parts = [f"{role} {c.calls} calls {c.prompt_tokens}+{c.completion_tokens} tok {c.seconds:.1f}s"
             for role, c in sorted(ans.cost.items())]
    con(f"cost: {total_calls} model calls · {ans.seconds:.1f} s total · " + (" · ".join(parts) or "-"))
    if d.get("fallbacks"):
        con(f"fallbacks taken: {len(d['fallbacks'])} ({'; '.join(d['fallbacks'][:4])}"
                  + (" …" if len(d["fallbacks"]) > 4 else "") + ")")
    con(f"trace: {ans.trace_id}")
    print(ans.browser_cypher)


# --------------------------------------------------------------------------- trace (VisPath section)
@trace_app.command("show")
def trace_show(
    trace_id: Optional[str] = typer.Argument(None, help="Trace id (as printed by kgqa ask); none lists recent."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Print a stored reasoning trace (or list the recent ones)."""
    from kgqa.errors import InvalidInput
    from kgqa.graph import Graph
    from kgqa.trace import browser_cypher, format_trace, list_traces, show_trace

    with Graph(_settings()) as g:
        if trace_id is None:
            rows = list_traces(g)
            if as_json:
                print(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
            for r in rows if not as_json else []:
                print(f"{r['id']}  {r['created_at']}  {r['method']}  {r['text']!r} → {r['answer']!r}")
            return
        tr = show_trace(g, trace_id)
    if tr is None:
        raise InvalidInput(f"trace {trace_id}: no such trace")
    if as_json:
        print(json.dumps(tr, indent=2, ensure_ascii=False, default=str))
    else:
        print(format_trace(tr))
        print(browser_cypher(trace_id))


@trace_app.command("rm")
def trace_rm(
    trace_id: Optional[str] = typer.Argument(None, help="Trace id to remove."),
    older_than: Optional[float] = typer.Option(None, "--older-than", help="Remove traces older than DAYS days."),
    all_: bool = typer.Option(False, "--all", help="Remove every trace."),
):
    """Remove stored reasoning traces (the KG's entities and facts are never touched)."""
    from kgqa.errors import InvalidInput
    from kgqa.graph import Graph
    from kgqa.trace import check_trace_id, remove_older_than, remove_trace

    chosen = sum(x is not None and x is not False for x in (trace_id, older_than, all_ or None))
    if chosen != 1:
        raise InvalidInput("trace rm takes exactly one of: ID, --older-than DAYS, --all")
    if trace_id is not None:
        check_trace_id(trace_id)
    with Graph(_settings()) as g:
        if trace_id is not None:
            n = remove_trace(g, trace_id)
            if n == 0:
                raise InvalidInput(f"trace {trace_id}: no such trace")
        else:
            n = remove_older_than(g, 0.0 if all_ else older_than)
    _console().print(f"removed {n} trace(s)")


# --------------------------------------------------------------------------- eval (eval section)
@app.command("eval")
def eval_cmd(
    questions: Path = typer.Argument(..., metavar="QUESTIONS.jsonl", help="Question file (JSON lines)."),
    method: str = typer.Option("vispath", "--method", help="vispath (mkgrag, grasp: not implemented yet)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Evaluate only the first N questions."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON report to this file."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    lenient: bool = typer.Option(False, "--lenient", help="Skip and count bad lines instead of failing."),
    ablate: Optional[list[str]] = typer.Option(None, "--ablate", help="Ablation to switch on (repeatable): "
                                               "no_graph_validation, no_visual_intent, no_chain_pruning, "
                                               "no_evidence_check."),
    gold_start: bool = typer.Option(False, "--gold-start", help="Give the method topic.id as start entity "
                                    "(the paper's setting for text-only KGQA baselines)."),
    traces: bool = typer.Option(False, "--traces/--no-traces", help="Store a reasoning trace per question."),
    selection: Optional[str] = typer.Option(None, "--selection", help="VisPath LLM selection: generate "
                                            "(default) or likelihood (see kgqa ask --help)."),
    quiet: bool = typer.Option(False, "--quiet", help="No per-question progress lines on stderr."),
):
    """Run a method over a question set: SBERT@0.3, exact match, Hits@1, start entity, gold path, cost."""
    from kgqa.errors import InvalidInput
    from kgqa.evaluate import evaluate, load_questions, render_tables

    qs, skipped = load_questions(questions, lenient=lenient)
    if limit is not None:
        qs = qs[:limit]
    if not qs:
        raise InvalidInput(f"{questions}: no valid questions to evaluate")
    s = _settings()
    ablations = [a.replace("-", "_") for a in (ablate or [])]
    options = {"ablations": ablations, "replay_cache": str(replay_cache) if replay_cache else None,
               "gold_start": gold_start, "limit": limit}
    from kgqa.models.encoder import get_encoder
    from kgqa.pipeline import Pipeline

    kwargs = {"ablations": ablations}
    if selection:
        kwargs["selection"] = selection
        options["selection"] = selection
    if replay_cache:
        kwargs["replay_cache"] = replay_cache
    pipe = Pipeline(s, method=method, write_trace=traces, **kwargs)
    err = _console(stderr=True)

    def progress(r):
        if quiet:
            return
        mark = "failed" if r.error else ("abstained" if r.abstained else repr(r.prediction))
        err.print(f"{r.id}: {mark} (gold {r.gold!r}) · {r.seconds:.1f} s", markup=False, soft_wrap=True)

    try:
        encoder = get_encoder(s.encoder_model, device=s.device, threads=s.torch_threads)
        options["sbert_model"] = encoder.model_path
        report = evaluate(qs, pipe, encoder, questions_file=str(questions), method=method, skipped=skipped,
                          options=options, gold_start=gold_start, on_result=progress)
    finally:
        pipe.close()
    text = json.dumps(report, indent=2, ensure_ascii=False, default=str)
    if out is not None:
        tmp = out.with_name(out.name + ".tmp")
        try:
            tmp.write_text(text + "\n", encoding="utf-8")
            tmp.replace(out)
        except OSError as e:
            raise InvalidInput(f"--out {out}: cannot write the report ({e.strerror})") from e
    if as_json:
        print(text)
    else:
        from rich.console import Console

        con = Console(highlight=False, width=max(Console().width, 110))  # the table is ~95 columns wide
        render_tables(report, con)
        if out is not None:
            con.print(f"report written to {out}", markup=False)


# --------------------------------------------------------------------------- entry
def main() -> None:
    from kgqa.errors import KgqaError

    try:
        app()
    except KgqaError as e:
        if os.environ.get("KGQA_DEBUG"):
            raise
        print(f"kgqa: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        print("kgqa: interrupted", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
