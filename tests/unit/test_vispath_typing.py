"""VisPath's answer typing reads types from the graph, or not at all.

Terminal selection ranks endpoint entities; typing may lift the ones whose types the question names.
The evidence is the graph's own: ``instance of`` and its ``subclass of`` chain where the KG has them,
description words where an entity has one. These tests pin the cases a user relies on: class chains
type an entity with no description; an entity matching a *different* type noun of the question gains
nothing; with no type evidence anywhere, the ranking is the one without typing.
"""

from __future__ import annotations

import pytest

from kgqa.core.kg import KG
from kgqa.core.result import Step
from kgqa.methods.vispath.options import VisPathOptions
from kgqa.methods.vispath.records import HopRecord, ReasoningPath, StartCandidate, VisPathRun
from kgqa.methods.vispath.scoring import Scorer
from tests.fakes.vispath import BagOfWordsEncoder, FakeGraph

# A structure in a country; the country has a currency and a capital. Classes in the graph:
# France instance of sovereign state, a subclass of country; euro instance of currency;
# Paris instance of capital city, a subclass of city.
ENTITIES = {"S": "Kamar Tower", "F": "France", "E": "euro", "P": "Paris", "L": "Lyon",
            "K1": "sovereign state", "K2": "country", "K3": "currency", "K4": "capital city", "K5": "city",
            "K6": "urban area"}
RELATIONS = {"P17": "country", "P38": "currency", "P36": "capital", "P131": "located in",
             "P31": "instance of", "P279": "subclass of"}
STRUCTURE = [("S", "P17", "F"), ("F", "P38", "E"), ("F", "P36", "P"), ("S", "P131", "L")]
CLASSES = [("F", "P31", "K1"), ("K1", "P279", "K2"), ("E", "P31", "K3"), ("P", "P31", "K4"),
           ("K4", "P279", "K6"), ("K6", "P279", "K5")]


def scorer(facts, relations=RELATIONS, descriptions=None, **opts):
    """typing_weight=0 unless set: typed paths ranked first, before σ (what these tests pin)."""
    enc = BagOfWordsEncoder()
    g = FakeGraph(ENTITIES, relations, facts, encoder=enc)
    g.descriptions = dict(descriptions or {})
    return Scorer(KG(g, enc), g, VisPathOptions(**{"typing_weight": 0, **opts})), g


def path(*triples, sigma=0.5):
    edges = tuple(Step(h, ENTITIES[h], r, RELATIONS.get(r, r), t, ENTITIES[t], k, score=0.5)
                  for k, (h, r, t) in enumerate(triples, 1))
    return ReasoningPath("S", ENTITIES["S"], edges, sigma=sigma)


TO_COUNTRY = path(("S", "P17", "F"), sigma=0.9)          # one hop short, best σ
TO_CITY = path(("S", "P131", "L"), sigma=0.8)
TO_CURRENCY = path(("S", "P17", "F"), ("F", "P38", "E"), sigma=0.6)
TO_CAPITAL = path(("S", "P17", "F"), ("F", "P36", "P"), sigma=0.4)


def ranked(sc, question, paths):
    """Terminal selection's endpoint order (no D̂ predicted, no sketch range: typing, then σ)."""
    run = VisPathRun(question=question, start=StartCandidate("S", ENTITIES["S"]))
    run.hops = [HopRecord(hop=1, intent="", retained=[p for p in paths if len(p.edges) == 1]),
                HopRecord(hop=2, intent="", retained=[p for p in paths if len(p.edges) == 2])]
    return [p.end_id for p in sc.rank_endpoints(question, False, run)]


ALL = [TO_COUNTRY, TO_CITY, TO_CURRENCY, TO_CAPITAL]


def test_instance_of_and_its_subclass_chain_type_an_entity_without_a_description():
    sc, _ = scorer(STRUCTURE + CLASSES)
    # Paris: instance of capital city → urban area → city (two subclass steps); no description anywhere
    assert ranked(sc, "In which city is the capital of the country of the Kamar Tower?", ALL)[0] == "P"
    assert ranked(sc, "Which currency is used in the country where the Kamar Tower stands?", ALL)[0] == "E"
    assert "city" in sc.kg.entity_types(["P"])["P"] and "country" in sc.kg.entity_types(["F"])["F"]


def test_a_different_type_noun_of_the_question_promotes_nothing():
    # "country" types an entity on the way, not the answer: the country must not outrank the currency,
    # even when only the country has type evidence (the currency has none) and the country's σ is best
    sc, _ = scorer(STRUCTURE + [("F", "P31", "K1"), ("K1", "P279", "K2")])
    q = "What is the currency of the country where the Kamar Tower stands?"
    assert ranked(sc, q, ALL)[0] == "E"
    typing = sc.path_typing(q, False, ALL)
    assert typing[id(TO_COUNTRY)] == 0.0                  # the endpoint's match of "country" earns nothing
    assert typing[id(TO_CURRENCY)] == typing[id(TO_CAPITAL)] == 1.0   # it passed through the country
    # the same with descriptions as the only evidence
    sc, _ = scorer(STRUCTURE, descriptions={"F": "country in Western Europe"})
    assert ranked(sc, q, ALL)[0] == "E"


