"""The distractor generators of the yardstick bench keep every gold answer unique and reachable.

Both generators (bench/scale_distractors.py, bench/distractors_wikilike.py) run on a tiny Wikidata5M-
format KG with local relation ids, as more-dev's; the checks they ship must hold on their output and
must catch a distractor fact that would add a second answer.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from bench import distractors_wikilike as wl
from bench import scale_distractors as sd

ROOT = Path(__file__).resolve().parents[2]

ENTITIES = {"Q1": "Pont Neuf", "Q2": "France", "Q3": "Paris", "Q4": "euro", "Q5": "Europe",
            "Q6": "Tower Bridge", "Q7": "United Kingdom", "Q8": "London", "Q9": "pound sterling"}
RELATIONS = {"P9001": "country", "P9002": "capital", "P9003": "currency", "P9004": "continent"}
FACTS = [("Q1", "P9001", "Q2"), ("Q2", "P9002", "Q3"), ("Q2", "P9003", "Q4"), ("Q2", "P9004", "Q5"),
         ("Q6", "P9001", "Q7"), ("Q7", "P9002", "Q8"), ("Q7", "P9003", "Q9"), ("Q7", "P9004", "Q5")]
QUESTIONS = [
    {"id": "a", "question": "What currency is used in the country where this bridge is?", "answer": "euro",
     "aliases": ["EUR"], "path": [["Q1", "P9001", "Q2"], ["Q2", "P9003", "Q4"]]},
    {"id": "b", "question": "What is the capital of the country of this bridge?", "answer": "London",
     "aliases": [], "path": [["Q6", "P9001", "Q7"], ["Q7", "P9002", "Q8"]]},
    {"id": "c", "question": "On which continent is the country of this bridge?", "answer": "Europe",
     "aliases": [], "path": [["Q6", "P9001", "Q7"], ["Q7", "P9004", "Q5"]]},
]


@pytest.fixture()
def kg(tmp_path) -> Path:
    d = tmp_path / "kg"
    d.mkdir()
    (d / "wikidata5m_entity.txt").write_text("".join(f"{k}\t{v}\n" for k, v in ENTITIES.items()), encoding="utf-8")
    (d / "wikidata5m_relation.txt").write_text("".join(f"{k}\t{v}\n" for k, v in RELATIONS.items()),
                                               encoding="utf-8")
    (d / "wikidata5m_transductive_train.txt").write_text("".join("\t".join(f) + "\n" for f in FACTS),
                                                         encoding="utf-8")
    for split in ("valid", "test"):
        (d / f"wikidata5m_transductive_{split}.txt").write_text("", encoding="utf-8")
    return d


def test_wikilike_buries_the_kg_with_incoming_edges_of_the_asked_relations(kg):
    g = wl.generate(kg, QUESTIONS, n_entities=3000, max_in=400, max_out=200, seed=3)
    figures = wl.check(g, QUESTIONS)                      # honest: asserted inside
    assert figures["gold_chains_checked"] == 3
    kg_ids = set(ENTITIES)
    incoming = Counter((r, t) for h, r, t in g["facts"] if t in kg_ids and h not in kg_ids)
    # "places whose country is France": many distractors point at the KG's countries through `country`
    assert incoming[("P9001", "Q2")] >= 20 and incoming[("P9001", "Q7")] >= 20
    # heavy-tailed: the most connected distractor has far more facts than the median one
    outs = Counter(h for h, _, _ in g["facts"] if h not in kg_ids)
    degrees = sorted(outs.values())
    assert degrees[-1] >= 20 * degrees[len(degrees) // 2]
    # distractors of the asked types: the currency kind is described as a currency
    currency_like = [d for d in g["descriptions"] if d.startswith("currency ")]
    assert len(currency_like) >= 30
    # out-edges from KG entities only through relations they lack in the KG
    assert any(h in kg_ids for h, _, _ in g["facts"])


def test_wikilike_check_catches_a_second_answer_and_a_gold_name(kg):
    g = wl.generate(kg, QUESTIONS, n_entities=500, max_in=50, max_out=20, seed=4)
    bad = dict(g, facts=g["facts"] + [("Q2", "P9003", g["ids"][0])])        # France gets a 2nd currency
    with pytest.raises(AssertionError, match="relation it has"):
        wl.check(bad, QUESTIONS)
    bad = dict(g, names=["EUR"] + g["names"][1:])                           # a distractor named as an alias
    with pytest.raises(AssertionError, match="named 'EUR'"):
        wl.check(bad, QUESTIONS)


def test_scale_generator_on_local_relation_ids_uses_the_kgs_own_relations(kg, tmp_path):
    g = sd.generate_for_kg(kg, ROOT / "data" / "demo", tmp_path / "real", n_entities=2000, n_facts=6000,
                           max_out=300, seed=5)
    sd.check_honest(g["demo"], g["facts"])
    assert sd.gold_chains_unique(g["demo"], g["facts"], QUESTIONS) == 3
    used = {r for _, r, _ in g["facts"]}
    assert "P9001" in used and "P17" not in used          # `country` facts use the KG's own id, renamed back
    assert g["relations"]["P9001"] == "country" and "P17" not in g["relations"]
