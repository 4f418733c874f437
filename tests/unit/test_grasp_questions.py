"""GraSP's generated training questions (1- to 3-hop walks in varied templates), the QA-pair reader's answer
id from a gold path, and a nodes head's extraction settings taken from its checkpoint.

The graph is a stand-in answering the two training queries over a chain A -r1-> B -r2-> C -r3-> D (every
fact single-tailed) plus a two-tailed relation that a generated question must never ask about.
"""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest

from kgqa.core.kg import KG
from kgqa.core.qa_examples import read_examples
from kgqa.methods.grasp.options import GraSPOptions
from kgqa.methods.grasp.questions import generate_questions, verbalise

NAMES = {"Q1": "Alpha", "Q2": "Beta", "Q3": "Gamma", "Q4": "Delta", "Q5": "Eps", "Q6": "Zeta"}
RELS = {"P1": ("capital", ["seat of government"]), "P2": ("river", []), "P3": ("mouth", ["outflow"]),
        "P4": ("neighbour", [])}
FACTS = [("Q1", "P1", "Q2"), ("Q2", "P2", "Q3"), ("Q3", "P3", "Q4"), ("Q1", "P4", "Q5"), ("Q1", "P4", "Q6")]


class ChainGraph:
    def read(self, name, params=None, **p):
        if name == "kg_relation_catalogue":
            return [{"id": r, "name": n, "embedding": None, "aliases": a} for r, (n, a) in RELS.items()]
        if name == "grasp_training_topics":
            return [{"id": i} for i in sorted({h for h, _, _ in FACTS})]
        if name == "grasp_training_facts":
            return [{"head_id": h, "head_name": NAMES[h], "relation_id": r, "tail_id": t, "tail_name": NAMES[t]}
                    for h, r, t in FACTS if h in p["ids"] and r in p["relation_ids"]]
        raise AssertionError(f"unexpected query {name}")


def kg():
    return KG(ChainGraph(), SimpleNamespace(dim=384, name="none"))


def test_generated_questions_reach_three_hops_with_unique_answers_and_varied_words():
    ex = generate_questions(ChainGraph(), kg(), 400, seed=0, exclude_topics=set(), max_hops=3, p3=1.0)
    by_hops = {}
    for e in ex:
        hops = e.source.count("->")
        by_hops.setdefault(hops, []).append(e)
    assert set(by_hops) == {1, 2, 3}
    for e in by_hops[3]:                      # the only 3-hop walk: Alpha -capital-> Beta -river-> Gamma -mouth-> Delta
        assert e.topic_id == "Q1" and e.answer_id == "Q4" and e.answer == "Delta"
        assert any(w in e.question for w in ("the mouth of the river of the capital of",
                                             "the outflow of the river of the capital of",
                                             "the mouth of the river of the seat of government of",
                                             "the outflow of the river of the seat of government of"))
    assert all("P4" not in e.source for e in ex)           # two tails: no unique answer, never asked
    assert any("seat of government" in e.question for e in ex) and any("Alpha" not in e.question
                                                                       for e in by_hops[3])   # aliases, "this …"
    assert len({e.question for e in ex}) == len(ex)          # distinct questions


def test_generation_is_seeded_excludes_topics_and_respects_max_hops():
    a = generate_questions(ChainGraph(), kg(), 50, seed=3, exclude_topics=set(), max_hops=3)
    b = generate_questions(ChainGraph(), kg(), 50, seed=3, exclude_topics=set(), max_hops=3)
    assert [(e.question, e.answer_id) for e in a] == [(e.question, e.answer_id) for e in b]
    two = generate_questions(ChainGraph(), kg(), 200, seed=0, exclude_topics={"Q1"}, max_hops=2, p3=1.0)
    assert two and all(e.topic_id != "Q1" and e.source.count("->") <= 2 for e in two)


def test_verbalise_nests_the_chain_outermost_first():
    words = random.Random(0)
    qs = {verbalise(["capital", "river"], "this place", words) for _ in range(40)}
    assert all("the river of the capital of this place" in q for q in qs) and all(q[0].isupper() for q in qs)


def test_a_qa_pair_without_answer_id_takes_its_gold_paths_last_entity(tmp_path):
    f = tmp_path / "more.jsonl"
    rows = [{"question": "What is the river of the capital of this place?", "answer": "gamma (river)",
             "topic": {"id": "Q1"}, "path": [["Q1", "P1", "Q2"], ["Q2", "P2", "Q3"]]},
            {"question": "q?", "answer": "a", "topic": {"id": "Q1"}, "answer_id": "Q9", "path": [["Q1", "P1", "Q2"]]},
            {"question": "q?", "answer": "a", "topic": {"id": "Q1"}}]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [e.answer_id for e in read_examples(f)] == ["Q3", "Q9", None]


def test_a_nodes_head_scores_the_subgraphs_it_was_trained_on_unless_told_otherwise(tmp_path):
    torch = pytest.importorskip("torch")
    from kgqa.gnn import checkpoint as ckpt
    from kgqa.gnn.encoder import GraphNodeScorer
    from kgqa.methods.grasp.nodes import trained_extraction

    torch.manual_seed(0)
    path = ckpt.save(tmp_path / "n.safetensors", GraphNodeScorer(384, 384, hidden_channels=8, heads=2,
                                                                 projector_hidden=8, num_layers=3),
                     variant="nodes", meta={"extraction": {"k1": 6, "k2": 5, "hops": 3, "cap": 90, "scan_cap": 700}})
    o = trained_extraction(GraSPOptions(head="nodes"), path)
    assert (o.k1, o.k2, o.hops, o.cap, o.scan_cap) == (6, 5, 3, 90, 700)
    o = trained_extraction(GraSPOptions(head="nodes", hops=2, cap=60), path)     # -o hops=2 -o cap=60 win
    assert (o.k1, o.hops, o.cap) == (6, 2, 60)