def test_description_words_type_where_they_exist_and_the_kg_has_no_classes():
    no_classes = {k: v for k, v in RELATIONS.items() if k not in ("P31", "P279")}
    q = "In which city is the capital of the country of the Kamar Tower?"
    sc, _ = scorer(STRUCTURE, relations=no_classes,
                   descriptions={"P": "Paris, capital of France", "L": "Lyon, commune in France"})
    # Paris's "capital" implies city (a commune is a town): Paris first, the rest in σ order
    assert ranked(sc, q, ALL) == ["P", "F", "L", "E"]
    sc, _ = scorer(STRUCTURE, relations=no_classes,
                   descriptions={"P": "Paris, capital of France", "L": "Lyon, city in France"})
    assert ranked(sc, q, ALL) == ["L", "P", "F", "E"]     # both typed city: σ decides between them


@pytest.mark.parametrize("question", [
    "What is the currency of the country where the Kamar Tower stands?",
    "In which city is the capital of the country of the Kamar Tower?",
    "Which currency is used in the country where the Kamar Tower stands?",
])
def test_no_type_evidence_leaves_the_ranking_unchanged(question):
    # the more-dev case: no descriptions, no instance of
    plain = [p.end_id for p in sorted(ALL, key=lambda p: -p.sigma)]
    sc, _ = scorer(STRUCTURE)
    assert sc.path_typing(question, False, ALL) == {}
    assert ranked(sc, question, ALL) == plain
    # a KG that has the relations but no facts of them for these entities: the same
    sc, g = scorer(STRUCTURE + [("K4", "P279", "K5")])
    assert ranked(sc, question, ALL) == plain and "kg_entity_types" in g.queries


def test_the_questions_object_with_a_relative_clause_is_the_answers_type():
    from kgqa.core.question import type_nouns

    assert type_nouns("What is the currency that the country of the Kamar Tower uses?", False) == (["currency"], [])
    assert type_nouns("Who founded the company that builds the rocket shown in this photo?", True) == ([],
                                                                                                        ["company"])
    assert type_nouns("What is the currency of the country where the Kamar Tower stands?", False) == (
        [], ["country"])


def test_a_class_name_types_as_a_whole():
    from kgqa.core.question import type_words

    # a sovereign state is no "state" of "the state where …" unless the KG says so by subclass of
    assert "state" not in type_words(["sovereign state"], None)
    assert "sovereign state" in type_words(["sovereign state"], None)
    assert {"capital", "city"} <= type_words(["capital"], None)          # a single-word class implies as words do
    assert "state" in type_words([], "state of the United States")       # description words stay words
    assert type_words([], None) == set() and type_words([], "") == set()


def test_weighed_typing_decides_close_calls_and_yields_to_a_clear_chain_score_gap():
    # the default (typing_weight 0.05): typing adds w × its score to σ. Paris (typed city) at σ 0.4 does not
    # overtake the country (σ 0.9), but among paths a few hundredths apart the typed one comes first
    q = "In which city is the capital of the country of the Kamar Tower?"
    sc, _ = scorer(STRUCTURE + CLASSES, typing_weight=0.05)
    assert ranked(sc, q, ALL)[0] == "F"
    near = [path(("S", "P17", "F"), sigma=0.42), ReasoningPath("S", ENTITIES["S"], TO_CAPITAL.edges, sigma=0.4)]
    assert ranked(sc, q, near)[0] == "P"
    assert VisPathOptions().typing_weight == 0.05


def test_an_entity_without_type_evidence_earns_typing_unknown_of_a_match():
    # only the country is typed; the currency has no class and no description. typing_unknown=0 ranks the
    # untyped currency with the mismatches; 1 gives it a match's credit for the answer's type noun
    sc, _ = scorer(STRUCTURE + [("F", "P31", "K1"), ("K1", "P279", "K2")], typing_unknown=1)
    q = "Which currency is used in the country where the Kamar Tower stands?"
    typing = sc.path_typing(q, False, ALL)
    assert typing[id(TO_COUNTRY)] == 0.0                  # typed, and not a currency
    assert typing[id(TO_CURRENCY)] == 2.0                 # untyped end (credit 1) + passed through the country
    sc, _ = scorer(STRUCTURE + [("F", "P31", "K1"), ("K1", "P279", "K2")], typing_unknown=0)
    assert sc.path_typing(q, False, ALL)[id(TO_CURRENCY)] == 1.0
