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
    for what, n in report.skipped.items():
        con.print(f"skipped: {n:,} {what}")
    if report.rejects:
        reasons = ", ".join(f"{k} {v}" for k, v in report.rejects_by_reason.items())
        con.print(f"rejected {report.rejects:,} bad lines ({reasons}) → {report.rejects_path}")


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
