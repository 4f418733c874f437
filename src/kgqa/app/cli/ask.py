"""``kgqa methods``, ``kgqa ask`` and ``kgqa compare``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from kgqa.app.cli.common import METHOD_FLAGS, app, env_settings, no_abstain, scoped_options

#: Fallback codes of steps that were not asked on purpose (``-o llm_steps``, ``KGQA_CHAT_BACKEND=none``):
#: ``kgqa ask`` says so once instead of listing them as fallbacks.
BY_DESIGN = ("off", "graph_only")


def _ask_args(args: list[str]):
    from kgqa.core.errors import InvalidInput

    if len(args) > 2:
        raise InvalidInput(f"takes [IMAGE] QUESTION, got {len(args)} arguments (quote the question)")
    from kgqa.core.method import check_question  # empty / over the length limit: exit 2 before anything connects

    return (Path(args[0]), check_question(args[1])) if len(args) == 2 else (None, check_question(args[0]))


NO_ABSTAIN_HELP = ("Never abstain, as the papers do: VisPath answers however weakly the start is grounded "
                   "(-o abstain_below=0); mKG-RAG's CPU reader gives its best candidate (-o abstain=false).")


def grounding_line(ans) -> str | None:
    """The grounding score of ``kgqa ask`` (VisPath: the weaker of the image match and the start entity's link
    cosine) and what it means for abstention; None when the method reports none or the start was given."""
    from kgqa.core.result import GROUNDING

    g = ans.details.get(GROUNDING) if isinstance(ans.details, dict) else None
    if not g or g.get("score") is None:
        return None
    names = {"recognition": "image match", "link": "entity link"}
    parts = ", ".join(f"{names.get(k, k)} {v:.2f}" for k, v in g.items() if k in names and v is not None)
    t = g.get("abstain_below") or 0.0
    verdict = ("abstention off (abstain_below=0)" if not t else
               f"below abstain_below={t}: abstained" if g["score"] < t else f"abstains below {t}")
    return f"grounding: {g['score']:.2f}" + (f" ({parts})" if parts else "") + f" · {verdict}"


def fallback_lines(ans) -> list[str]:
    """What ``kgqa ask`` says about the fallbacks an answer took.

    Steps that were off by design (codes ``BY_DESIGN``) are one line: ``graph-only (no LLM step asked)`` when
    no LLM was called at all, else how many steps took their graph-only fallback, by code. Real fallbacks (a
    reply that came and was unusable, an empty graph, …) are listed with their codes and first messages."""
    out = []
    off = [f for f in ans.fallbacks if f.code in BY_DESIGN]
    fb = [f for f in ans.fallbacks if f.code not in BY_DESIGN]
    if off:
        asked = sum(c.calls for role, c in ans.cost.items() if role in ("chat", "softprompt"))
        by_code = ", ".join(f"{k} {v}" for k, v in Counter(f.code for f in off).items())
        out.append("graph-only (no LLM step asked)" if not asked else
                   f"not asked by design: {len(off)} step(s), by code {by_code} (each took its graph-only fallback)")
    if fb:
        codes = Counter(f.code for f in fb)
        out.append(f"fallbacks taken: {len(fb)}, by code {', '.join(f'{k} {v}' for k, v in codes.items())} "
                   f"({'; '.join(f.message for f in fb[:4])}" + (" …" if len(fb) > 4 else "") + ")")
    return out


@app.command("methods")
def methods_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """List the methods with their paper, options (defaults) and ablations."""
    from kgqa.app.pipeline import methods_json
    from kgqa.core.method import describe_options
    from kgqa.methods.registry import method_classes

    if as_json:
        print(json.dumps(methods_json(), indent=2))
        return
    classes = method_classes()
    for c in classes.values():
        print(f"{c.name} — {c.title}" + (f" (arXiv {c.arxiv})" if c.arxiv else ""))
        for n, d, t in describe_options(c):
            print(f"  -o {n + '=' + d:<30} {t}")
        print(f"  ablations (--ablate): {', '.join(c.ablations) or 'none'}")
        if c.cli_flags:
            print(f"  flags (kgqa ask, kgqa eval): {', '.join(f'{f} (-o {o})' for f, o in c.cli_flags.items())}")
        print()
    print("Set an option with -o KEY=VALUE (kgqa ask, kgqa eval) or -o METHOD.KEY=VALUE (kgqa compare).")


@app.command("ask", context_settings=METHOD_FLAGS)
def ask(
    args: list[str] = typer.Argument(..., metavar="[IMAGE] QUESTION [METHOD FLAGS]",
                                     help="An optional image file, then the question; the method's own flags "
                                     "(kgqa methods lists them) anywhere."),
    entity: Optional[str] = typer.Option(None, "--entity", help="Start entity id (skips grounding), e.g. Q90."),
    method: str = typer.Option("vispath", "--method", help="The method (kgqa methods lists them)."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="KEY=VALUE",
                                               help="A method option (repeatable; kgqa methods lists them)."),
    ablate: Optional[list[str]] = typer.Option(None, "--ablate", help="Switch on one of the method's ablations "
                                               "(repeatable; kgqa methods lists them)."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    no_abstain_: bool = typer.Option(False, "--no-abstain", help=NO_ABSTAIN_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the Answer as JSON."),
    doc: Optional[list[str]] = typer.Option(None, "--doc", metavar="ID", help="Retrieve only from this loaded "
                                            "document (repeatable; kgqa docs list shows the ids; mkgrag)."),
    docs: Optional[list[str]] = typer.Option(None, "--docs", metavar="GLOB", help="Retrieve only from the loaded "
                                             "documents whose id, path or file name matches (e.g. 'manuals/*.pdf'; "
                                             "repeatable; mkgrag)."),
):
    """Answer a question about an image (or a plain question) over the KG, and store its reasoning trace.

    A method's own flags (kgqa methods lists them) are aliases of its options: -o KEY=VALUE wins over them."""
    from kgqa.app.pipeline import Pipeline
    from kgqa.core.method import parse_kv, split_method_flags
    from kgqa.core.trace import browser_url
    from kgqa.methods.registry import get_method

    from kgqa.core.inputs import check_text
    from kgqa.core.scope import check_scope

    rest, flags = split_method_flags(args, [get_method(method)])
    image, question = _ask_args(rest)              # the input gate: question, id and patterns, before connecting
    entity = check_text(entity, "--entity") if entity is not None else None
    check_scope(doc, docs)
    opts = {**flags[get_method(method).name], **parse_kv(option)}
    if no_abstain_:
        opts = no_abstain({method: opts}, [method])[method]
    settings = env_settings()
    pipe = Pipeline(settings, method=method, options=opts, ablations=[a.replace("-", "_") for a in ablate or []],
                    replay_cache=replay_cache)
    try:
        ans = pipe.answer(question, image=image, entity_id=entity, docs=doc, docs_glob=docs)
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
    if (g := grounding_line(ans)) is not None:
        print(g)
    for ev in ans.evidence:
        score = f"score {ev.score}" if ev.score is not None else "score -"
        print(f"{ev.kind} {ev.rank} ({score}): {ev.one_line()}")
    suff = {True: "yes", False: "no", None: "not checked"}[ans.sufficient]
    print(f"evidence sufficient: {suff} · {ans.stop_reason}")
    total_calls = sum(c.calls for c in ans.cost.values())
    parts = [f"{role} {c.calls} calls {c.prompt_tokens}+{c.completion_tokens} tok {c.seconds:.1f}s"
             for role, c in sorted(ans.cost.items())]
    print(f"cost: {total_calls} model calls · {ans.seconds:.1f} s total · " + (" · ".join(parts) or "-"))
    for line in fallback_lines(ans):
        print(line)
    print(f"trace: {ans.trace_id}")
    print(f"browser: {browser_url(settings, ans.trace_id)}")


