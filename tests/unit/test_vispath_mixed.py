"""VisPath's ``-o path_scorer=mixed``: the rules keep every step and the learned retriever's chain score,
weighed by ``learned_weight``, is added to their Eq. 5 relation scores and Eq. 8 σ.

The graph and encoder are the in-memory fakes of tests/fakes/vispath.py (bag of words: "born" does not
match "place of birth", so the rules alone stop at the architect); the retriever is a stand-in that
scores 1 for every chain holding a chosen relation and 0 otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.test_vispath_scoring import DEFAULTS, QUESTION, make


class ChainLiker:
    """A retriever that likes the chains containing ``relation`` (score 1) and no other (score 0)."""

    def __init__(self, relation: str):
        self.relation = relation
        self.calls = 0

    def score(self, question, chains):
        self.calls += 1
        return np.array([1.0 if self.relation in c else 0.0 for c in chains], dtype=np.float32)


def mixed(weight, relation="place of birth", **opts):
    vp, g, _ = make(**{**DEFAULTS, "path_scorer": "mixed", "learned_weight": weight, "path_checkpoint": "unused",
                       **opts})
    vp.learned._retriever, vp.learned._loaded = ChainLiker(relation), True
    return vp


def test_weight_zero_answers_as_the_rules_do_and_keeps_their_intent():
    rules, _, _ = make(**DEFAULTS)
    want = rules.run(QUESTION, entity_id="T")
    run = mixed("0").run(QUESTION, entity_id="T")
    assert run.answer == want.answer == "Gustave Eiffel"          # the rules miss "born" ↔ "place of birth"
    assert [h.intent for h in run.hops] == [h.intent for h in want.hops] == ["architect"] * 3
    assert [[p.verbalize() for p in h.retained] for h in run.hops] == \
           [[p.verbalize() for p in h.retained] for h in want.hops]
    assert run.learned and not any("learned path scorer reads Q" in f.message for f in run.fallbacks)


def test_the_learned_term_is_added_to_sigma_and_can_carry_the_path_one_hop_further():
    run = mixed("1").run(QUESTION, entity_id="T")
    hop2 = {p.relation_chain(): p.sigma for p in run.hops[1].retained}
    rules, _, _ = make(**DEFAULTS)
    base = {p.relation_chain(): p.sigma for p in rules.run(QUESTION, entity_id="T").hops[1].retained}
    assert hop2["architect → place of birth"] == pytest.approx(base["architect → place of birth"] + 1.0)
    assert hop2["architect → residence"] == pytest.approx(base["architect → residence"])
    assert run.answer == "Dijon"                                   # terminal selection by the mixed σ
    assert [h.intent for h in run.hops][0] == "architect"          # the rules' intent, not Q


def test_a_small_weight_does_not_overturn_the_rules():
    assert mixed("0.3").run(QUESTION, entity_id="T").answer == "Gustave Eiffel"


def test_eq5_relation_scores_are_the_rules_plus_the_weighted_learned_score():
    vp = mixed("0.5", edge_relation_weight=1.0)
    rules, _, _ = make(**{**DEFAULTS, "edge_relation_weight": 1.0})
    sk = rules.scorer.relation_sketch(QUESTION)
    q = rules.scorer.embed([sk.intent])[0]
    learned = {"T": {rid: (1.0 if rid == "P1435" else 0.0) for rid in vp.kg.relations()}}
    want = {e.relation_id: e.score for e in rules.scorer.score_edges(["T"], q, intent=sk.intent,
                                                                     relation_sketch=sk, M1=10)["T"]}
    got = {e.relation_id: e.score for e in vp.scorer.score_edges(["T"], q, intent=sk.intent, relation_sketch=sk,
                                                                 M1=10, learned=learned)["T"]}
    assert got["P84"] == pytest.approx(want["P84"])
    assert got["P1435"] == pytest.approx(want["P1435"] + 0.5)


def test_mixed_with_an_unusable_checkpoint_is_the_rules_with_one_fallback(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"junk")
    vp, _, _ = make(**{**DEFAULTS, "path_scorer": "mixed", "learned_weight": "1", "path_checkpoint": str(bad)})
    run = vp.run(QUESTION, entity_id="T")
    assert run.answer == "Gustave Eiffel" and not run.learned
    fb = [f for f in run.fallbacks if f.code == "checkpoint"]
    assert len(fb) == 1 and str(bad) in fb[0].message and "the rules take over" in fb[0].message


def test_learned_weight_is_checked():
    from kgqa.core.errors import InvalidInput
    from kgqa.core.method import parse_options
    from kgqa.methods.vispath.algorithm import VisPath

    with pytest.raises(InvalidInput) as e:
        parse_options(VisPath, {"learned_weight": "-1"})
    assert "learned_weight" in str(e.value)
    assert parse_options(VisPath, {"path_scorer": "mixed"}).path_scorer == "mixed"


def test_learned_alone_reads_q_and_ranks_by_the_retriever_only():
    """path_scorer=learned (for contrast): q_i = Q, σ is the retriever's score alone, terminal selection by it."""
    vp, _, _ = make(**{**DEFAULTS, "path_scorer": "learned", "path_checkpoint": "unused"})
    vp.learned._retriever, vp.learned._loaded = ChainLiker("place of birth"), True
    run = vp.run(QUESTION, entity_id="T")
    assert run.hops[0].intent == QUESTION and run.learned
    assert any("learned path scorer reads Q" in f.message for f in run.fallbacks)
    assert {p.relation_chain(): p.sigma for p in run.hops[1].retained}["architect → place of birth"] == 1.0
    assert run.answer == "Dijon"
