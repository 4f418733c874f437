"""``kgqa trace show|open|rm``: the stored reasoning traces."""

from __future__ import annotations

import json
from typing import Optional

import typer

from kgqa.app.cli.common import console, env_settings, trace_app


@trace_app.command("show")
def trace_show(
    trace_id: Optional[str] = typer.Argument(None, help="Trace id (as printed by kgqa ask); none lists recent."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Print a stored reasoning trace (or list the recent ones)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.core.trace import browser_url, format_trace, list_traces, show_trace

    s = env_settings()
    with Graph(s) as g:
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
        print(f"browser: {browser_url(s, trace_id)}")


@trace_app.command("open")
def trace_open(trace_id: str = typer.Argument(..., help="Trace id (as printed by kgqa ask).")):
    """Print the Neo4j Browser link that opens with the trace's query in the editor (connect, then run it).

    Browser draws a fact with its property id (P19); the Relation nodes drawn beside the trace name each one."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.core.trace import browser_url, check_trace_id, show_trace

    check_trace_id(trace_id)            # a malformed id: exit 2 before anything connects
    s = env_settings()
    with Graph(s) as g:
        if show_trace(g, trace_id) is None:
            raise InvalidInput(f"trace {trace_id}: no such trace")
    print(browser_url(s, trace_id))


@trace_app.command("rm")
def trace_rm(
    trace_id: Optional[str] = typer.Argument(None, help="Trace id to remove."),
    older_than: Optional[float] = typer.Option(None, "--older-than", help="Remove traces older than DAYS days."),
    all_: bool = typer.Option(False, "--all", help="Remove every trace."),
):
    """Remove stored reasoning traces (the KG's entities and facts are never touched)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.core.trace import check_trace_id, remove_older_than, remove_trace

    chosen = sum(x is not None and x is not False for x in (trace_id, older_than, all_ or None))
    if chosen != 1:
        raise InvalidInput("trace rm takes exactly one of: ID, --older-than DAYS, --all")
    if trace_id is not None:
        check_trace_id(trace_id)
    with Graph(env_settings()) as g:
        if trace_id is not None:
            n = remove_trace(g, trace_id)
            if n == 0:
                raise InvalidInput(f"trace {trace_id}: no such trace")
        else:
            n = remove_older_than(g, 0.0 if all_ else older_than)
    console().print(f"removed {n} trace(s)")

