"""Prompts and JSON schemas of mKG-RAG's document-graph extraction (load time).

mKG-RAG: "mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation
for Knowledge-intensive VQA", Section 3.1. The wording is ours; what each prompt
asks follows the paper (3.1.1 textual graph: entities with a name and a description, relations with
a head, a tail and a summary; 3.1.3 / Eq. 1 / Fig. 5 vision-text matching: objects written as
"<object-id>: <category>, <bbox>", relations as "<relation-id>: <subject>, <predicate>, <object>",
with an exemplar). Document text is data (``kgqa.core.prompting``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from kgqa.core.prompting import DATA_RULE, data_block

# --------------------------------------------------------------------------- 3.1.1 textual graph
ENTITY_TYPES = ("person", "place", "organisation", "building", "object", "artwork", "event", "concept",
                "date", "quantity")


class ExtractedEntity(BaseModel):
    name: str = Field(min_length=1, max_length=48, description="the entity's name as written in the text")
    type: str = Field(min_length=1, max_length=16, description="one of the entity types")
    description: str = Field(min_length=1, max_length=64, description="what the text says about it")


class ExtractedRelation(BaseModel):
    head: str = Field(min_length=1, max_length=48, description="name of the head entity")
    tail: str = Field(min_length=1, max_length=48, description="name of the tail entity")
    summary: str = Field(min_length=1, max_length=64, description="one sentence relating head and tail")


# Lengths stay within 64 characters: the local LLM's decoding grammar enforces bounds up to
# that length (kgqa.models.local_chat.MAX_BOUNDED_LENGTH), so a reply cannot fail on length.
class TextGraph(BaseModel):
    entities: list[ExtractedEntity] = Field(default_factory=list, max_length=5)
    relations: list[ExtractedRelation] = Field(default_factory=list, max_length=4)


EXTRACT_SYSTEM = ("You turn encyclopedic text into a knowledge graph and reply with JSON only. " + DATA_RULE)

# No exemplar here, unlike the matching prompt: SmolLM2-135M copied an exemplar's entities and
# descriptions into every document; the schema's grammar already fixes the output format.


def extraction_prompt(title: str, text: str) -> str:
    """Section 3.1.1: the entities (name, type, description) and relations (head, tail, summary) of one segment."""
    return (
        "List the key entities of the document below and the relations between them.\n"
        f"Entity types: {', '.join(ENTITY_TYPES)}.\n"
        "For each entity: its name exactly as written in the text, its type, and a description taken from "
        "the text (dates, numbers and names included). For each relation: the head and tail entity names "
        "from your list and a one-sentence summary of how they are related, taken from the text.\n\n"
        f"The document (from the article titled {title!r}):\n"
        f"{data_block('document', text)}\nJSON:"
    )


# --------------------------------------------------------------------------- 3.1.2 visual graph
class VisualObject(BaseModel):
    id: str = Field(pattern=r"^o[0-9]{1,3}$", description="o0, o1, …")
    category: str = Field(min_length=1, max_length=60)
    bbox: list[float] = Field(min_length=4, max_length=4, description="x1, y1, x2, y2 in [0, 1]")


class VisualRelation(BaseModel):
    subject: str = Field(pattern=r"^o[0-9]{1,3}$")
    predicate: str = Field(min_length=1, max_length=40)
    object: str = Field(pattern=r"^o[0-9]{1,3}$")


class VisualGraph(BaseModel):
    objects: list[VisualObject] = Field(default_factory=list, max_length=20)
    relations: list[VisualRelation] = Field(default_factory=list, max_length=20)


SCENE_GRAPH_SYSTEM = "You describe images as scene graphs and reply with JSON only."

SCENE_GRAPH_PROMPT = (
    "List the prominent objects in the image, each with an id (o0, o1, …), a category and a bounding box "
    "(x1, y1, x2, y2) normalised to [0, 1] (top-left x, top-left y, bottom-right x, bottom-right y), and the "
    "binary relations between them (subject id, predicate, object id).\nJSON:"
)


# --------------------------------------------------------------------------- 3.1.3 vision-text matching
class EntityMatch(BaseModel):
    object: str = Field(pattern=r"^o[0-9]{1,3}$", description="visual object id")
    entity: str = Field(min_length=1, max_length=48, description="textual entity name")


class RelationMatch(BaseModel):
    relation: str = Field(pattern=r"^r[0-9]{1,3}$", description="visual relation id")
    head: str = Field(min_length=1, max_length=48)
    tail: str = Field(min_length=1, max_length=48)


class Matches(BaseModel):
    entities: list[EntityMatch] = Field(default_factory=list, max_length=6)
    relations: list[RelationMatch] = Field(default_factory=list, max_length=6)


def matches_schema(object_ids: list[str], relation_ids: list[str], entity_names: list[str]) -> type[Matches]:
    """``Matches`` narrowed to this image's ids and this segment's entity names (enums), so that a
    reply can only name things that exist (the exemplar's names cannot be copied)."""
    from typing import Literal

    from pydantic import create_model

    obj = Literal[tuple(object_ids)] if object_ids else str
    ent = Literal[tuple(dict.fromkeys(entity_names))] if entity_names else str
    em = create_model("EntityMatch", object=(obj, ...), entity=(ent, ...))
    fields: dict = {"entities": (list[em], Field(default_factory=list, max_length=6))}
    if relation_ids:
        rm = create_model("RelationMatch", relation=(Literal[tuple(relation_ids)], ...), head=(ent, ...),
                          tail=(ent, ...))
        fields["relations"] = (list[rm], Field(default_factory=list, max_length=6))
    return create_model("Matches", **fields)


MATCH_SYSTEM = ("You match the objects and relations of an image's scene graph to the entities and relations "
                "of a text, and reply with JSON only. " + DATA_RULE)

_MATCH_EXAMPLE = """Example.
<graph>
Textual entities:
- Mount Fuji: an active volcano on Honshu in Japan
- Shinkansen: the Japanese high-speed railway
Textual relations:
- Mount Fuji -> Shinkansen: both are national symbols of Japan
Visual objects:
- o0: train, (0.06, 0.64, 1.00, 0.77)
- o1: mountain, (0.00, 0.30, 1.00, 0.64)
Visual relations:
- r0: o1, behind, o0
</graph>
{"entities": [{"object": "o1", "entity": "Mount Fuji"}, {"object": "o0", "entity": "Shinkansen"}],
 "relations": [{"relation": "r0", "head": "Mount Fuji", "tail": "Shinkansen"}]}"""


def matching_prompt(entities: list[tuple[str, str]], relations: list[tuple[str, str, str]],
                    objects: list[tuple[str, str, tuple[float, float, float, float]]],
                    vrelations: list[tuple[str, str, str, str]]) -> str:
    """Eq. 1 (Fig. 5): which visual object depicts which textual entity, which visual relation which textual one."""
    lines = ["Textual entities:"]
    lines += [f"- {n}: {d}" for n, d in entities] or ["- (none)"]
    lines.append("Textual relations:")
    lines += [f"- {h} -> {t}: {s}" for h, t, s in relations] or ["- (none)"]
    lines.append("Visual objects:")
    lines += [f"- {oid}: {cat}, ({b[0]:.2f}, {b[1]:.2f}, {b[2]:.2f}, {b[3]:.2f})" for oid, cat, b in objects]
    lines.append("Visual relations:")
    lines += [f"- {rid}: {s}, {p}, {o}" for rid, s, p, o in vrelations] or ["- (none)"]
    return (
        "The image is described by the visual objects (id: category, normalised bounding box) and relations "
        "(id: subject, predicate, object) below; the text by its entities and relations. Match each visual "
        "object that depicts a textual entity to that entity, and each visual relation that depicts a textual "
        "relation to its head and tail. Leave out what has no counterpart. Use the textual names exactly.\n\n"
        f"{_MATCH_EXAMPLE}\n\nNow the real graphs.\n{data_block('graph', chr(10).join(lines))}\nJSON:"
    )