@app.command("compare")
def compare(
    args: list[str] = typer.Argument(..., metavar="[IMAGE] QUESTION",
                                     help="An optional image file, then the question."),
    methods: Optional[str] = typer.Option(None, "--methods", help="Comma-separated methods (default: all)."),
    entity: Optional[str] = typer.Option(None, "--entity", help="Start entity id given to every method."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="[METHOD.]KEY=VALUE",
                                               help="A method option (repeatable)."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    no_abstain_: bool = typer.Option(False, "--no-abstain", help=NO_ABSTAIN_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the Answers as JSON."),
):
    """Every method answers the same question over the same graph: one side-by-side table."""
    from kgqa.app.pipeline import Pipeline
    from kgqa.core.errors import KgqaError
    from kgqa.core.trace import browser_url
    from kgqa.methods.registry import method_names

    image, question = _ask_args(args)
    names = method_names(methods)
    errors: dict[str, KgqaError] = {}
    settings = env_settings()
    opts = scoped_options(option, names)
    if no_abstain_:
        no_abstain(opts, names)
    pipes = Pipeline.many(settings, names, options=opts, replay_cache=replay_cache,
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
            if a is not None and a.trace_id:
                print(f"{m}: {browser_url(settings, a.trace_id)}")
    failed = [e for _, _, e in results if e is not None]
    if failed:
        raise typer.Exit(failed[0].exit_code)


