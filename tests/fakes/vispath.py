"""The small VisPath world of the unit tests: an in-memory graph, a bag-of-words encoder, scripted models.

``FakeGraph`` answers the vispath_* queries by name from Python lists (the Cypher files' row
shapes); ``BagOfWordsEncoder`` stands in for SBERT (cosine = word overlap); ``ScriptedModel``
is the chat and vision model, returning scripted JSON per schema (or raising BadModelReply, as
a real backend does after its bounded retries). ``make`` builds a VisPath over the museum
example (``ENTITIES``, ``RELATIONS``, ``FACTS``, question ``Q2HOP``) with ``base_scripts``.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

from kgqa.core.errors import BadModelReply
from kgqa.methods.vispath.scoring import cap_per_key
from tests.conftest import make_vispath


class BagOfWordsEncoder:
    """Deterministic stand-in for SBERT in unit tests: hashed word counts, L2-normalised."""

    dim = 384

    def __init__(self):
        self.calls = 0

    def encode(self, texts, batch_size=64):
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z0-9]+", t.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out


class FakeGraph:
    """Answers the queries VisPath runs, from Python lists (same row shapes as the Cypher files)."""

    def __init__(self, entities, relations, facts, images=None, encoder=None):
        self.entities = dict(entities)          # id -> name
        self.relations = dict(relations)        # pid -> name
        self.facts = list(facts)                # (h, pid, t)
        self.images = images or {}              # id -> [paths]
        self.enc = encoder or BagOfWordsEncoder()
        self.queries: list[str] = []
        self.compat_override: dict[str, float] | None = None
        self.aliases: dict[str, list[str]] = {}   # pid -> aliases (Relation.aliases)
        self.descriptions: dict[str, str] = {}    # id -> Entity.description

    def _vec(self, text):
        return self.enc.encode([text])[0]

    def out(self, eid):
        return [(h, r, t) for h, r, t in self.facts if h == eid]

    def read(self, name, params=None, **kw):
        p = {**(params or {}), **kw}
        self.queries.append(name)
        if name == "entity_vector_search":
            v = np.asarray(p["vector"], dtype=np.float32)
            rows = [{"id": i, "name": n, "description": None, "score": (1 + float(self._vec(n) @ v)) / 2}
                    for i, n in self.entities.items()]
            return sorted(rows, key=lambda r: -r["score"])[: p["k"]]
        if name == "entity_label_search":          # the keyword index: one exact label key
            from kgqa.core.kg import label_keys

            term = p["query"].strip('"')
            return [{"id": i, "name": n, "description": None} for i, n in self.entities.items()
                    if term in label_keys(n)][: p["k"]]
        if name == "kg_entity_by_id":
            i = p["id"]
            return [{"id": i, "name": self.entities[i], "description": None}] if i in self.entities else []
        if name == "kg_relation_catalogue":
            return [{"id": k, "name": v, "aliases": self.aliases.get(k), "embedding": self._vec(v).tolist()}
                    for k, v in self.relations.items()]
        if name == "vispath_relation_compatibility":
            q = np.asarray(p["question_vector"], dtype=np.float32)
            rows = []
            for cid in p["ids"]:
                if self.compat_override is not None:
                    if cid in self.compat_override:
                        rows.append({"id": cid, "relation_id": "P1", "relation_name": "r",
                                     "similarity": (1 + self.compat_override[cid]) / 2})
                    continue
                rels = {r for _, r, _ in self.out(cid)}
                if rels:
                    best = max(rels, key=lambda r: float(self._vec(self.relations[r]) @ q))
                    rows.append({"id": cid, "relation_id": best, "relation_name": self.relations[best],
                                 "similarity": (1 + float(self._vec(self.relations[best]) @ q)) / 2})
            return rows
        if name == "vispath_relation_compatibility_scored":
            sc = p["relation_scores"]
            rows = []
            for cid in p["ids"]:
                if self.compat_override is not None:
                    if cid in self.compat_override:
                        rows.append({"id": cid, "relation_id": "P1", "relation_name": "r",
                                     "score": self.compat_override[cid]})
                    continue
                rels = [r for r in {r for _, r, _ in self.out(cid)} if r in sc]
                if rels:
                    best = max(rels, key=lambda r: sc[r])
                    rows.append({"id": cid, "relation_id": best, "relation_name": self.relations[best],
                                 "score": sc[best]})
            return rows
        if name in ("vispath_frontier_edges", "vispath_frontier_edges_all"):
            rows = []
            for fid in p["frontier"]:
                edges = [{"head_id": h, "head_name": self.entities[h], "relation_id": r, "tail_id": t,
                          "tail_name": self.entities[t]} for h, r, t in self.out(fid)]
                if name == "vispath_frontier_edges":
                    intent = np.asarray(p["intent"], dtype=np.float32)
                    for e in edges:
                        e["approx"] = (p["relation_scores"].get(e["relation_id"], -1.0)
                                       + float(self._vec(e["tail_name"]) @ intent)) / 2
                    # as the Cypher does: the best per_relation of each relation (0: all), then the best cap
                    edges = cap_per_key(sorted(edges, key=lambda e: -e["approx"]), lambda e: e["relation_id"],
                                        p.get("per_relation", 0), p["cap"])
                rows += edges
            return rows
        if name == "kg_entity_types":        # instance of, then up to three subclass of steps
            rows = []
            for i in p["ids"]:
                if i not in self.entities:
                    continue
                level = {t for h, r, t in self.facts if h == i and r in p["instance_of"]}
                classes = set(level)
                for _ in range(3):
                    level = {t for h, r, t in self.facts if h in level and r in p["subclass_of"]} - classes
                    classes |= level
                rows.append({"id": i, "description": self.descriptions.get(i),
                             "classes": sorted(self.entities[c] for c in classes)})
            return rows
        if name == "vispath_entity_images":
            return [{"id": i, "paths": self.images[i]} for i in p["ids"] if i in self.images]
        raise AssertionError(f"unexpected query {name}")


class ScriptedModel:
    """chat + vision fake: per-schema scripts (a value, a list consumed in order, or a callable)."""

    name = "scripted"

    def __init__(self, scripts=None, recognized="Government Museum, Chandigarh"):
        self.scripts = dict(scripts or {})
        self.recognized = recognized
        self.prompts: list[tuple[str, str]] = []

    def _next(self, schema, prompt):
        self.prompts.append((schema.__name__, prompt))
        s = self.scripts.get(schema.__name__)
        if isinstance(s, list):
            s = s.pop(0) if s else None
        if callable(s):
            s = s(prompt)
        if s is None or isinstance(s, Exception):
            raise BadModelReply(f"scripted: no valid {schema.__name__}")
        return schema.model_validate(s)

    def generate_json(self, *args, **kw):
        # chat: (prompt, schema); vision: (image, prompt, schema)
        if len(args) == 3:
            _, prompt, schema = args
        else:
            prompt, schema = args
        return self._next(schema, prompt)

    def recognize(self, image, hint):
        self.prompts.append(("recognize", hint))
        return self.recognized


ENTITIES = {
    "Q1": "Government Museum, Chandigarh",
    "Q2": "Le Corbusier",
    "Q3": "India",
    "Q4": "museum",
    "Q5": "La Chaux-de-Fonds",
    "Q6": "France",
    "Q7": "Frameries",
    "Q8": "Switzerland",
    "Q9": "Government Museum",        # look-alike name, no useful relation
    "Q10": "Pierre Jeanneret",
}
RELATIONS = {"P84": "architect", "P17": "country", "P31": "instance of", "P19": "place of birth",
             "P27": "country of citizenship", "P190": "twinned administrative body", "P1038": "relative"}
FACTS = [("Q1", "P84", "Q2"), ("Q1", "P17", "Q3"), ("Q1", "P31", "Q4"),
         ("Q2", "P19", "Q5"), ("Q2", "P27", "Q6"), ("Q2", "P1038", "Q10"),
         ("Q5", "P190", "Q7"), ("Q5", "P17", "Q8"),
         ("Q9", "P31", "Q4")]
Q2HOP = "Where was the architect of the building shown in the image born?"


def base_scripts(**over):
    s = {
        "ReferringExpression": {"expression": "the building shown in the image", "head": "building"},
        "CandidateRanking": {"ranked": ["Government Museum, Chandigarh", "Government Museum"]},
        "QuestionSketch": {"sketch": ["architect", "place of birth"], "depth": 2},
        "HopIntent": [{"intent": "architect of the building"}, {"intent": "place of birth of the architect"},
                      {"intent": "twinned administrative body"}],
        "ChainSelection": {"selected": [1]},
        "EvidenceStatement": lambda prompt: {"statement": prompt.split("\n")[2][3:]},
        "Answerability": [{"answerable": False, "answer": ""}, {"answerable": True, "answer": "La Chaux-de-Fonds"},
                          {"answerable": True, "answer": "Frameries"}],
        "FinalAnswer": {"answer": "La Chaux-de-Fonds"},
        "CandidateCheck": {"consistent": True},
    }
    s.update(over)
    return s


def make(scripts=None, facts=FACTS, images=None, **opts):
    from kgqa.methods.vispath.options import VisPathOptions

    enc = BagOfWordsEncoder()
    g = FakeGraph(ENTITIES, RELATIONS, facts, images=images, encoder=enc)
    m = ScriptedModel(base_scripts() if scripts is None else scripts)
    return make_vispath(g, enc, m, m, VisPathOptions(**opts)), g, m


IMAGE = object()  # the engine only passes it through to the vision fake
