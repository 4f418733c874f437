"""Walks weighted toward the relations and the entities people ask about (``kgqa train paths``' default).

A large graph is mostly facts nobody asks about: 50,000 distractors around a KG of a few hundred entities give
walks that start at a distractor 98 times in 100, and a reader trained on them learns the distractors'
relations and forgets the asked ones (issue 60: the buried natural sets fell from 54 / 57 to 37 / 45 % EM).
So the walks are drawn from two priors, both read from data:

* **relations**: each relation weighs its share among the gold chains of the reader training starts from
  (its checkpoint's ``relation_counts``; a reader saved before those were kept: the relations it was trained
  on, evenly); a relation that reader never trained on weighs ``UNSEEN`` of the mean, so a graph's new
  relations still get walks. Without a start reader every relation weighs 1.
* **topics**: an entity weighs how asked its outgoing relations are (their mean weight) times ``(1 + in-degree)
  ** HUB``: questions are about entities that many facts point at (a city, a country, a painter), and on a
  Wikidata-like graph in-degree is heavy-tailed, so the hubs people ask about stand out of the crowd.

``kgqa.core.walk_questions.generate_walk_questions(weights=...)`` draws the topics in proportion to their weight
(without replacement) and each step by its relation's weight.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from kgqa.core.walk_questions import WalkWeights

#: a relation the start reader never trained on weighs this share of the mean weight of those it did
UNSEEN = 0.05
#: a topic's weight grows with (1 + its in-degree) to this power (1: in proportion, as preferential attachment)
HUB = 1.0
TOPIC_LIMIT = 200_000           # as many topics as the walk generator reads


def relation_counts(chains: Iterable[tuple[str, ...]], names: dict[str, str]) -> dict[str, int]:
    """Relation name → how often it occurs in ``chains`` (relation ids): what a checkpoint keeps as
    ``relation_counts`` for the next training that starts from it."""
    return dict(Counter(names.get(r, r) for c in chains for r in c).most_common())


def relation_prior(meta: dict | None, names: dict[str, str]) -> dict[str, float]:
    """Relation id → weight in (0, 1] (see the module text); ``meta``: the start reader's checkpoint meta, or None;
    ``names``: the loaded KG's relation ids → names."""
    counts = (meta or {}).get("relation_counts") or {n: 1 for n in (meta or {}).get("relations") or []}
    if not counts:
        return {rid: 1.0 for rid in names}
    folded: dict[str, float] = {}
    for n, c in counts.items():
        folded[n.casefold()] = folded.get(n.casefold(), 0.0) + float(c)
    seen = {rid: folded[n.casefold()] for rid, n in names.items() if n.casefold() in folded}
    if not seen:
        return {rid: 1.0 for rid in names}
    mean = sum(seen.values()) / len(seen)
    raw = {rid: seen.get(rid, UNSEEN * mean) for rid in names}
    top = max(raw.values())
    return {rid: w / top for rid, w in raw.items()}


def topic_weight(relation_ids: list[str], in_degree: int, prior: dict[str, float]) -> float:
    """One topic's weight: the mean prior of the relations it leaves by, times (1 + in-degree) ** HUB."""
    if not relation_ids:
        return 0.0
    ask = sum(prior.get(r, UNSEEN) for r in relation_ids) / len(relation_ids)
    return ask * (1.0 + max(0, int(in_degree))) ** HUB


def walk_weights(graph, kg, meta: dict | None) -> WalkWeights:
    """The weights of the walks a training starting from the reader of ``meta`` (None: none) draws on the loaded
    KG (``graph``, ``kg``)."""
    names = {rid: name for rid, (name, _) in kg.relations().items()}
    prior = relation_prior(meta, names)
    topics = {r["id"]: topic_weight(r["relation_ids"], r["in_degree"], prior)
              for r in graph.read("paths_topic_profiles", relation_ids=list(names), limit=TOPIC_LIMIT)}
    return WalkWeights(topics, prior, default=UNSEEN)


__all__ = ["walk_weights", "relation_prior", "relation_counts", "topic_weight", "UNSEEN", "HUB"]
