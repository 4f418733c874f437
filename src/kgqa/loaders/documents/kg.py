"""The per-document KG (mKG-RAG, Section 3.1): entities and relations merged within the document
by name (NFKC, case-folded), and the regions that ground them in its images."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field


def name_key(name: str) -> str:
    """The identity of an entity name within one document: NFKC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split()).strip(" .,:;\"'")


@dataclass
class KGEntity:
    id: str
    name: str
    type: str
    descriptions: list[str]
    chunk_ids: list[str]

    @property
    def description(self) -> str:
        return " ".join(dict.fromkeys(self.descriptions))[:600]


@dataclass
class KGRelation:
    id: str
    head: str           # name keys
    tail: str
    summaries: list[str]
    chunk_ids: list[str]
    region: dict | None = None
    sentence: str = ""              # provenance (CPU extractor): the sentence or line the relation was read from
    context: str = ""               # the section heading over it
    relation_id: str | None = None  # the relation catalogue's entry its phrase maps to, if any
    relation_name: str | None = None
    phrase: str = ""                # the words that state the relation (mapped to the catalogue)

    @property
    def summary(self) -> str:
        return " ".join(dict.fromkeys(self.summaries))[:600]


@dataclass
class DocumentKG:
    entities: dict[str, KGEntity] = field(default_factory=dict)       # name key -> entity
    relations: dict[tuple[str, str], KGRelation] = field(default_factory=dict)
    regions: list[dict] = field(default_factory=list)

    def add_entity(self, doc_id: str, name: str, type_: str, desc: str, chunk_id: str) -> KGEntity:
        key = name_key(name)
        e = self.entities.get(key)
        if e is None:
            e = KGEntity(f"{doc_id}:e:{hashlib.sha1(key.encode()).hexdigest()[:10]}", " ".join(name.split()),
                         type_.strip().lower() or "concept", [], [])
            self.entities[key] = e
        if desc.strip():
            e.descriptions.append(desc.strip())
        if chunk_id not in e.chunk_ids:
            e.chunk_ids.append(chunk_id)
        return e

    def add_relation(self, doc_id: str, head: str, tail: str, summary: str, chunk_id: str) -> KGRelation | None:
        hk, tk = name_key(head), name_key(tail)
        if hk == tk or hk not in self.entities or tk not in self.entities:
            return None
        r = self.relations.get((hk, tk))
        if r is None:
            r = KGRelation(f"{doc_id}:r:{hashlib.sha1(f'{hk}|{tk}'.encode()).hexdigest()[:10]}", hk, tk, [], [])
            self.relations[(hk, tk)] = r
        if summary.strip():
            r.summaries.append(summary.strip())
        if chunk_id not in r.chunk_ids:
            r.chunk_ids.append(chunk_id)
        return r


def in_text(name: str, text: str) -> bool:
    return name_key(name) in name_key(text)
