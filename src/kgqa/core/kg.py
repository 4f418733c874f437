"""Shared access to the knowledge graph for every method.

One ``KG`` per pipeline wraps the graph and the encoder, so VisPath, mKG-RAG and GraSP
read the graph the same way and share one embedding cache:

* ``embed(texts)``            SBERT vectors with a per-process cache (edge texts, names and
                              questions repeat across hops and questions)
* ``relations()``             the relation catalogue: id → (name, stored embedding), read once
* ``entity(id)``              one entity by id (``--entity Q90``), None when absent
* ``link_entities(text, k)``  entity linking: the entities whose name or alias equals the text
                              (``entity_label_keys`` index), then those whose stored name
                              embedding is nearest to SBERT(text) (``entity_name_embedding`` vector
                              index, cosines: Neo4j's (1 + cos)/2 converted back)
* ``ground_answer(text, names)`` the entity (among ``names``: id → name) an answer text names
* ``hidden_facts(id, share, seed)`` the incomplete-KG protocol: the facts of an entity hidden at
                              query time (keys ``head|relation|tail`` every method's Cypher filters
                              by a ``$hidden`` parameter; the stored graph is never changed)

Queries: ``cypher/kg_*.cypher``, ``cypher/entity_label_search.cypher`` and
``cypher/entity_vector_search.cypher``.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from kgqa.core.chain_vectors import ChainVectors, chain_vectors

#: Above this cosine an answer text counts as naming an entity (when no name matches exactly).
GROUND_MIN_COS = 0.8


#: marks the key of a label whose trailing "(qualifier)" was dropped: "Paris (painting)" → "~paris"
QUALIFIED = "~"
_WORDS = re.compile(r"\w+")
_TRAILING_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


def label_key(label: str) -> str:
    """A label's comparison form: lower case, every run of non-word characters one space
    ("Notre-Dame de Paris" → "notre dame de paris")."""
    return " ".join(_WORDS.findall(label.lower()))


#: Lucene's limit on one index term, in UTF-8 bytes: a longer ``label_keys`` entry makes Neo4j panic
#: after the commit (and the ``entity_label_keys`` index FAILED after a restart).
LUCENE_MAX_TERM_BYTES = 32_766
#: The longest label key stored, in UTF-8 bytes, well below Lucene's term limit; the loaders' own
#: limits (kgqa.loaders.wikidata5m.files: 4 KB per label or alias) keep keys under it already, this
#: guards every other writer (``kgqa neo4j init``'s backfill of entities loaded before).
MAX_LABEL_KEY_BYTES = 8_192


def label_keys(name: str, aliases: Sequence[str] = ()) -> list[str]:
    """What the loaders store in ``Entity.label_keys`` (the ``entity_label_keys`` index): the ``label_key``
    of the name and of each alias, and for a label ending in a parenthesised qualifier also the key
    without it, marked ``QUALIFIED`` ("Notre-Dame de Paris (novel)" → "notre dame de paris novel",
    "~notre dame de paris"), so a mention finds the qualified labels only after the exact ones. A key
    over ``MAX_LABEL_KEY_BYTES`` is left out (an index term that long would take the database down)."""
    out = []
    for x in (name, *aliases):
        if not isinstance(x, str):
            continue
        out.append(label_key(x))
        x = x.strip()
        if x.endswith(")"):     # most labels have no qualifier: the regex runs only on those that may
            bare = _TRAILING_QUALIFIER.sub("", x)
            if bare != x:
                out.append(QUALIFIED + label_key(bare))
    return list(dict.fromkeys(k for k in out
                              if k.lstrip(QUALIFIED) and len(k.encode("utf-8")) <= MAX_LABEL_KEY_BYTES))


def cos_from_neo4j(similarity: float) -> float:
    """Neo4j's ``vector.similarity.cosine`` and vector-index scores are (1 + cos) / 2; formulas use cos."""
    return 2.0 * float(similarity) - 1.0


@dataclass
class LinkedEntity:
    id: str
    name: str
    description: str | None
    cos: float                       # cosine between SBERT(text) and the stored name embedding (1.0: a label match)
    label: bool = False              # a name or alias equals the text (label_matches), not a vector neighbour


