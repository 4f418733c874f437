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
from collections import Counter
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
    from pydantic import ValidationError

    from kgqa.core.config import Settings
    from kgqa.core.errors import InvalidInput, cap_repr

    try:
        s = Settings()
    except ValidationError as e:  # a bad KGQA_* / NEO4J_* value: one line naming the variable
        err = e.errors()[0]
        name = ".".join(str(x) for x in err["loc"])
        raise InvalidInput(f"{name.upper()}={cap_repr(err.get('input', ''), 80)}: {err['msg']}") from None
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
    from kgqa.core.neo4j_local import LocalNeo4j

    s = _settings()
    server = LocalNeo4j(s)
    st, started = server.start(wait_s=wait)
    con = _console()
    con.print(f"neo4j {'started' if started else 'already running'} · pid {st.pid} · {st.bolt} · {st.http}")
    if init:
        from kgqa.core.graph import Graph

        with Graph(s) as g:
            g.apply_schema()


@neo4j_app.command("stop")
def neo4j_stop():
    """Stop the local Neo4j server cleanly."""
    from kgqa.core.neo4j_local import LocalNeo4j

    stopped = LocalNeo4j(_settings()).stop()
    _console().print("neo4j stopped" if stopped else "neo4j was not running")


@neo4j_app.command("status")
def neo4j_status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """Say whether the local server runs and answers (exit 1 when it does not)."""
    from kgqa.core.neo4j_local import LocalNeo4j

    s = _settings()
    st = LocalNeo4j(s).status()
    info = st.as_dict()
    if st.bolt_answers:
        from kgqa.core.errors import KgqaError
        from kgqa.core.graph import Graph

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
    from kgqa.core.graph import Graph

    from kgqa.loaders.wikidata5m.load import backfill_label_keys

    with Graph(_settings()) as g:
        n = g.apply_schema()
        g.await_indexes()
        keys = backfill_label_keys(g)
    _console().print(f"schema applied ({n} statements), indexes ONLINE"
                     + (f"; label keys added to {keys:,} entities loaded before them" if keys else ""))


