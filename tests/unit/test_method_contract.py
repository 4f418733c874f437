"""The method contract (kgqa.core.method.BaseMethod), checked for every registered method.

What the app relies on of a method: its options are described and validated, its ablations are boolean
options off by default, its own CLI flags alias options it has, ``solve`` exists (BaseMethod is abstract),
and ``answer()`` returns an ``Answer`` whose evidence points at nodes of the graph it was given. A fourth
method, ``Lookup`` below, is defined and registered here, in this module only: no file of ``kgqa.app``
(nor the registry's list) names it, and ``kgqa.methods.registry``, the pipeline and the CLI's flag
parsing take it like the shipped three. The shipped methods' ``answer()`` on a real graph:
tests/integration/test_method_contract.py.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from kgqa.core.errors import InvalidInput
from kgqa.core.method import BaseMethod, Context, Query, describe_options, parse_options, split_method_flags
from kgqa.core.result import Answer, NodeRef, SubgraphEvidence
from kgqa.methods import registry

REPO = Path(__file__).resolve().parents[2]
QID = re.compile(r"\bQ[0-9]+\b")


# --------------------------------------------------------------------------- a fourth method, here only
class LookupOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    upper: bool = Field(False, description="ablation: answer the name in capitals")
    prefix: str = Field("", description="text put before the answer")


class Lookup(BaseMethod):
    """The entity a question names by id (``What is Q90?``), answered by its name, its node the evidence."""

    name: ClassVar[str] = "lookup"
    title: ClassVar[str] = "A lookup by entity id (a test's method)"
    Options: ClassVar[type[BaseModel]] = LookupOptions
    ablations: ClassVar[tuple[str, ...]] = ("upper",)
    cli_flags: ClassVar[dict[str, str]] = {"--prefix": "prefix", "--upper": "upper"}

    def solve(self, query: Query) -> Answer:
        ids = [query.entity_id] if query.entity_id else QID.findall(query.question)
        rows = self.graph.read("kg_entity_by_id", id=ids[0]) if ids else []
        if not rows:
            return Answer(question=query.question, answer=None, method=self.name, stop_reason="no id in the graph")
        e = rows[0]
        name = e["name"].upper() if self.opt.upper else e["name"]
        return Answer(question=query.question, answer=self.opt.prefix + name, method=self.name, answer_id=e["id"],
                      start_entity_id=e["id"], start_entity_name=e["name"], stop_reason="looked up",
                      evidence=[SubgraphEvidence(nodes=[NodeRef("Entity", e["id"], e["name"])], rank=1)])


class DictGraph:
    """A generic fake graph: entities by id, answering the one shared query ``kg_entity_by_id``."""

    def __init__(self, entities: dict[str, str]):
        self.entities = entities

    def read(self, name, params=None, **kw):
        p = {**(params or {}), **kw}
        assert name == "kg_entity_by_id", name
        i = p["id"]
        return [{"id": i, "name": self.entities[i], "description": None}] if i in self.entities else []


def context(graph) -> Context:
    models = SimpleNamespace(encoder=None, chat=None, vision=None, softprompt=None)
    return Context(settings=None, graph=graph, models=models, kg=SimpleNamespace())


@pytest.fixture()
def lookup():
    registry.register_method(Lookup)
    yield Lookup
    registry.unregister_method(Lookup.name)


def every_method(lookup) -> list[type]:
    return list(registry.method_classes().values())


# --------------------------------------------------------------------------- the contract, every method
def test_the_fourth_method_is_registered_without_touching_the_registry_list(lookup):
    assert list(registry.method_classes())[:3] == ["vispath", "mkgrag", "grasp"]
    assert registry.get_method("lookup") is Lookup
    assert registry.method_names("all")[-1] == "lookup"
    with pytest.raises(ValueError, match="already registered"):
        registry.register_method(type("Other", (Lookup,), {"name": "vispath"}))


def test_every_method_names_its_paper_and_describes_every_option(lookup):
    for cls in every_method(lookup):
        assert re.fullmatch(r"[a-z][a-z0-9_]*", cls.name), cls
        assert cls.title.strip(), cls.name
        rows = describe_options(cls)
        assert rows, cls.name
        for name, default, text in rows:
            assert text.strip(), f"{cls.name} option {name} has no description"
            # what the option does and what its default means; how it was tuned is docs/benchmarks.md's
            assert "\n" not in text and "→" not in text, f"{cls.name} option {name}: {text}"
        parse_options(cls, {})                      # the defaults validate
        with pytest.raises(InvalidInput, match="unknown"):
            parse_options(cls, {"no_such_option": "1"})   # extra="forbid"


def test_every_ablation_is_a_boolean_option_off_by_default(lookup):
    for cls in every_method(lookup):
        for a in cls.ablations:
            f = cls.Options.model_fields.get(a)
            assert f is not None, f"{cls.name} ablation {a} is not an option"
            assert f.annotation is bool and f.default is False, f"{cls.name} ablation {a}"
            assert getattr(parse_options(cls, {a: "true"}), a) is True


def test_every_cli_flag_aliases_an_option_and_parses(lookup):
    for cls in every_method(lookup):
        for flag, option in cls.cli_flags.items():
            assert flag.startswith("--") and option in cls.Options.model_fields, (cls.name, flag)
    rest, opts = split_method_flags(["What is Q90?", "--prefix=it is ", "--upper"], [Lookup])
    assert rest == ["What is Q90?"] and opts == {"lookup": {"prefix": "it is ", "upper": True}}
    with pytest.raises(InvalidInput, match="no such option: --m1"):
        split_method_flags(["q?", "--m1", "3"], [Lookup])


def test_a_method_without_solve_cannot_be_built():
    class NoSolve(BaseMethod):
        name = "nosolve"
        title = "none"
        Options = LookupOptions

    with pytest.raises(TypeError, match="solve"):
        NoSolve(context(DictGraph({})))


def test_answer_checks_the_question_and_its_evidence_points_at_graph_nodes(lookup):
    graph = DictGraph({"Q90": "Paris", "Q142": "France"})
    m = Lookup(context(graph), parse_options(Lookup, {"prefix": "the city "}))
    ans = m.answer(Query(question="What is Q90?"))
    assert ans.answer == "the city Paris" and ans.answer_id == "Q90"
    nodes = [n for ev in ans.evidence for n in ev.nodes]
    assert nodes and all(n.label == "Entity" and n.id in graph.entities for n in nodes)
    with pytest.raises(InvalidInput, match="empty"):
        m.answer(Query(question="  "))


def test_the_pipeline_builds_the_fourth_method_by_name(lookup):
    from kgqa.app.pipeline import Pipeline, methods_json

    graph = DictGraph({"Q90": "Paris"})
    models = SimpleNamespace(encoder=None, chat=None, vision=None, softprompt=None)
    p = Pipeline(None, "lookup", graph=graph, models=models, kg=SimpleNamespace(), write_trace=False,
                 ablations=["upper"])
    assert p.answer("What is Q90?").answer == "PARIS"
    assert [m["name"] for m in methods_json()][-1] == "lookup"


# --------------------------------------------------------------------------- the independence contract
def test_the_independence_contract_lists_every_method_package():
    """A method package left out of the contract could import another method without failing the build."""
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    independent = [c for c in cfg if c["type"] == "independence"]
    assert len(independent) == 1
    listed = set(independent[0]["modules"])
    packages = {f"kgqa.methods.{p.name}" for p in (REPO / "src" / "kgqa" / "methods").iterdir()
                if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == listed, f"not in the independence contract: {sorted(packages - listed)}"
    shipped = {c.__module__.rsplit(".", 1)[0] for c in registry.method_classes().values()}
    assert shipped <= listed
