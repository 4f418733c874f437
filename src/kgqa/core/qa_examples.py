"""Question/answer training examples: read from a file, or generated from the loaded KG.

Shared by the trainers (GraSP's ``kgqa train grasp``, the relation-path retriever's ``kgqa train paths``):
the file format is ``kgqa eval``'s, and generated questions verbalise short walks of the graph with its
relation labels (and, on request, their aliases) in templates.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from kgqa.core.errors import InvalidInput
from kgqa.core.ids import is_qid


@dataclass
class TrainingExample:
    question: str
    topic_id: str
    answer: str
    answer_id: str | None = None
    source: str = ""          # "file.jsonl:12" or "generated: Q142 -P36-> Q90"
    aliases: tuple[str, ...] = ()     # other names of the answer (the file's ``aliases``)


def json_rows(path: Path, what: str = "file"):
    """(line number, object) of each non-blank line of a JSON-lines file; a missing file or a bad line
    stops with one ``InvalidInput`` line (``file:line: why``)."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInput(f"{path}: no such {what}")
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InvalidInput(f"{path}:{n}: not JSON ({e.msg})") from None
        if not isinstance(row, dict):
            raise InvalidInput(f"{path}:{n}: expected a JSON object")
        yield n, row


def read_examples(path: Path) -> list[TrainingExample]:
    """Question/answer pairs from a JSONL file in the ``kgqa eval`` format (``question``, ``answer``,
    ``topic.id`` or ``entity_id``, optional ``answer_id``, else the last entity of ``path``); a bad line
    stops with ``file:line: why``."""
    path = Path(path)
    out: list[TrainingExample] = []
    for n, row in json_rows(path, "training file"):
        topic = row.get("entity_id") or (row.get("topic") or {}).get("id")
        q, a = row.get("question"), row.get("answer")
        for field_name, v in (("question", q), ("answer", a), ("topic.id", topic)):
            if not isinstance(v, str) or not v.strip():
                raise InvalidInput(f"{path}:{n}: field {field_name} is missing or empty")
        if not is_qid(topic):
            raise InvalidInput(f"{path}:{n}: topic.id {topic!r} is not a Wikidata entity id")
        al = row.get("aliases")
        al = tuple(x for x in al if isinstance(x, str)) if isinstance(al, list) else ()
        out.append(TrainingExample(q.strip(), topic, a.strip(), row.get("answer_id") or _path_end(row.get("path")),
                                   f"{path.name}:{n}", al))
    if not out:
        raise InvalidInput(f"{path}: no training examples")
    return out


def _path_end(path) -> str | None:
    """The gold path's last entity (the answer of a question file without ``answer_id``, e.g. MORE's)."""
    if isinstance(path, list) and path and isinstance(path[-1], (list, tuple)) and len(path[-1]) == 3:
        end = path[-1][2]
        return end if isinstance(end, str) and is_qid(end) else None
    return None


def topics_of(path: Path) -> set[str]:
    """The topic entity ids of a question file (to keep generated training topics disjoint from it)."""
    return {e.topic_id for e in read_examples(path)}


#: templates of ``generate_examples(aliases=True)``: {r} the relation phrase (outermost first), {t} the topic
ONE_HOP = ("What is the {r} of {t}?", "Which {r} does {t} have?", "What {r} is associated with {t}?",
           "Tell me the {r} of {t}.")
TWO_HOP = ("What is the {r2} of the {r1} of {t}?", "Which {r2} does the {r1} of {t} have?",
           "What is the {r2} of the {r1} that {t} has?")
THIS = ("this", "the one shown", "the entity in the image", "this place", "this person", "this object")


class UniqueOutFacts:
    """An entity's outgoing facts whose (head, relation) has exactly one tail, read once per entity.

    A walk along such facts has one answer, so a question verbalised from it has a unique gold entity."""

    def __init__(self, graph, relation_ids: list[str]):
        self.graph = graph
        self.relation_ids = relation_ids
        self._cache: dict[str, list[dict]] = {}

    def __call__(self, eid: str) -> list[dict]:
        if eid not in self._cache:
            rows = self.graph.read("grasp_training_facts", ids=[eid], relation_ids=self.relation_ids, per_entity=200)
            by_rel: dict[str, list[dict]] = {}
            for r in rows:
                by_rel.setdefault(r["relation_id"], []).append(r)
            self._cache[eid] = [v[0] for v in by_rel.values() if len(v) == 1 and v[0]["tail_id"] != eid]
        return self._cache[eid]

    def walk(self, topic: str, rng) -> list[dict]:
        """A random walk of 1 or 2 single-tail facts from ``topic`` (2 with probability 1/2 when the first
        fact's tail has one that does not lead back); [] when ``topic`` has none. Both question generators
        draw their paths here, in this order of ``rng`` calls."""
        first = self(topic)
        if not first:
            return []
        f1 = rng.choice(first)
        walk = [f1]
        if rng.random() < 0.5:
            second = [f for f in self(f1["tail_id"]) if f["tail_id"] != topic]
            if second:
                walk.append(rng.choice(second))
        return walk


