"""The one method interface: ``BaseMethod``, which VisPath, mKG-RAG and GraSP each extend.

A method is a ``BaseMethod`` subclass with

* ``name``      the CLI name (``--method vispath``)
* ``title``     the paper it implements, by title; ``arxiv`` its arXiv id when known
* ``Options``   a pydantic model (``extra="forbid"``) of its hyperparameters, each a
                ``Field(description=...)``; ``kgqa methods`` lists them, ``-o KEY=VALUE``
                sets them, and the model validates them before anything connects
* ``ablations`` the boolean options that switch off one of the paper's components
                (``kgqa eval --ablate NAME``)
* ``solve(query) -> Answer``: the method's algorithm, top to bottom, in its own package;
  ``BaseMethod.answer`` calls it with the question validated where it entered (``core/inputs``), the pipeline
  adds seconds, cost and the trace
* ``render(answer) -> list[str]``: the method-specific lines ``kgqa ask`` prints
* ``cli_flags``  optional: the method's own command-line flags, each an alias of one of its options
                (``{"--m1": "M1"}``); ``kgqa ask`` and ``kgqa eval`` accept them for the methods that
                declare them, so the app names no method's flags
* ``grounds_start_entity``: whether ``kgqa eval`` scores the start entity

What the app reads out of ``Answer.details`` is named in ``kgqa.core.result.Details`` (the keys a method
may set for ``kgqa ask`` and ``kgqa eval``); everything else in ``details`` is the method's own.

``BaseMethod.__init__(ctx, options)`` does the wiring from a ``Context`` (settings, graph, models,
shared KG access) and validates nothing else: options arrive validated (``parse_options``).
Everything that belongs to one question (the hidden facts of ``--drop-edges``, the question's
sketch) lives in the method's per-query record, never on ``self``: one instance answers
concurrent ``kgqa serve`` requests.

The core (config, graph, models, result, trace, kg) imports no method; the registry
(``kgqa.methods.registry``) is the one place that names them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, is_dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from pydantic import BaseModel, ValidationError

from kgqa.core.errors import InvalidInput, first_error
from kgqa.core.images import ImageInput
from kgqa.core.inputs import MAX_QUESTION_CHARS, Question, check_number, check_question, check_text  # noqa: F401 (re-exported)
from kgqa.core.kg import KG
from kgqa.core.result import Answer

if TYPE_CHECKING:
    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph


@dataclass(frozen=True)
class Query:
    """One question as every method receives it."""

    question: str                     # a ``Question`` (core/inputs: validated where it entered)
    image: ImageInput | None = None
    entity_id: str | None = None      # a given topic entity (skips grounding), e.g. ``--entity Q90``
    drop_edges: float = 0.0           # incomplete-KG evaluation: share of the topic entity's edges hidden
    seed: int = 0                     # … chosen deterministically with this seed
    documents: tuple[str, ...] = ()   # a scope: retrieval only from these document ids (``--doc``, ``--docs``;
    #                                   resolved and checked by ``core/scope``); empty: every document


class ModelRoles(Protocol):
    """The model roles a method is given (``kgqa.models.Models`` is one; the protocols of each role are in
    ``kgqa.models.base``, a layer above this one, hence ``Any`` here)."""

    encoder: Any        # kgqa.models.base.Encoder: texts -> unit vectors
    chat: Any           # kgqa.models.base.ChatModel: the text LLM (NullChat when KGQA_CHAT_BACKEND=none)
    vision: Any         # kgqa.models.base.VisionModel: image -> entity names
    softprompt: Any     # kgqa.models.base.SoftPromptModel: GraSP's soft-prompt LLM


@dataclass
class Context:
    """What a method is built with: nothing is loaded or read from the environment by a method."""

    settings: "Settings | None"   # the one Settings object (None only in tests that need none)
    graph: "Graph"                # Neo4j access: named queries from kgqa/cypher (or a test's fake)
    models: ModelRoles            # the model roles (kgqa.models.build_models)
    kg: KG | None = None          # shared KG access over graph + encoder; None: built from them


class BaseMethod(ABC):
    """What every method shares: the class attributes, the wiring, the question check.

    A subclass must set ``name``, ``title`` and ``Options`` and implement ``solve``; Python refuses to
    build one that lacks ``solve``, and the contract test (tests/unit/test_method_contract.py) checks the
    rest for every registered method."""

    name: ClassVar[str]
    title: ClassVar[str]
    arxiv: ClassVar[str | None] = None
    Options: ClassVar[type[BaseModel]]
    ablations: ClassVar[tuple[str, ...]] = ()
    #: whether the method grounds the question in a start entity (kgqa eval scores it only then)
    grounds_start_entity: ClassVar[bool] = True
    #: the method's own command-line flags: flag -> option name (a bool option's flag takes no value)
    cli_flags: ClassVar[dict[str, str]] = {}
    #: whether the method retrieves from loaded documents and honours a ``Query.documents`` scope
    scoped_by_documents: ClassVar[bool] = False

    def __init__(self, ctx: Context, options: BaseModel | None = None) -> None:
        self.ctx = ctx
        self.settings = ctx.settings
        self.graph = ctx.graph
        self.models = ctx.models
        self.encoder = ctx.models.encoder
        self.chat = ctx.models.chat
        self.vision = ctx.models.vision
        self.kg = ctx.kg if ctx.kg is not None else KG(ctx.graph, ctx.models.encoder)
        self.opt = options if options is not None else self.Options()

    def answer(self, query: Query) -> Answer:
        """``Query`` in, ``Answer`` out: the method's ``solve``. The question arrives validated (a ``Question``,
        from the gate where it entered); only a ``Query`` built by hand with a plain string is checked here."""
        if not isinstance(query.question, Question):
            question = check_question(query.question)
            query = replace(query, question=question) if is_dataclass(query) else query
        return self.solve(query)

    @abstractmethod
    def solve(self, query: Query) -> Answer:
        """The method's algorithm: one question in, one ``Answer`` with typed evidence out."""

    def render(self, answer: Answer) -> list[str]:
        """The method-specific lines of ``kgqa ask`` (the pipeline prints answer and evidence)."""
        return []