# --------------------------------------------------------------------------- doctor
@app.command("doctor")
def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    models: bool = typer.Option(True, help="Check the model roles too (loads local models)."),
):
    """Check Neo4j, the schema, the model roles and the data paths."""
    from kgqa.app.doctor import run_checks

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
    embed_chunk: int = typer.Option(20_000, "--embed-chunk",
                                    help="Entities per embedding step (a killed load redoes at most one)."),
    device: Optional[str] = typer.Option(None, "--device", help="Encoder device: cpu or cuda."),
    bulk: bool = typer.Option(False, "--bulk", help="First load into an EMPTY database through neo4j-admin "
                              "database import (stops and restarts the local server; for another Neo4j it "
                              "writes the CSVs and prints the command to run)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Load Wikidata5M (entities, relations, facts, descriptions, images, embeddings) into Neo4j."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    if device is not None and device not in ("cpu", "cuda"):
        raise InvalidInput(f"--device {device!r}: must be cpu or cuda")
    if embed_chunk < 1:
        raise InvalidInput(f"--embed-chunk {embed_chunk}: must be at least 1")
    s = _settings(device=device)
    opts = LoadOptions(splits=tuple(x.strip() for x in splits.split(",") if x.strip()), limit=limit,
                       strict=strict, embeddings=embeddings, batch_size=batch_size, device=s.device,
                       embed_chunk=embed_chunk,
                       progress=not as_json)  # bars on a terminal, log lines otherwise
    next_steps: list[str] = []
    with Graph(s) as g:
        if bulk:
            from kgqa.loaders.wikidata5m.bulk import bulk_load_wikidata5m

            report, next_steps = bulk_load_wikidata5m(g, path, images=images, options=opts)
        else:
            report = load_wikidata5m(g, path, images=images, options=opts)
    for w in getattr(report, "warnings", []):  # e.g. an empty split: said, also with --json
        print(f"kgqa: warning: {w}", file=sys.stderr)
    if as_json:
        print(json.dumps({**report.as_dict(), "next_steps": next_steps} if bulk else report.as_dict(), indent=2))
        return
    from rich.table import Table

    t = Table(title=f"kgqa load wikidata5m · {report.seconds:.1f} s · torch threads {report.torch_threads}"
                    f" · device {report.device}" + (f" · encoder {report.encoder}" if report.encoder else ""))
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
    if next_steps:
        for line in next_steps:
            print(line)
        return
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


# --------------------------------------------------------------------------- documents (mKG-RAG section)
docs_app = typer.Typer(help="List, show and remove loaded documents (mKG-RAG's per-document KGs).",
                       no_args_is_help=True)
app.add_typer(docs_app, name="docs")


@load_app.command("documents")
def load_documents_cmd(
    path: Path = typer.Argument(..., metavar="DIR", help="Folder (or file) of .md / .html documents or E-VQA "
                                "knowledge-base .jsonl files."),
    images: Optional[Path] = typer.Option(None, "--images", help="E-VQA: folder of the images named by their URL's "
                                          "file name (URLs are never fetched)."),
    strict: bool = typer.Option(True, "--strict/--lenient", help="Stop at the first bad file (strict) or skip "
                                "and count it."),
    chunk_tokens: int = typer.Option(300, "--chunk-tokens", min=32, help="Chunk size for sections without images "
                                     "(LLM tokens)."),
    link: bool = typer.Option(True, "--link/--no-link", help="Link document entities to Wikidata entities (SAME_AS)."),
    link_threshold: float = typer.Option(0.8, "--link-threshold", help="Minimum SAME_AS score."),
    max_mb: float = typer.Option(5.0, "--max-mb", help="Largest document file accepted, in MB."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Build one multimodal KG per document (mKG-RAG, Section 3.1): segments, textual and visual graphs,
    vision-text matching, embeddings; unchanged documents are skipped, changed ones replaced."""
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.loader import DocumentLoader
    from kgqa.loaders.documents.options import DocOptions
    from kgqa.models import build_models

    s = _settings(model_cache_dir=replay_cache)
    opts = DocOptions(chunk_tokens=chunk_tokens, strict=strict, link=link, link_threshold=link_threshold,
                      max_bytes=int(max_mb * 1024 * 1024), images=images,
                      progress=not as_json and sys.stderr.isatty())
    with Graph(s) as g:
        g.verify()
        report = DocumentLoader(g, build_models(s, g), s, opts).load(path)
    d = report.as_dict()
    if as_json:
        print(json.dumps(d, indent=2, ensure_ascii=False))
        return
    con = _console()
    con.print(f"kgqa load documents {path} · {report.seconds:.1f} s · torch threads {report.torch_threads} · "
              f"chat {report.chat} · visual graph: {report.visual}", markup=False, soft_wrap=True)
    con.print(f"documents: {d['written']} written, {d['replaced']} replaced, {d['unchanged']} unchanged · "
              f"{d['chunks']} chunks · {d['entities']} entities · {d['relations']} relations · "
              f"{d['regions']} regions · {d['same_as']} SAME_AS links", markup=False, soft_wrap=True)
    if d["documents_per_min"]:
        con.print(f"speed: {d['documents_per_min']} documents/min · {d['chunks_per_min']} chunks/min", markup=False)
    con.print("stages (s): " + " · ".join(f"{k} {v}" for k, v in d["stages"].items()), markup=False, soft_wrap=True)
    if d["fallbacks"]:
        con.print("fallbacks taken: " + ", ".join(f"{k} {v}" for k, v in d["fallbacks"].items())
                  + (f" · names not in their text dropped: {d['dropped_ungrounded']}" if d["dropped_ungrounded"] else ""),
                  markup=False, soft_wrap=True)
    elif d["dropped_ungrounded"]:
        con.print(f"names not in their text dropped: {d['dropped_ungrounded']}", markup=False)
    for what, n in d["skipped"].items():
        con.print(f"skipped: {n} ({what})", markup=False)


@docs_app.command("list")
def docs_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """Every loaded document with its counts."""
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.store import list_documents

    with Graph(_settings()) as g:
        rows = list_documents(g)
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
        return
    for r in rows:
        print(f"{r['id']}  {r['title']!r}  {r['status']}  {r['chunks']} chunks · {r['entities']} entities · "
              f"{r['relations']} relations · {r['regions']} regions · {r['same_as']} SAME_AS  ({r['source']})")
    print(f"{len(rows)} document(s)")


@docs_app.command("show")
def docs_show(doc_id: str = typer.Argument(..., metavar="ID"),
              as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """One document's KG: chunks, entities (with image regions and Wikidata links), relations."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.store import show_document

    with Graph(_settings()) as g:
        d = show_document(g, doc_id)
    if d is None:
        raise InvalidInput(f"document {doc_id!r}: no such document (see kgqa docs list)")
    if as_json:
        print(json.dumps(d, indent=2, ensure_ascii=False, default=str))
        return
    doc = d["document"]
    print(f"{doc['id']}  {doc['title']!r}  {doc['format']}  {doc['status']}  hash {str(doc['content_hash'])[:12]}  "
          f"({doc['source']})")
    for c in d["chunks"]:
        imgs = f"  images: {', '.join(i['alt'] or i['sha256'][:8] for i in c['images'] if i)}" if any(c["images"]) else ""
        print(f"chunk {c['id']}  sections {c['sections']}  {c['tokens']} tokens{imgs}")
    for e in d["entities"]:
        extra = "".join(f"  region {r['bbox']}{' (stand-in)' if r.get('stand_in') else ''}" for r in e["regions"] if r)
        extra += "".join(f"  SAME_AS {w['id']} {w['name']!r} ({w['score']:.2f})" for w in e["same_as"] if w)
        print(f"entity {e['name']!r} ({e['type']}): {e['description']}{extra}")
    for r in d["relations"]:
        print(f"relation {r['head']!r} -> {r['tail']!r}: {r['summary']}")


@docs_app.command("rm")
def docs_rm(doc_id: str = typer.Argument(..., metavar="ID")):
    """Remove exactly one document's KG (its images stay when anything else uses them)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.store import remove_document

    with Graph(_settings()) as g:
        n = remove_document(g, doc_id)
    if n == 0:
        raise InvalidInput(f"document {doc_id!r}: no such document (see kgqa docs list)")
    _console().print(f"removed document {doc_id} ({n} nodes)", markup=False)
# --------------------------------------------------------------------------- end of documents section


# --------------------------------------------------------------------------- methods, ask, compare
def _ask_args(args: list[str]):
    from kgqa.core.errors import InvalidInput

    if len(args) > 2:
        raise InvalidInput(f"takes [IMAGE] QUESTION, got {len(args)} arguments (quote the question)")
    from kgqa.app.pipeline import check_question  # empty / over the length limit: exit 2 before anything connects

    return (Path(args[0]), check_question(args[1])) if len(args) == 2 else (None, check_question(args[0]))


def _scoped_options(pairs: list[str] | None, methods: list[str]) -> dict[str, dict]:
    """``-o KEY=VALUE`` (every method) and ``-o METHOD.KEY=VALUE`` (that method) per method."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.method import parse_kv

    out: dict[str, dict] = {m: {} for m in methods}
    for key, value in parse_kv(pairs).items():
        scope, dot, name = key.partition(".")
        if dot:
            if scope not in out:
                raise InvalidInput(f"-o {key}={value}: {scope!r} is not among the methods run ({', '.join(methods)})")
            out[scope][name] = value
        else:
            for m in methods:
                out[m][key] = value
    return out


@app.command("methods")
def methods_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """List the methods with their paper, options (defaults) and ablations."""
    from kgqa.core.method import describe_options
    from kgqa.methods.registry import method_classes

    classes = method_classes()
    if as_json:
        print(json.dumps([{"name": c.name, "title": c.title, "arxiv": c.arxiv, "ablations": list(c.ablations),
                           "options": [{"name": n, "default": d, "description": t}
                                       for n, d, t in describe_options(c)]} for c in classes.values()], indent=2))
        return
    for c in classes.values():
        print(f"{c.name} — {c.title}" + (f" (arXiv {c.arxiv})" if c.arxiv else ""))
        for n, d, t in describe_options(c):
            print(f"  -o {n + '=' + d:<30} {t}")
        print(f"  ablations (--ablate): {', '.join(c.ablations) or 'none'}")
        print()
    print("Set an option with -o KEY=VALUE (kgqa ask, kgqa eval) or -o METHOD.KEY=VALUE (kgqa compare).")


@app.command("ask")
def ask(
    args: list[str] = typer.Argument(..., metavar="[IMAGE] QUESTION",
                                     help="An optional image file, then the question."),
    entity: Optional[str] = typer.Option(None, "--entity", help="Start entity id (skips grounding), e.g. Q90."),
    method: str = typer.Option("vispath", "--method", help="The method (kgqa methods lists them)."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="KEY=VALUE",
                                               help="A method option (repeatable; kgqa methods lists them)."),
    ablate: Optional[list[str]] = typer.Option(None, "--ablate", help="Switch on one of the method's ablations "
                                               "(repeatable; kgqa methods lists them)."),
    # VisPath's flags, kept as aliases of its options (-o M1=30 …)
    m1: Optional[int] = typer.Option(None, "--m1", help="VisPath -o M1: edges kept per frontier entity (default 30)."),
    m2: Optional[int] = typer.Option(None, "--m2", help="VisPath -o M2: paths kept by chain score (default 30)."),
    m3: Optional[int] = typer.Option(None, "--m3", help="VisPath -o M3: paths kept after LLM examination (default 3)."),
    dmax: Optional[int] = typer.Option(None, "--dmax", help="VisPath -o Dmax: maximum search depth (default 3)."),
    delta: Optional[float] = typer.Option(None, "--delta", help="VisPath -o delta: δ of Eq. 3 (default 0.05)."),
    expansion: Optional[str] = typer.Option(None, "--expansion", help="VisPath -o expansion: firstcut or exact."),
    selection: Optional[str] = typer.Option(None, "--selection", help="VisPath -o selection: generate (JSON, the "
                                            "paper's; default) or likelihood (scores the allowed options)."),
    no_graph_validation: bool = typer.Option(False, "--no-graph-validation", help="VisPath ablation: take e_Q,1 as is."),
    no_visual_intent: bool = typer.Option(False, "--no-visual-intent", help="VisPath ablation: score edges against Q."),
    no_chain_pruning: bool = typer.Option(False, "--no-chain-pruning", help="VisPath ablation: keep paths by edge score."),
    no_evidence_check: bool = typer.Option(False, "--no-evidence-check", help="VisPath ablation: always run Dmax hops."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    as_json: bool = typer.Option(False, "--json", help="Print the Answer as JSON."),
):
    """Answer a question about an image (or a plain question) over the KG, and store its reasoning trace."""
    from kgqa.core.method import parse_kv
    from kgqa.app.pipeline import Pipeline

    image, question = _ask_args(args)
    aliases = {"M1": m1, "M2": m2, "M3": m3, "Dmax": dmax, "delta": delta, "expansion": expansion,
               "selection": selection, "no_graph_validation": no_graph_validation or None,
               "no_visual_intent": no_visual_intent or None, "no_chain_pruning": no_chain_pruning or None,
               "no_evidence_check": no_evidence_check or None}
    opts = {**{k: v for k, v in aliases.items() if v is not None}, **parse_kv(option)}
    pipe = Pipeline(_settings(), method=method, options=opts, ablations=[a.replace("-", "_") for a in ablate or []],
                    replay_cache=replay_cache)
    try:
        ans = pipe.answer(question, image=image, entity_id=entity)
    finally:
        pipe.close()
    if as_json:
        print(json.dumps(ans.as_dict(), indent=2, ensure_ascii=False, default=str))
        return
    # plain print: entity and relation names may hold [brackets] that Rich would read as markup
    print(f"answer: {ans.answer if ans.answer is not None else '(none)'}"
          + (f"  [{ans.answer_id}]" if ans.answer_id else ""))
    for line in pipe.render(ans):
        print(line)
    for ev in ans.evidence:
        score = f"score {ev.score}" if ev.score is not None else "score -"
        print(f"{ev.kind} {ev.rank} ({score}): {ev.one_line()}")
    suff = {True: "yes", False: "no", None: "not checked"}[ans.sufficient]
    print(f"evidence sufficient: {suff} · {ans.stop_reason}")
    total_calls = sum(c.calls for c in ans.cost.values())
    parts = [f"{role} {c.calls} calls {c.prompt_tokens}+{c.completion_tokens} tok {c.seconds:.1f}s"
             for role, c in sorted(ans.cost.items())]
    print(f"cost: {total_calls} model calls · {ans.seconds:.1f} s total · " + (" · ".join(parts) or "-"))
    if ans.fallbacks:
        fb = ans.fallbacks
        codes = Counter(f.code for f in fb)
        print(f"fallbacks taken: {len(fb)}, by code {', '.join(f'{k} {v}' for k, v in codes.items())} "
              f"({'; '.join(f.message for f in fb[:4])}" + (" …" if len(fb) > 4 else "") + ")")
    print(f"trace: {ans.trace_id}")
    print(ans.browser_cypher)


@app.command("compare")
def compare(
    args: list[str] = typer.Argument(..., metavar="[IMAGE] QUESTION",
                                     help="An optional image file, then the question."),
    methods: Optional[str] = typer.Option(None, "--methods", help="Comma-separated methods (default: all)."),
    entity: Optional[str] = typer.Option(None, "--entity", help="Start entity id given to every method."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="[METHOD.]KEY=VALUE",
                                               help="A method option (repeatable)."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    as_json: bool = typer.Option(False, "--json", help="Print the Answers as JSON."),
):
    """Every method answers the same question over the same graph: one side-by-side table."""
    from kgqa.core.errors import KgqaError
    from kgqa.app.pipeline import Pipeline
    from kgqa.methods.registry import method_names

    image, question = _ask_args(args)
    names = method_names(methods)
    errors: dict[str, KgqaError] = {}
    pipes = Pipeline.many(_settings(), names, options=_scoped_options(option, names), replay_cache=replay_cache,
                          errors=errors)
    by_name = {p.method_name: p for p in pipes}
    results: list[tuple[str, object, KgqaError | None]] = []
    try:
        for name in names:
            if name in errors:
                results.append((name, None, errors[name]))
                continue
            try:
                results.append((name, by_name[name].answer(question, image=image, entity_id=entity), None))
            except KgqaError as e:
                results.append((name, None, e))
    finally:
        for p in pipes:
            p.close()
    if as_json:
        print(json.dumps([{"method": m, "answer": a.as_dict() if a else None, "error": str(e) if e else None}
                          for m, a, e in results], indent=2, ensure_ascii=False, default=str))
    else:
        from rich import box
        from rich.table import Table

        t = Table(title=f"kgqa compare · {question}", box=box.SIMPLE_HEAD, show_lines=False)
        for col in ("method", "answer", "evidence", "calls", "tokens", "s", "trace"):
            t.add_column(col, overflow="fold", justify="right" if col in ("calls", "tokens", "s") else "left")
        from rich.text import Text     # cells as Text: entity and relation names may hold [brackets]

        for m, a, e in results:
            if a is None:
                t.add_row(m, "error", Text(str(e)), "-", "-", "-", "-")
                continue
            calls = sum(c.calls for c in a.cost.values())
            toks = sum(c.prompt_tokens + c.completion_tokens for r, c in a.cost.items() if r != "encoder")
            ans = (a.answer if a.answer is not None else "(abstained)") + (f" [{a.answer_id}]" if a.answer_id else "")
            t.add_row(m, Text(ans), Text(a.evidence_line()), str(calls), str(toks), f"{a.seconds:.1f}", a.trace_id or "-")
        from rich.console import Console

        Console(highlight=False, width=max(Console().width, 140)).print(t)
        for m, a, e in results:
            if a is not None and a.browser_cypher:
                print(f"{m}: {a.browser_cypher}")
    failed = [e for _, _, e in results if e is not None]
    if failed:
        raise typer.Exit(failed[0].exit_code)


# --------------------------------------------------------------------------- trace
@trace_app.command("show")
def trace_show(
    trace_id: Optional[str] = typer.Argument(None, help="Trace id (as printed by kgqa ask); none lists recent."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
):
    """Print a stored reasoning trace (or list the recent ones)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.core.trace import browser_cypher, format_trace, list_traces, show_trace

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
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.core.trace import check_trace_id, remove_older_than, remove_trace

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


# --------------------------------------------------------------------------- train (GraSP section)
train_app = typer.Typer(help="Train a method's learned parts (GraSP's soft-prompt encoder).", no_args_is_help=True)
app.add_typer(train_app, name="train")


@train_app.command("grasp")
def train_grasp_cmd(
    data: Optional[Path] = typer.Option(None, "--data", help="Question/answer pairs (JSON lines: question, answer, "
                                        "topic.id; the kgqa eval format). Default: generated from the loaded KG."),
    examples: int = typer.Option(64, "--examples", min=1, help="How many questions to generate from the KG."),
    exclude: Optional[Path] = typer.Option(None, "--exclude", help="A question file whose topic entities generated "
                                           "questions must not use (e.g. the eval set)."),
    variant: str = typer.Option("gat", "--variant", help="gat (GraSP) or text (the text soft-prompt ablation)."),
    epochs: int = typer.Option(3, "--epochs", min=1, help="Epochs (Section 4.4: 3)."),
    lr: float = typer.Option(2e-4, "--lr", help="AdamW learning rate (Section 4.4: 2e-4)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generated questions, the initial weights and the order."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Checkpoint file (safetensors). Default: "
                                              "<data dir>/models/grasp/grasp-<variant>.safetensors, what ask loads."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the checkpoint's last saved step."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Loss curve PNG (default: beside the checkpoint)."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="KEY=VALUE",
                                               help="A GraSP extraction option (k1, k2, hops, cap, scan_cap)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Train GraSP's GAT + projector with the soft-prompt LLM frozen (Section 4.4); seeded, resumable."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from kgqa.methods.grasp.algorithm import GraSP
    from kgqa.methods.grasp.training import train_grasp
    from kgqa.core.graph import Graph
    from kgqa.core.kg import KG
    from kgqa.core.method import Context, parse_kv, parse_options
    from kgqa.models import build_models

    s = _settings()
    opts = parse_options(GraSP, {**parse_kv(option), "triples_only": True})      # extraction options only
    opts = opts.model_copy(update={"triples_only": False})
    err = _console(stderr=True)
    lines: list[str] = []

    def say(msg: str) -> None:
        lines.append(msg)
        if not as_json:
            print(msg, flush=True)

    with Graph(s) as g:
        g.verify()
        models = build_models(s, g)
        ctx = Context(settings=s, graph=g, models=models, kg=KG(g, models.encoder))
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeRemainingColumn(), console=err, disable=not sys.stderr.isatty(), transient=True) as bar:
            prep = bar.add_task("subgraphs", total=None)
            steps = bar.add_task("training", total=None, visible=False)

            def on_step(epoch, k, loss):
                bar.update(steps, visible=True, description=f"epoch {epoch + 1}/{epochs} loss {loss:.3f}",
                           completed=k + 1)

            def on_epoch(epoch, mean):
                say(f"epoch {epoch + 1}/{epochs}: mean loss {mean:.4f}")

            rep = train_grasp(ctx, options=opts, variant=variant, data=data, examples=examples, exclude=exclude,
                              epochs=epochs, lr=lr, seed=seed, checkpoint=checkpoint, resume=resume, plot=plot,
                              on_prepare=lambda: bar.advance(prep), on_step=on_step, on_epoch=on_epoch,
                              on_ready=lambda n, r: (bar.update(prep, visible=False),
                                                     bar.update(steps, total=n),
                                                     say(f"resumed after epoch {r[0]} (step {r[1]} of it)") if r
                                                     else None))
    if as_json:
        print(json.dumps(rep, indent=2, ensure_ascii=False, default=str))
        return
    print(f"examples: {rep['examples']} ({rep['how']}); {rep['used']} used, {rep['dropped_answer_not_in_subgraph']} "
          f"dropped (answer not in the extracted subgraph)")
    print(f"encoder: {rep['variant']}, {rep['parameters']:,} parameters · {rep['steps']} steps in all · "
          f"torch threads {s.torch_threads}")
    print(f"loss per epoch: " + ", ".join(f"{v:.4f}" for v in rep["epoch_losses"]))
    print(f"checkpoint: {rep['checkpoint']} ({rep['bytes'] / 1e6:.1f} MB)")
    print(f"loss curve: {rep['plot']}")


# --------------------------------------------------------------------------- end of train (GraSP) section


# --------------------------------------------------------------------------- eval
@app.command("eval")
def eval_cmd(
    questions: Path = typer.Argument(..., metavar="QUESTIONS.jsonl", help="Question file (JSON lines)."),
    method: str = typer.Option("vispath", "--method", help="Method, or several comma-separated (side by side); "
                               "all = every method."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Evaluate only the first N questions."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON report to this file."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    lenient: bool = typer.Option(False, "--lenient", help="Skip and count bad lines instead of failing."),
    ablate: Optional[list[str]] = typer.Option(None, "--ablate", help="Ablation to switch on (repeatable; applies "
                                               "to the methods that have it; kgqa methods lists them)."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="[METHOD.]KEY=VALUE",
                                               help="A method option (repeatable)."),
    gold_start: bool = typer.Option(False, "--gold-start", help="Give the method topic.id as start entity "
                                    "(the paper's setting for text-only KGQA baselines)."),
    traces: bool = typer.Option(False, "--traces/--no-traces", help="Store a reasoning trace per question."),
    selection: Optional[str] = typer.Option(None, "--selection", help="VisPath -o selection: generate "
                                            "(default) or likelihood (see kgqa ask --help)."),
    quiet: bool = typer.Option(False, "--quiet", help="No per-question progress lines on stderr."),
    drop_edges: float = typer.Option(0.0, "--drop-edges", min=0.0, max=0.99, help="Incomplete KG: hide this share "
                                     "of each topic entity's facts at query time (the graph is not changed)."),
    seed: int = typer.Option(0, "--seed", help="Seed choosing the hidden facts (--drop-edges)."),
):
    """Run methods over a question set: SBERT@0.3, exact match, Hits@1, start entity, gold path, cost, fallbacks."""
    from kgqa.core.errors import InvalidInput
    from kgqa.app.evaluate import evaluate, load_questions, render_comparison, render_tables
    from kgqa.models import chat_setting
    from kgqa.methods.registry import get_method, method_names

    names = method_names(method)
    qs, skipped = load_questions(questions, lenient=lenient)
    if limit is not None:
        qs = qs[:limit]
    if not qs:
        raise InvalidInput(f"{questions}: no valid questions to evaluate")
    s = _settings()
    opts = _scoped_options(option, names)
    if selection:
        opts.setdefault("vispath", {})["selection"] = selection
        if "vispath" not in names:
            raise InvalidInput("--selection is a vispath option; vispath is not among the methods run")
    ablations = [a.replace("-", "_") for a in (ablate or [])]
    abl = {m: [a for a in ablations if a in get_method(m).ablations] for m in names}
    for a in ablations:
        if not any(a in abl[m] for m in names):
            raise InvalidInput(f"ablation {a!r} is unknown to {', '.join(names)} (kgqa methods lists them)")
    from kgqa.models.encoder import encoder_for
    from kgqa.app.pipeline import Pipeline

    pipes = Pipeline.many(s, names, options=opts, ablations=abl, write_trace=traces, replay_cache=replay_cache)
    err = _console(stderr=True)
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
            if name == "vispath" and selection:
                options["selection"] = selection
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
        for r in reports.values():
            render_tables(r, con)
        if len(reports) > 1:
            render_comparison(reports, con)
        if out is not None:
            con.print(f"report written to {out}", markup=False)


# --------------------------------------------------------------------------- serve (HTTP API section)
@app.command("serve")
def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback unless told otherwise)."),
    port: int = typer.Option(8765, "--port", help="Port to bind."),
    workers: int = typer.Option(1, "--workers", help="Worker processes; each loads the models once."),
    queue: Optional[int] = typer.Option(None, "--queue", help="Questions queued or running per worker before "
                                        "503 + Retry-After (KGQA_SERVE_QUEUE, default 32)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per question before 504 "
                                            "(KGQA_SERVE_TIMEOUT_S, default 600)."),
    max_upload_mb: Optional[float] = typer.Option(None, "--max-upload-mb", help="Largest request body / image "
                                                  "upload in MB (KGQA_SERVE_MAX_UPLOAD_MB, default 10)."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level."),
):
    """Serve the HTTP API: POST /ask, GET /traces/{id}, /health, /methods, /openapi.json (KGQA_API_TOKEN: bearer auth)."""
    from pydantic import ValidationError

    from kgqa.core.errors import InvalidInput

    env = {"KGQA_SERVE_QUEUE": queue, "KGQA_SERVE_TIMEOUT_S": timeout, "KGQA_SERVE_MAX_UPLOAD_MB": max_upload_mb,
           "KGQA_MODEL_CACHE_DIR": str(replay_cache.resolve()) if replay_cache else None}
    for name, value in env.items():  # the uvicorn workers build their Settings from the environment
        if value is not None:
            os.environ[name] = str(value)
    try:
        s = _settings()
    except ValidationError as e:  # a bad --queue / --timeout / KGQA_SERVE_* value: one line
        err = e.errors()[0]
        raise InvalidInput(f"kgqa serve: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}") from None
    from kgqa.app.serve import run

    run(s, host=host, port=port, workers=workers, log_level=log_level)


# --------------------------------------------------------------------------- end of serve section


# --------------------------------------------------------------------------- entry
def main() -> None:
    from kgqa.core.errors import KgqaError

    try:
        app()
    except KgqaError as e:
        if os.environ.get("KGQA_DEBUG"):
            raise
        from kgqa.core.errors import MESSAGE_LIMIT, cap

        print(f"kgqa: error: {cap(str(e), MESSAGE_LIMIT)}", file=sys.stderr)  # one line, never megabytes
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        print("kgqa: interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit as e:  # Typer turns Ctrl-C into a silent exit 130: say so, as the README promises
        if e.code == 130:
            print("kgqa: interrupted", file=sys.stderr)
        raise


if __name__ == "__main__":
    main()