@dataclass
class WalkSource:
    """What a question generator draws from (``walk_source``): the walks' generator ``rng`` and the words'
    own ``words`` (so the walks do not depend on the phrasing), the relation labels and aliases, the topics
    (seeded shuffle) and their single-tail facts."""

    rng: random.Random
    words: random.Random
    names: dict[str, str]
    alias_of: dict[str, list[str]]
    topics: list[str]
    unique_out: UniqueOutFacts

    def phrase(self, rid: str) -> str:
        """The relation by its label or one of its aliases (longer than 2 characters), drawn from ``words``."""
        forms = [self.names.get(rid, rid)] + [a for a in self.alias_of.get(rid, []) if a and len(a) > 2]
        return self.words.choice(forms)


def walk_source(graph, kg, seed: int, exclude_topics: set[str], *, aliases: bool = True) -> WalkSource:
    """The topics (entities with outgoing facts, minus ``exclude_topics``, shuffled by ``seed``), the
    relation catalogue (and its aliases when ``aliases``) and the single-tail facts of the loaded KG."""
    rng = random.Random(seed)
    words = random.Random(seed + 7919)
    relations = kg.relations()
    rel_ids = list(relations)
    names = {rid: name for rid, (name, _) in relations.items()}
    alias_of = kg.relation_aliases() if aliases else {}
    ids = [i for i in kg.walk_topics() if i not in exclude_topics]
    rng.shuffle(ids)
    return WalkSource(rng, words, names, alias_of, ids, UniqueOutFacts(graph, rel_ids))


def walk_example(question: str, topic_id: str, walk: list[dict]) -> TrainingExample:
    """The example of a question verbalised from ``walk``: its answer is the walk's last entity."""
    last = walk[-1]
    src = "generated: " + " ".join([topic_id] + [f"-{f['relation_id']}-> {f['tail_id']}" for f in walk])
    return TrainingExample(question, topic_id, last["tail_name"] or last["tail_id"], last["tail_id"], src)


def generate_examples(graph, kg, n: int, seed: int, exclude_topics: set[str], *,
                      aliases: bool = False) -> list[TrainingExample]:
    """Questions verbalised from paths of the loaded KG (``graph``: kgqa.core.graph.Graph; ``kg``:
    kgqa.core.kg.KG, for the relation catalogue).

    How they are made: topic entities are drawn (seeded shuffle of the entities with outgoing
    facts, minus ``exclude_topics``, e.g. the eval set's topics); from each, a random walk of 1 or 2
    outgoing facts whose (head, relation) has exactly one tail, so the answer is unique; the path is
    verbalised with the relation names: "What is the {r1} of {topic}?" or "What is the {r2} of the
    {r1} of {topic}?"; the answer is the walk's last entity.

    ``aliases``: each relation is named by its label or one of its aliases, the template is drawn from a
    few phrasings (``ONE_HOP``, ``TWO_HOP``), and half the topics are referred to as "this …" (image
    questions do not name their topic). These draws use their own generator, so the walks (and the
    questions without ``aliases``) are the same for one seed either way.
    """
    src = walk_source(graph, kg, seed, exclude_topics, aliases=aliases)
    words, names, phrase = src.words, src.names, src.phrase

    out: list[TrainingExample] = []
    for tid in src.topics:
        if len(out) >= n:
            break
        walk = src.unique_out.walk(tid, src.rng)
        if not walk:
            continue
        f1 = walk[0]
        topic = f1["head_name"] or tid
        if aliases:
            t = words.choice(THIS) if words.random() < 0.5 else topic
            if len(walk) == 1:
                q = words.choice(ONE_HOP).format(r=phrase(f1["relation_id"]), t=t)
            else:
                q = words.choice(TWO_HOP).format(r1=phrase(f1["relation_id"]), r2=phrase(walk[1]["relation_id"]),
                                                 t=t)
            q = q[0].upper() + q[1:]
        elif len(walk) == 1:
            q = f"What is the {names.get(f1['relation_id'], f1['relation_id'])} of {topic}?"
        else:
            q = (f"What is the {names.get(walk[1]['relation_id'], walk[1]['relation_id'])} of the "
                 f"{names.get(f1['relation_id'], f1['relation_id'])} of {topic}?")
        out.append(walk_example(q, tid, walk))
    return out
