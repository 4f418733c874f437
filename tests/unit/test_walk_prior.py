"""Walks weighted toward what people ask (kgqa.training.walk_prior, generate_walk_questions(weights=...)): on a
graph that is mostly distractors, the drawn walks start at the hubs and follow the relations the start reader
was trained on; uniform walks do not."""

from __future__ import annotations

from collections import Counter

from kgqa.core.walk_questions import WalkWeights, generate_walk_questions
from kgqa.training.walk_prior import UNSEEN, relation_counts, relation_prior, topic_weight, walk_weights

NAMES = {"P17": "country", "P36": "capital", "P9701": "said to be the same as"}
HUBS = [f"Q{i}" for i in range(5)]                  # the KG's entities: asked relations, many facts point at them
CROWD = [f"D{i}" for i in range(300)]               # distractors: a filler relation, one fact each points at them


def _facts():
    out = []
    for i, h in enumerate(HUBS):
        out.append((h, "P17", "Q100"))
        out.append((h, "P36", f"C{i}"))
        out.append((h, "P9701", f"X{i}"))
    for i, d in enumerate(CROWD):
        out.append((d, "P9701", CROWD[(i + 1) % len(CROWD)]))
    return out


class FakeGraph:
    """The few reads the walk generator and walk_weights make, over ``_facts()``."""

    def __init__(self):
        self.facts = _facts()
        self.indeg = Counter(t for _, _, t in self.facts)
        for h in HUBS:                               # the hubs: hundreds of facts point at them
            self.indeg[h] += 400

    def read(self, name, **kw):
        rel = set(kw.get("relation_ids") or ())
        if name == "grasp_training_topics":
            return [{"id": e} for e in sorted({h for h, r, _ in self.facts if r in rel})]
        if name == "grasp_training_facts":
            return [{"head_id": h, "head_name": h, "relation_id": r, "tail_id": t, "tail_name": t}
                    for e in kw["ids"] for h, r, t in self.facts if h == e and r in rel]
        if name == "paths_topic_profiles":
            heads = sorted({h for h, r, _ in self.facts if r in rel})
            return [{"id": h, "relation_ids": sorted({r for hh, r, _ in self.facts if hh == h and r in rel}),
                     "in_degree": self.indeg[h]} for h in heads]
        raise AssertionError(name)


class FakeKG:
    def relations(self):
        return {rid: (n, None) for rid, n in NAMES.items()}

    def relation_aliases(self):
        return {}

    def type_relations(self):
        return [], []

    def walk_topics(self):
        return [r["id"] for r in FakeGraph().read("grasp_training_topics", relation_ids=list(NAMES))]


def test_the_prior_is_the_start_readers_relation_shares_and_unseen_relations_weigh_little():
    p = relation_prior({"relation_counts": {"Country": 30, "capital": 10}}, NAMES)      # names case-folded
    assert p["P17"] == 1.0 and abs(p["P36"] - 1 / 3) < 1e-9
    assert abs(p["P9701"] - UNSEEN * (30 + 10) / 2 / 30) < 1e-9
    even = relation_prior({"relations": ["country", "capital"]}, NAMES)                 # a reader saved before counts
    assert even["P17"] == even["P36"] == 1.0 and even["P9701"] == UNSEEN
    assert set(relation_prior(None, NAMES).values()) == {1.0}                           # no start reader: uniform
    assert relation_counts([("P17",), ("P36", "P17")], NAMES) == {"country": 2, "capital": 1}


def test_a_topic_weighs_its_relations_askedness_times_its_in_degree():
    prior = {"P17": 1.0, "P9701": 0.05}
    assert topic_weight(["P17"], 99, prior) == 100.0
    assert topic_weight(["P17", "P9701"], 0, prior) == (1.0 + 0.05) / 2
    assert topic_weight([], 500, prior) == 0.0


def test_weighted_walks_start_at_the_hubs_and_follow_the_asked_relations():
    graph, kg = FakeGraph(), FakeKG()
    w = walk_weights(graph, kg, {"relation_counts": {"country": 20, "capital": 20}})
    hubs_w = hubs_u = asked_w = asked_u = 0
    for seed in range(10):                  # 10 questions a draw: 5 hubs among 305 topics
        weighted = generate_walk_questions(graph, kg, 10, seed, set(), max_hops=1, weights=w)
        uniform = generate_walk_questions(graph, kg, 10, seed, set(), max_hops=1)
        hubs_w += sum(g.example.topic_id in HUBS for g in weighted)
        hubs_u += sum(g.example.topic_id in HUBS for g in uniform)
        asked_w += sum(g.relations[0] != "P9701" for g in weighted)
        asked_u += sum(g.relations[0] != "P9701" for g in uniform)
    assert hubs_w >= 40 and hubs_u <= 10, (hubs_w, hubs_u)            # of 100 questions each
    assert asked_w >= 35 and asked_u <= 10, (asked_w, asked_u)
    # from a hub, a step takes an asked relation far more often than the filler it also has (1 in 3 uniformly)
    from_hubs = [g.relations[0] for s in range(10)
                 for g in generate_walk_questions(graph, kg, 5, s, set(), max_hops=1, weights=w)
                 if g.example.topic_id in HUBS]
    assert len(from_hubs) >= 40 and from_hubs.count("P9701") <= len(from_hubs) // 8, from_hubs


def test_the_weighted_order_is_seeded_and_keeps_every_topic():
    w = WalkWeights({"a": 100.0, "b": 1.0, "c": 0.0}, {})
    assert sorted(w.order(["a", "b", "c", "d"], 3)) == ["a", "b", "c", "d"]
    assert w.order(["a", "b", "c", "d"], 3) == w.order(["a", "b", "c", "d"], 3)
    assert w.order(["a", "b", "c", "d"], 3)[-1] == "c"                       # weight 0: last
    firsts = Counter(w.order(["a", "b"], s)[0] for s in range(200))
    assert firsts["a"] > 180
