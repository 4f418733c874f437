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
  ``BaseMethod.answer`` checks the question first, the pipeline adds seconds, cost and the trace
* ``render(answer) -> list[str]``: the method-specific lines ``kgqa ask`` prints

``BaseMethod.__init__(ctx, options)`` does the wiring from a ``Context`` (settings, graph, models,
shared KG access) and validates nothing else: options arrive validated (``parse_options``).
Everything that belongs to one question (the hidden facts of ``--drop-edges``, the question's
sketch) lives in the method's per-query record, never on ``self``: one instance answers
concurrent ``kgqa serve`` requests.

The core (config, graph, models, result, trace, kg) imports no method; the registry
(``kgqa.methods.registry``) is the one place that names them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from kgqa.core.errors import InvalidInput, first_error
from kgqa.core.images import ImageInput
from kgqa.core.kg import KG
from kgqa.core.result import Answer


@dataclass(frozen=True)
class Query:
    """One question as every method receives it."""

    question: str
    image: ImageInput | None = None
    entity_id: str | None = None      # a given topic entity (skips grounding), e.g. ``--entity Q90``
    drop_edges: float = 0.0           # incomplete-KG evaluation: share of the topic entity's edges hidden
    seed: int = 0                     # … chosen deterministically with this seed


@dataclass
class Context:
    """What a method is built with: nothing is loaded or read from the environment by a method."""

    settings: Any       # kgqa.core.config.Settings
    graph: Any          # kgqa.core.graph.Graph
    models: Any         # kgqa.models.Models
    kg: Any             # kgqa.core.kg.KG (shared KG access over graph + encoder)


#: The longest question accepted, in characters (``kgqa ask``, ``kgqa eval``, ``kgqa serve`` alike).
#: A question is one sentence or a few; this bound keeps every prompt built from it well inside
#: a small model's context (SmolLM2: 8,192 tokens) instead of running for minutes on 100 KB.
MAX_QUESTION_CHARS = 2000


def check_question(question) -> str:
    """The question, stripped; InvalidInput (exit 2) when empty or over ``MAX_QUESTION_CHARS``."""
    if not isinstance(question, str) or not question.strip():
        raise InvalidInput("question is empty")
    q = question.strip()
    if len(q) > MAX_QUESTION_CHARS:
        raise InvalidInput(f"question is {len(q):,} characters, over the {MAX_QUESTION_CHARS:,}-character limit")
    return q


class BaseMethod:
    """What every method shares: the class attributes, the wiring, the question check."""

    name: ClassVar[str]
    title: ClassVar[str]
    arxiv: ClassVar[str | None] = None
    Options: ClassVar[type[BaseModel]]
    ablations: ClassVar[tuple[str, ...]] = ()
    #: whether the method grounds the question in a start entity (kgqa eval scores it only then)
    grounds_start_entity: ClassVar[bool] = True

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
        """``Query`` in, ``Answer`` out: the question checked, then the method's ``solve``."""
        check_question(query.question)
        return self.solve(query)

    def solve(self, query: Query) -> Answer:
        raise NotImplementedError

    def render(self, answer: Answer) -> list[str]:
        """The method-specific lines of ``kgqa ask`` (the pipeline prints answer and evidence)."""
        return []


def parse_options(method_cls, options: dict[str, Any] | None) -> BaseModel:
    """Validate ``options`` against ``method_cls.Options``: one clear line per problem.

    Values may be strings from ``-o KEY=VALUE`` (pydantic converts "30" to 30, "true" to True).
    ``None`` values are dropped (an unset CLI flag).
    """
    model = method_cls.Options
    opts = {k: v for k, v in (options or {}).items() if v is not None}
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