def parse_options(method_cls, options: dict[str, Any] | None) -> BaseModel:
    """Validate ``options`` against ``method_cls.Options``: one clear line per problem.

    Values may be strings from ``-o KEY=VALUE`` (pydantic converts "30" to 30, "true" to True).
    ``None`` values are dropped (an unset CLI flag). A number must be finite and of a sane size
    (``core/inputs.check_number``); its range is the option's (every int and float ``Field`` has ``ge``/``le``).
    """
    model = method_cls.Options
    opts = {k: v for k, v in (options or {}).items() if v is not None}
    for k, v in opts.items():
        check_text(k, f"{method_cls.name} option name", 100)
        check_number(v, f"{method_cls.name} option {k}")
    known = sorted(model.model_fields)
    unknown = sorted(set(opts) - set(known))
    if unknown:
        raise InvalidInput(f"{method_cls.name} option(s) {', '.join(unknown)} unknown "
                           f"(known: {', '.join(known)})")
    try:
        return model(**opts)
    except ValidationError as e:
        loc, msg = first_error(e, default_loc="options")
        raise InvalidInput(f"{method_cls.name} option {loc}={opts.get(loc, '')!r}: {msg}") from None


def client_options(method_cls) -> list[str]:
    """The options a client of ``kgqa serve`` may set: how to answer (hops, budgets, weights, switches,
    choices), never which files or models the server loads. An allow-list by type: a bool, a number, a
    ``Literal`` choice, or a field marked ``json_schema_extra={"client": True}`` (a value its own validator
    bounds, e.g. VisPath's ``llm_steps``); any other text option (a checkpoint path) is the server's."""
    import types
    import typing

    def plain(tp) -> bool:
        if typing.get_origin(tp) in (typing.Union, types.UnionType):
            return all(plain(a) for a in typing.get_args(tp) if a is not type(None))
        return tp in (bool, int, float) or typing.get_origin(tp) is typing.Literal

    return [n for n, f in method_cls.Options.model_fields.items()
            if plain(f.annotation) or (isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("client"))]


def parse_kv(pairs: list[str] | None) -> dict[str, str]:
    """``-o KEY=VALUE`` pairs as a dict (one clear line for a pair without ``=``)."""
    out: dict[str, str] = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(f"-o {p!r}: expected KEY=VALUE (see kgqa methods)")
        out[key.strip()] = value.strip()
    return out


def describe_options(method_cls) -> list[tuple[str, str, str]]:
    """(name, default, description) for each option, in declaration order."""
    rows = []
    for name, f in method_cls.Options.model_fields.items():
        default = f.get_default(call_default_factory=True)
        rows.append((name, repr(default), f.description or ""))
    return rows


def flag_takes_value(method_cls, flag: str) -> bool:
    """Whether ``method_cls``'s flag takes a value (a flag of a bool option is a switch)."""
    f = method_cls.Options.model_fields[method_cls.cli_flags[flag]]
    return f.annotation is not bool


def split_method_flags(tokens: list[str], method_classes: list) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The tokens of a command line with the methods' own flags (``cli_flags``) taken out.

    Returns the other tokens, in order, and per method name the options its flags set (``--m1 30`` and
    ``--m1=30`` alike; a bool option's flag sets it to True). A flag applies to every method among
    ``method_classes`` that declares it; any other token starting with ``--`` is one line naming the flags
    those methods know (exit 2)."""
    rest: list[str] = []
    out: dict[str, dict[str, Any]] = {c.name: {} for c in method_classes}
    known = sorted({f for c in method_classes for f in c.cli_flags})
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if not tok.startswith("--") or tok == "--":
            rest.append(tok)
            i += 1
            continue
        flag, eq, value = tok.partition("=")
        owners = [c for c in method_classes if flag in c.cli_flags]
        if not owners:
            names = ", ".join(c.name for c in method_classes)
            raise InvalidInput(f"no such option: {flag} (the flags of {names}: {', '.join(known) or 'none'}; "
                               "-o KEY=VALUE sets any option, kgqa methods lists them)")
        takes = flag_takes_value(owners[0], flag)
        if takes and not eq:
            if i + 1 >= len(tokens):
                raise InvalidInput(f"{flag} needs a value")
            value = tokens[i + 1]
            i += 1
        elif not takes and eq:
            raise InvalidInput(f"{flag} takes no value")
        for c in owners:
            out[c.name][c.cli_flags[flag]] = value if takes else True
        i += 1
    return rest, out