class KG:
    def __init__(self, graph, encoder, cache_limit: int = 200_000):
        self.graph = graph
        self.encoder = encoder
        self.cache_limit = cache_limit
        self._emb_cache: dict[str, np.ndarray] = {}
        self._chain_identity: str | None = None
        self._chains: ChainVectors | None = None
        self._relations: dict[str, tuple[str, np.ndarray | None]] | None = None
        self._relation_aliases: dict[str, list[str]] = {}
        self._walk_topics: list[str] | None = None

    # ------------------------------------------------------------------ encoder
    def clear_cache(self) -> None:
        """Forget every cached text embedding (a cold cache: the next ``embed`` encodes again)."""
        self._emb_cache.clear()

    @property
    def chain_vectors(self) -> ChainVectors:
        """The store of relation-chain vectors (``kgqa.core.chain_vectors``): the process's one for this graph's
        data dir; a graph without one (a test's fake) gets a store of its own, in memory."""
        if self._chains is None:
            data_dir = getattr(getattr(self.graph, "settings", None), "data_dir", None)
            self._chains = chain_vectors(data_dir) if data_dir is not None else ChainVectors(None)
        return self._chains

    def embed_chains(self, texts: Sequence[str]) -> np.ndarray:
        """``embed`` for relation-chain texts: kept across questions and processes under the encoder's identity
        (``kgqa.core.chain_vectors``)."""
        if not texts:
            return self.embed(texts)
        if self._chain_identity is None:         # read once: it lists the model folder's files
            own = getattr(self.encoder, "identity", None) or f"{type(self.encoder).__name__}@{id(self.encoder)}"
            self._chain_identity = f"sbert {own}"
        found = self.chain_vectors.lookup(self._chain_identity, texts, self.embed)
        for t, v in found.items():          # one vector per text whichever way it is asked for next
            self._emb_cache.setdefault(t, v)
        return np.stack([found[t] for t in texts])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised SBERT vectors (n, dim); each distinct text is encoded once per process."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._emb_cache]
        if missing:
            vecs = np.asarray(self.encoder.encode(missing), dtype=np.float32)
            if len(self._emb_cache) > self.cache_limit:
                self._emb_cache.clear()
            self._emb_cache.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, getattr(self.encoder, "dim", 384)), dtype=np.float32)
        return np.stack([self._emb_cache[t] for t in texts])

    # ------------------------------------------------------------------ graph
    def relations(self) -> dict[str, tuple[str, Any]]:
        """The relation catalogue: id → (name, stored SBERT embedding or None), read once."""
        if self._relations is None:
            rel: dict[str, tuple[str, Any]] = {}
            aliases: dict[str, list[str]] = {}
            for r in self.graph.read("kg_relation_catalogue"):
                emb = r.get("embedding")
                rel[r["id"]] = (r["name"] or r["id"], np.asarray(emb, dtype=np.float32) if emb else None)
                aliases[r["id"]] = [a for a in (r.get("aliases") or []) if isinstance(a, str) and a.strip()]
            self._relations = rel
            self._relation_aliases = aliases
        return self._relations

    def walk_topics(self) -> list[str]:
        """The entities a generated question can start from (a name vector and an outgoing fact of the
        catalogue), in id order, at most 200,000; read once (a training run draws several question sets, and on a
        large graph this read takes half a minute)."""
        if self._walk_topics is None:
            self._walk_topics = [r["id"] for r in self.graph.read("grasp_training_topics",
                                                                  relation_ids=list(self.relations()),
                                                                  limit=200_000)]
        return self._walk_topics

    def type_relations(self) -> tuple[list[str], list[str]]:
        """The relation ids that mean ``instance of`` and ``subclass of`` in this KG (Wikidata's P31 and P279,
        or a relation named so); empty lists when the KG has none."""
        inst, sub = [], []
        for rid, (name, _) in self.relations().items():
            n = (name or "").strip().casefold()
            if rid == "P31" or n == "instance of":
                inst.append(rid)
            elif rid == "P279" or n == "subclass of":
                sub.append(rid)
        return inst, sub

    def entity_types(self, ids: list[str]) -> dict[str, set[str]]:
        """The type words of each entity that has type evidence: the names of its classes (``instance of``
        and its ``subclass of`` chain, where the KG has them) and its description's words (where it has
        one). An entity with neither is absent: it has no type evidence. (VisPath's and GraSP's answer typing.)"""
        from kgqa.core.question import type_words

        inst, sub = self.type_relations()
        out = {}
        for r in self.graph.read("kg_entity_types", ids=ids, instance_of=inst, subclass_of=sub):
            words = type_words(r.get("classes") or (), r.get("description"))
            if words:
                out[r["id"]] = words
        return out

    def entity_kinds(self, ids: list[str], max_classes: int = 3) -> dict[str, str]:
        """What kind of thing each entity is, as text to read: the names of its classes (``instance of`` and up
        to three ``subclass of`` steps, at most ``max_classes``), else its description; an entity
        with neither is absent. (VisPath's terminal selection reads it against the question, ``kind``.)"""
        inst, sub = self.type_relations()
        out = {}
        for r in self.graph.read("kg_entity_types", ids=ids, instance_of=inst, subclass_of=sub):
            classes = [c for c in (r.get("classes") or ()) if c and c.strip()][:max_classes]
            text = ", ".join(classes) or (r.get("description") or "").strip()
            if text:
                out[r["id"]] = text[:120]
        return out

    def kind_texts(self, reached_by: dict[str, str]) -> dict[str, str]:
        """Entity id → what kind of thing it is, as text: ``entity_kinds``, else the name of the relation id it is
        reached by (``reached_by``: what that relation leads to stands in for the entity's own kind)."""
        kinds = self.entity_kinds(list(reached_by))
        rel = self.relations()
        return {e: kinds.get(e) or rel.get(r, (r, None))[0] or r for e, r in reached_by.items()}

    def relation_aliases(self) -> dict[str, list[str]]:
        """id → the relation's aliases as loaded (Wikidata5M's relation file: "born in", "birthplace" …)."""
        self.relations()
        return self._relation_aliases

    def entity(self, entity_id: str) -> dict | None:
        rows = self.graph.read("kg_entity_by_id", id=entity_id)
        return rows[0] if rows else None

    def link_entities(self, text: str, k: int = 10) -> list[LinkedEntity]:
        """The k entities ``text`` most likely names, best first: those whose name or an alias equals it
        (``label_matches``: names before aliases), then the nearest names by SBERT (vector index).

        The label lookup is what keeps linking sound at Wikidata scale: among 200,000 names that share
        words with the demo's, the approximate vector index left "The Hunchback of Notre-Dame" (alias
        "Notre-Dame de Paris (novel)") out of the top 10 for "Notre-Dame de Paris" (bench/scale.py)."""
        vec = self.embed([text])[0]
        exact = self.label_matches(text, k)
        rows = self.graph.read("entity_vector_search", k=int(k), vector=vec.tolist())
        seen = {e.id for e in exact}
        near = [LinkedEntity(r["id"], r["name"] or r["id"], r.get("description"), cos_from_neo4j(r["score"]))
                for r in rows if r["id"] not in seen]
        return (exact + near)[: int(k)]

    def label_matches(self, text: str, k: int = 10) -> list[LinkedEntity]:
        """Entities a label of which equals ``text`` up to case and punctuation (``label_key``): the name,
        then an alias, then a label that only adds a trailing "(qualifier)" ("Notre-Dame de Paris (novel)"),
        each an exact term lookup in the ``entity_label_keys`` index (keyword analyser over
        ``Entity.label_keys``). Empty when the text has no word, or for entities loaded before
        ``label_keys`` existed (``kgqa neo4j init`` or the next load adds them)."""
        from neo4j.exceptions import ClientError

        from kgqa.core.errors import GraphUnavailable

        key = label_key(text)
        out: list[LinkedEntity] = []
        for term in ((key, QUALIFIED + key) if key else ()):
            if len(out) >= k:
                break
            try:     # the term holds only word characters, spaces and QUALIFIED: no Lucene syntax
                rows = self.graph.read("entity_label_search", query=f'"{term}"', k=max(5 * int(k), 50))
            except ClientError as e:       # a database whose schema predates the index
                raise GraphUnavailable("Neo4j has no ONLINE entity_label_keys index (entity linking by "
                                       "label): run `kgqa neo4j init`") from e
            seen = {e.id for e in out}
            rows = [r for r in rows if r["id"] not in seen]
            rows.sort(key=lambda r: label_key(r["name"] or "") != key)           # names before aliases
            out += [LinkedEntity(r["id"], r["name"] or r["id"], r.get("description"), 1.0, label=True) for r in rows]
        return out[: int(k)]

    # ------------------------------------------------------------------ answers
    def ground_answer(self, text: str | None, names: dict[str, str]) -> str | None:
        """The id (a key of ``names``) whose name the answer text names: an exact name match
        (case-insensitive) first, else the nearest name by SBERT when its cosine ≥ 0.8, else None."""
        if not text or not names:
            return None
        low = text.strip().lower()
        for eid, n in names.items():
            if n.strip().lower() == low:
                return eid
        ids = list(names)
        sims = self.embed([names[i] for i in ids]) @ self.embed([text])[0]
        j = int(np.argmax(sims))
        return ids[j] if sims[j] >= GROUND_MIN_COS else None

    # ------------------------------------------------------------------ incomplete KG
    def hidden_facts(self, entity_id: str, share: float, seed: int = 0) -> list[str]:
        """The facts of ``entity_id`` hidden at query time for the incomplete-KG evaluation.

        GraSP Section 5.5 (after Generate-on-Graph): "randomly removing a portion of edges
        connected to topic entities". Deterministic and nested: the n facts touching the entity
        (either direction) are ranked by sha256("seed|head|relation|tail") and the first
        round(share · n) are hidden, so a larger share hides a superset for the same seed. Returns
        their keys ``head_id|relation_id|tail_id``; methods pass them to Cypher as ``$hidden``.
        """
        from kgqa.core.errors import InvalidInput

        if not 0.0 <= float(share) <= 1.0:
            raise InvalidInput(f"--drop-edges must be in [0, 1], got {share}")
        if share == 0:
            return []
        keys = [r["key"] for r in self.graph.read("kg_entity_fact_keys", id=entity_id,
                                                    relation_ids=list(self.relations()))]
        ranked = sorted(keys, key=lambda k: hashlib.sha256(f"{int(seed)}|{k}".encode()).hexdigest())
        return sorted(ranked[: int(math.floor(share * len(ranked) + 0.5))])
