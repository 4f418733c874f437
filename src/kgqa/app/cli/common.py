"""The Typer app, its command groups and the helpers every command module shares.

Only ``typer`` and the standard library are imported here: anything heavy is imported
inside the commands, so that ``kgqa --help`` is instant.
"""

from __future__ import annotations

from contextlib import contextmanager

import typer
from typer.core import TyperGroup

app = typer.Typer(
    help="Multimodal knowledge-graph question answering over Neo4j.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
neo4j_app = typer.Typer(help="Run the local Neo4j server (no Docker needed) and apply the schema.",
                        no_args_is_help=True)
load_app = typer.Typer(help="Load knowledge graphs into Neo4j.", no_args_is_help=True)
trace_app = typer.Typer(help="Show, open in Neo4j Browser and remove stored reasoning traces.", no_args_is_help=True)
encoder_app = typer.Typer(help="Prepare the name encoder's local variants.", no_args_is_help=True)
docs_app = typer.Typer(help="List, show and remove loaded documents (mKG-RAG's per-document KGs).",
                       no_args_is_help=True)


class TrainGroup(TyperGroup):
    """``kgqa train``'s commands: the app's own (``kgqa.app.cli.train``), then the methods' own
    (``kgqa.methods.registry.train_commands``), added the first time the group's commands are read, so that no
    other command imports the methods."""

    _with_methods = False

    @property
    def commands(self) -> dict:
        if not self._with_methods:
            self._with_methods = True
            from typer.main import get_command_from_info
            from typer.models import CommandInfo

            from kgqa.methods.registry import train_commands

            for name, fn in train_commands().items():
                self._commands[name] = get_command_from_info(CommandInfo(name=name, callback=train_command(fn)),
                                                             pretty_exceptions_short=True,
                                                             rich_markup_mode=self.rich_markup_mode)
        return self._commands

    @commands.setter
    def commands(self, value: dict) -> None:
        self._commands = value


train_app = typer.Typer(help="Train the learned parts: GraSP's encoder, the chain reader, VisPath's terminal selection, "
                             "mKG-RAG's span reader and passage ranker.", no_args_is_help=True, cls=TrainGroup)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(load_app, name="load")
app.add_typer(trace_app, name="trace")
app.add_typer(docs_app, name="docs")
app.add_typer(train_app, name="train")
app.add_typer(encoder_app, name="encoder")

#: ``kgqa ask`` and ``kgqa eval``: the flags Typer does not know reach the command's arguments, which pass them
#: to the method that declares them (``BaseMethod.cli_flags``, ``kgqa.core.method.split_method_flags``)
METHOD_FLAGS = {"ignore_unknown_options": True, "allow_extra_args": True}


class TrainSession:
    """What a training command gets (``kgqa.core.report.TrainSession``): the settings, ``say``, the graph."""

    def __init__(self, as_json: bool):
        self.as_json = as_json
        self.settings = env_settings()

    def say(self, msg: str) -> None:
        if not self.as_json:
            print(msg, flush=True)

    @contextmanager
    def context(self):
        from kgqa.app.runtime import open_runtime

        with open_runtime(self.settings) as rt:
            yield rt.context()


def train_command(fn):
    """The Typer command of a training function ``fn(session, **options) -> Report``: ``fn``'s options (after
    the session) and ``--json``; it runs ``fn`` and prints the report (``Report.show``), the one way every
    ``kgqa train`` command prints."""
    import inspect
    import typing

    hints = typing.get_type_hints(fn)
    params = [p.replace(annotation=hints.get(p.name, p.annotation))
              for p in list(inspect.signature(fn).parameters.values())[1:]]
    params.append(inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                                    default=typer.Option(False, "--json", help="Print the report as JSON.")))

    def command(**options):
        as_json = options.pop("as_json")
        fn(TrainSession(as_json), **options).show(as_json)

    command.__signature__ = inspect.Signature(params)
    command.__doc__ = fn.__doc__
    command.__name__ = fn.__name__
    return command


def env_settings(**overrides):
    """The environment's Settings with the non-None ``overrides``; a bad KGQA_* / NEO4J_* value is one line."""
    from pydantic import ValidationError

    from kgqa.core.config import Settings
    from kgqa.core.errors import InvalidInput, cap_repr, first_error

    try:
        s = Settings()
    except ValidationError as e:  # a bad KGQA_* / NEO4J_* value: one line naming the variable
        name, msg = first_error(e)
        raise InvalidInput(f"{name.upper()}={cap_repr(e.errors()[0].get('input', ''), 80)}: {msg}") from None
    overrides = {k: v for k, v in overrides.items() if v is not None}
    return s.model_copy(update=overrides) if overrides else s


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False)


def scoped_options(pairs: list[str] | None, methods: list[str]) -> dict[str, dict]:
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


#: ``--no-abstain`` (ask, compare, eval): the options it sets in every method that has them (VisPath's grounding
#: bar to 0; mKG-RAG's CPU readers answer their best candidate)
ABSTAIN_OPTIONS = {"abstain_below": 0.0, "abstain": False}


def no_abstain(opts: dict[str, dict], methods: list[str]) -> dict[str, dict]:
    """``--no-abstain``: each of ``ABSTAIN_OPTIONS`` for each of ``methods`` whose options have it (the papers'
    behaviour: always answer); other methods are left as they are."""
    from kgqa.methods.registry import get_method

    for m in methods:
        fields = get_method(m).Options.model_fields
        for key, value in ABSTAIN_OPTIONS.items():
            if key in fields:
                opts.setdefault(m, {})[key] = value
    return opts


def writer_lock(settings, before_lease=None):
    """The database's writer lock for this command: ``with writer_lock(s):`` around a command that writes the
    graph. This machine's lock first (``kgqa.core.writer_lock``: refused before anything connects), then the
    lease in the database itself (``kgqa.core.writer_lease``: every spelling of the address, every machine); a
    second writer gets one line naming the holder, exit 3. It yields the lease (``--bulk`` takes it again
    after the importer replaced the store). ``before_lease``: run under this machine's lock, before the lease is
    taken (``--bulk``'s cleanup of an interrupted import, which may start the stopped server)."""
    import shlex
    import sys
    from contextlib import contextmanager

    from kgqa.core.graph import Graph
    from kgqa.core.writer_lease import WriterLease
    from kgqa.core.writer_lock import WriterLock

    @contextmanager
    def held():
        command = shlex.join(["kgqa", *sys.argv[1:]])
        lock = WriterLock(settings, command)
        with lock:
            if lock.took_over:
                print(f"kgqa: note: took over the writer lock of pid {lock.took_over.get('pid')} "
                      f"(`{lock.took_over.get('command', '?')}`), which exited without releasing it", file=sys.stderr)
            if before_lease is not None:
                before_lease()
            with Graph(settings) as g, WriterLease(g, command) as lease:
                if lease.took_over and lease.took_over.get("pid") != (lock.took_over or {}).get("pid"):
                    t = lease.took_over
                    print(f"kgqa: note: took over the writer lease of pid {t.get('pid')} on {t.get('host')} "
                          f"(`{t.get('command', '?')}`), which stopped renewing it", file=sys.stderr)
                yield lease
    return held()
