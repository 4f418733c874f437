"""Reading questions from the loaded KG and its texts: training data for the span reader.

The idea of WikiReading (Hewlett et al., "WikiReading: A Novel Large-scale Language Understanding Task over
Wikipedia", ACL 2016): a fact (subject, relation, object) of the KG whose object is named in a text about
its subject is a reading question with a known answer span. Here the texts are what a loaded graph holds
about an entity: its description, and the chunks of loaded documents whose extracted entities are linked to
it (``SAME_AS``). The question is phrased from the relation's label or one of its aliases by the chain
reader's phraser (``core.walk_questions.Phraser``: noun and verb forms, fronted wh-words, the topic by name
or, half the time, as an image points at it: "the tower shown here"), so the reader sees the questions
mKG-RAG is asked, typed by the graph ("Which city …" where the object is a city).

Only objects named exactly (case as written, on word boundaries, not inside the subject's own name) make a
question; an object named twice is read at its first mention. These are training data, never a yardstick.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from kgqa.core.qa_examples import json_rows
from kgqa.core.walk_questions import Phraser, type_names


@dataclass
class ReadingQuestion:
    question: str
    context: str
    answer: str
    start: int                    # character offset of ``answer`` in ``context``
    subject_id: str
    relation_id: str
    tail_id: str


def _mention(text: str, names: list[str], avoid: tuple[int, int] | None) -> tuple[str, int] | None:
    """The first whole-word mention of any of ``names`` (longest name first), outside ``avoid``."""
    for name in sorted({n for n in names if n and len(n.strip()) >= 2}, key=len, reverse=True):
        for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", text):
            if avoid and m.start() < avoid[1] and m.end() > avoid[0]:
                continue
            return name, m.start()
    return None


def documents_of(path: Path) -> set[str]:
    """The supporting document ids of a question file (``support.document``): their chunks stay out of the
    generated questions, as the file's topics do."""
    out: set[str] = set()
    for _, row in json_rows(Path(path), "question file"):
        doc = (row.get("support") or {}).get("document")
        if isinstance(doc, str) and doc:
            out.add(doc)
    return out


def reading_questions_from(rows: list[dict], phraser: Phraser, rng: random.Random, per_text: int = 3,
                           phrasings: int = 2) -> list[ReadingQuestion]:
    """The questions of the entities ``rows`` (what ``reader_training_texts`` returns): for each text about
    an entity, up to ``per_text`` of its facts whose object that text names, each phrased ``phrasings`` ways
    (distinct questions only)."""
    out: list[ReadingQuestion] = []
    for r in rows:
        texts = ([r["description"]] if r.get("description") else []) + list(r.get("chunks") or [])
        for text in texts:
            own = _mention(text, [r["name"]], None) if r.get("name") else None
            avoid = (own[1], own[1] + len(own[0])) if own else None
            found = []
            for f in r["facts"]:
                m = _mention(text, [f["tail_name"] or ""] + list(f.get("tail_aliases") or []), avoid)
                if m:
                    found.append((f, m))
            rng.shuffle(found)
            for f, (span, at) in found[:per_text]:
                asked: set[str] = set()
                for _ in range(phrasings):
                    topic, is_name = phraser.topic(r["id"], r["name"] or r["id"])
                    q = phraser.question(topic, is_name, [f])
                    if q not in asked:
                        asked.add(q)
                        out.append(ReadingQuestion(q, text, span, at, r["id"], f["relation_id"], f["tail_id"]))
    return out


def generate_reading_questions(graph, kg, n: int, seed: int, *, exclude_topics: set[str] = frozenset(),
                               exclude_documents: set[str] = frozenset(), limit: int = 20_000,
                               chunks_per_entity: int = 3, facts_per_entity: int = 40) -> list[ReadingQuestion]:
    """Up to ``n`` reading questions from the loaded graph (see the module text), in a seeded order; the
    entities of ``exclude_topics`` and the chunks of ``exclude_documents`` are left out."""
    relations = kg.relations()
    rows = graph.read("reader_training_texts", relation_ids=list(relations), exclude_ids=sorted(exclude_topics),
                      exclude_docs=sorted(exclude_documents), limit=limit, chunks_per_entity=chunks_per_entity,
                      facts_per_entity=facts_per_entity)
    rng = random.Random(seed)
    rows = list(rows)
    rng.shuffle(rows)
    names = {rid: name for rid, (name, _) in relations.items()}
    ids = list({e for r in rows for e in [r["id"]] + [f["tail_id"] for f in r["facts"]]})
    phraser = Phraser(random.Random(seed + 7919), names, kg.relation_aliases(), type_names(graph, kg, ids))
    out = reading_questions_from(rows, phraser, rng)
    return out[:n]


__all__ = ["ReadingQuestion", "generate_reading_questions", "reading_questions_from", "documents_of"]
