"""How far the question walks, read by GraSP's ranking without a reader or a head for the KG (issue 60, item 5):
the question's depth (``kgqa.core.sketch``: one fact per relation its phrases name) keeps the end of the whole
chain it names ahead of the prefix one hop short, which the relation names' vectors alone read better. The graph
is the fake of the VisPath and GraSP unit tests (a bag-of-words encoder)."""

from __future__ import annotations

from types import SimpleNamespace

from kgqa.methods.grasp.nodes import chain_text_ranking, depth_gap, question_depth
from kgqa.methods.grasp.options import GraSPOptions
from kgqa.methods.grasp.subgraph import Fact, Subgraph
from tests.unit.test_grasp_ends import fake_kg

# Freedonia's flag shows an eagle. The relation Wikidata calls "main subject" is named "symbol" by an alias only,
# so the two-fact chain's vector (flag + main subject shown) reads the question worse than its prefix (flag)
NAMES = {"T": "Freedonia", "F": "flag of Freedonia", "E": "bald eagle", "C": "Freedonian mark"}
RELATIONS = {"P163": "flag", "P180": "main subject shown", "P38": "currency"}
FACTS = [("T", "P163", "F"), ("F", "P180", "E"), ("T", "P38", "C")]
QUESTION = "Which animal is the symbol on the flag of this country?"


def flag_graph():
    kg = fake_kg(NAMES, RELATIONS, FACTS)
    kg.graph.aliases = {"P180": ["symbol", "depicts"]}
    sub = Subgraph("T", dict(NAMES), [Fact("T", "P163", "F", 1, 0.0), Fact("F", "P180", "E", 2, 0.0),
                                      Fact("T", "P38", "C", 1, 0.0)])
    return kg, sub


def ask(question: str):
    return SimpleNamespace(question=question, has_image=True, depth=None)


def test_the_question_depth_counts_the_relations_its_phrases_name():
    kg, _ = flag_graph()
    method = SimpleNamespace(kg=kg, _aliases=None)
    assert question_depth(method, ask(QUESTION))[0] == 2          # flag, then its symbol (by the alias)
    assert question_depth(method, ask("What is the flag of this country?")) == (1, 1)
    assert question_depth(method, ask("Who wrote this?")) is None  # no phrase names a relation
    assert [depth_gap(n, (2, 2)) for n in (1, 2, 3)] == [1, 0, 1] and depth_gap(1, None) == 0


def test_the_fallback_answers_the_end_of_the_chain_as_long_as_the_question_walks():
    """Without the depth the flag (one fact, the prefix) reads best; with GraSP's default depth weight the eagle at
    the end of the two facts the question names is the answer, and its evidence is that chain."""
    kg, sub = flag_graph()
    q = kg.embed([QUESTION])[0]
    assert chain_text_ranking(sub, q, kg, {"T"}, ends_split=True)[0][0] == "F"      # one hop short
    depth = question_depth(SimpleNamespace(kg=kg, _aliases=None), ask(QUESTION))
    walks: dict = {}
    ranked = chain_text_ranking(sub, q, kg, {"T"}, True, walks, depth, GraSPOptions().depth_weight)
    assert ranked[0][0] == "E", ranked
    assert [f.key for f in walks["E"]] == ["T|P163|F", "F|P180|E"]


def test_a_one_fact_question_still_answers_the_one_fact_end():
    """"What is the flag of this country?" walks one fact: the flag, not what it depicts."""
    kg, sub = flag_graph()
    question = "What is the flag of this country?"
    depth = question_depth(SimpleNamespace(kg=kg, _aliases=None), ask(question))
    ranked = chain_text_ranking(sub, kg.embed([question])[0], kg, {"T"}, True, None, depth,
                                GraSPOptions().depth_weight)
    assert ranked[0][0] == "F", ranked
