"""GraSP's generated training questions: 1- to 3-hop walks of the loaded KG, verbalised in varied templates.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting", Section 4.4,
trains on question/answer pairs. Without a question set for a KG, they are made from the KG itself:

* topics: a seeded shuffle of the entities with outgoing facts, minus ``exclude_topics`` (an eval set's
  topics); passed over again (new walks, new phrasings) until ``n`` distinct questions or a pass adds none;
* the walk: 1 or 2 facts whose (head, relation) has exactly one tail (``UniqueOutFacts.walk``, the
  same walks as the path retriever's generator), extended with probability ``p3`` by a third such fact
  (``max_hops`` 3), so every answer is unique;
* the words (their own random generator, so the walks do not depend on them): each relation by its label
  or one of its aliases ("place of birth", "born in", "birthplace"); the chain nested outermost first
  ("the capital of the country of …") in one of several frames; the topic by its name, or half the time
  as "this place / person / …" (image questions do not name their topic).

*interpretation* (not in the paper): the paper trains on the benchmarks' QA pairs; generating them from
the KG lets the node-scoring head be trained for any loaded KG in minutes.
"""

from __future__ import annotations

import random

from kgqa.core.qa_examples import TrainingExample, walk_example, walk_source

FRAMES = ("What is {c}?", "Which entity is {c}?", "Tell me {c}.", "Name {c}.", "Who or what is {c}?",
          "Do you know {c}?")
ONE_HOP = ("Which {r} does {t} have?", "What {r} is associated with {t}?", "{T} has which {r}?")
THIS = ("this place", "this person", "this building", "this object", "this entity", "the one shown",
        "the entity in the image", "this thing", "the subject of this photo")


def chain_phrase(rels: list[str], topic: str) -> str:
    """"the r_k of the … of the r_1 of topic" (``rels`` in walk order, r_1 first)."""
    out = topic
    for r in rels:
        out = f"the {r} of {out}"
    return out


def verbalise(rels: list[str], topic: str, words: random.Random) -> str:
    """One question for a walk whose relations (as phrased) are ``rels`` from ``topic``."""
    if len(rels) == 1 and words.random() < 0.3:
        q = words.choice(ONE_HOP).format(r=rels[0], t=topic, T=topic)
    else:
        q = words.choice(FRAMES).format(c=chain_phrase(rels, topic))
    return q[0].upper() + q[1:]


def generate_questions(graph, kg, n: int, seed: int, exclude_topics: set[str], *, max_hops: int = 3,
                       p3: float = 0.5) -> list[TrainingExample]:
    """Up to ``n`` distinct questions verbalised from walks of the loaded KG (see the module text)."""
    src = walk_source(graph, kg, seed, exclude_topics)
    words, unique_out = src.words, src.unique_out

    out: list[TrainingExample] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(max(1, 4 * n // max(len(src.topics), 1) + 2) if src.topics else 0):
        before = len(out)
        for tid in src.topics:
            if len(out) >= n:
                break
            walk = unique_out.walk(tid, src.rng)
            if not walk:
                continue
            if max_hops >= 3 and len(walk) == 2 and words.random() < p3:
                on_walk = {tid, walk[0]["tail_id"], walk[1]["tail_id"]}
                third = [f for f in unique_out(walk[1]["tail_id"]) if f["tail_id"] not in on_walk]
                if third:
                    walk.append(words.choice(third))
            topic = walk[0]["head_name"] or tid
            t = words.choice(THIS) if words.random() < 0.5 else topic
            q = verbalise([src.phrase(f["relation_id"]) for f in walk], t, words)
            if (tid, q) in seen:
                continue
            seen.add((tid, q))
            out.append(walk_example(q, tid, walk))
        if len(out) >= n or len(out) == before:
            break
    return out


__all__ = ["generate_questions", "verbalise", "chain_phrase", "FRAMES", "THIS"]
