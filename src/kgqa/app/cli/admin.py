"""``kgqa neo4j start|stop|status|init`` (the local server), ``kgqa encoder distil`` and ``kgqa doctor``."""

from __future__ import annotations

import json

import typer

from kgqa.app.cli.common import app, console, encoder_app, env_settings, neo4j_app


# --------------------------------------------------------------------------- neo4j
@neo4j_app.command("start")
def neo4j_start(
    wait: float = typer.Option(120.0, help="Seconds to wait for Bolt to answer."),
    init: bool = typer.Option(True, help="Apply the kgqa schema once the server answers."),
):
    """Start the local Neo4j 5.26 server (a second start is a no-op)."""
    from kgqa.core.neo4j_local import LocalNeo4j

    s = env_settings()
    server = LocalNeo4j(s)
    st, started = server.start(wait_s=wait)
    con = console()
    con.print(f"neo4j {'started' if started else 'already running'} · pid {st.pid} · {st.bolt} · {st.http}")
    if init:
        from kgqa.core.graph import Graph

        with Graph(s) as g:
            g.apply_schema()


@neo4j_app.command("stop")
def neo4j_stop():
    """Stop the local Neo4j server cleanly."""
    from kgqa.core.neo4j_local import LocalNeo4j

    stopped = LocalNeo4j(env_settings()).stop()
    console().print("neo4j stopped" if stopped else "neo4j was not running")


@neo4j_app.command("status")
def neo4j_status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """Say whether the local server runs and its database answers (exit 1: not running or Bolt silent;
    exit 3: the server runs but the database is down, e.g. after a panic, or refuses kgqa)."""
    from kgqa.core.neo4j_local import LocalNeo4j

    s = env_settings()
    st = LocalNeo4j(s).status()
    info = st.as_dict()
    info["database_answers"] = False
    if st.bolt_answers:
        from kgqa.core.errors import KgqaError
        from kgqa.core.graph import Graph

        try:
            with Graph(s) as g:      # server_info runs in the database: a panicked one fails it
                row = g.read("server_info")[0]
            info["version"] = f"{row['version']} {row['edition']}"
            info["database_answers"] = True
        except KgqaError as e:
            info["version"] = None
            info["error"] = str(e)
    if as_json:
        print(json.dumps(info, indent=2))
    else:
        con = console()
        if st.running:
            con.print(f"running · pid {st.pid} · {st.bolt} "
                      f"({'answers' if st.bolt_answers else 'not answering'}) · Browser {st.http}")
            if info.get("version"):
                con.print(f"Neo4j {info['version']} · home {st.home}")
            if info.get("error"):
                console(stderr=True).print(f"database DOWN: {info['error']}", soft_wrap=True)
        else:
            con.print(f"not running · home {st.home}")
    if not (st.running and st.bolt_answers):
        raise typer.Exit(1)
    raise typer.Exit(0 if info["database_answers"] else 3)


@neo4j_app.command("init")
def neo4j_init():
    """Apply cypher/schema.cypher (idempotent), rebuild a FAILED index, wait for the indexes to be ONLINE."""
    from kgqa.core.graph import Graph

    from kgqa.loaders.wikidata5m.load import backfill_label_keys

    with Graph(env_settings()) as g:
        n = g.apply_schema()
        rebuilt, fixed = g.rebuild_failed_indexes()
        g.await_indexes()
        keys = backfill_label_keys(g)
    notes = []
    if rebuilt:
        notes.append(f"rebuilt FAILED index(es) {', '.join(rebuilt)}"
                     + (f" after dropping label keys over the index's term limit from {fixed:,} entities"
                        if fixed else ""))
    if keys:
        notes.append(f"label keys added to {keys:,} entities loaded before them")
    console().print(f"schema applied ({n} statements), indexes ONLINE" + "".join(f"; {x}" for x in notes),
                    soft_wrap=True)


# --------------------------------------------------------------------------- encoder
@encoder_app.command("distil")
def encoder_distil(
    dims: int = typer.Option(384, help="Dimensions kept (PCA); the graph's vector indexes hold 384."),
    threads: int = typer.Option(1, help="CPU threads for the one pass over the vocabulary."),
):
    """Distil static name vectors for KGQA_ENCODER_BACKEND=model2vec, locally, once (cached).

    model2vec over the encoder model's own folder (the shipped all-MiniLM-L6-v2 unless KGQA_ENCODER_MODEL)."""
    import time

    from kgqa.models.encoder import default_model_path
    from kgqa.models.static_encoder import distil, distilled_path

    s = env_settings()
    model = s.encoder_model or default_model_path()
    cached = (distilled_path(model, s.models_dir, dims) / "model.safetensors").exists()
    t0 = time.perf_counter()
    path = distil(model, s.models_dir, dims=dims, threads=threads)
    console().print(f"static encoder {'already distilled' if cached else 'distilled'} at {path}"
                    + ("" if cached else f" in {time.perf_counter() - t0:.0f} s") + "; use it with "
                    "KGQA_ENCODER_BACKEND=model2vec for the load and the questions", soft_wrap=True)


# --------------------------------------------------------------------------- doctor
@app.command("doctor")
def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    models: bool = typer.Option(True, help="Check the model roles too (loads local models)."),
):
    """Check Neo4j, the schema, the model roles and the data paths."""
    from kgqa.app.doctor import run_checks

    checks = run_checks(env_settings(), models=models)
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
        console().print(t)
    raise typer.Exit(1 if failed else 0)

