"""VisPath's prompt templates, each with the pydantic schema its JSON answer must fit.

VisPath ("VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph
Question Answering", arXiv 2609.20843; Sections IV-A..IV-D, V-J: "All these prompts require strict JSON
outputs"). The paper shows its templates only as figures (Fig. 6 question analysis,
Fig. 7 intent generation, Fig. 8 evidence statement, Fig. 9 relation-chain judging);
the wording below is ours, written to ask for the same thing. Every template ends
with the exact JSON shape expected; the caller validates the answer against the
named schema (``ChatModel.generate_json`` / ``VisionModel.generate_json``) and, when
the model keeps answering badly, takes the paper's documented fallback.

Templates are ``str.format`` strings; ``build_*`` helpers fill them so that the
engine never concatenates prompt text itself.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Annotated, Sequence

from pydantic import AfterValidator, BaseModel, Field, WithJsonSchema, create_model

_PLACEHOLDER = re.compile(r"^\s*(<[^>]*>|\.\.\.|…|none|null|n/?a)?\s*$", re.I)


_VERDICTS = {"yes", "no", "true", "false", "unknown", "answerable", "not answerable"}


def _not_placeholder(v: str) -> str:
    """Small models copy the template's ``<placeholder>`` or leave "..."; that is not an answer."""
    if _PLACEHOLDER.match(v):
        raise ValueError(f"{v!r} is a template placeholder, not a value")
    return v.strip()


#: A string that must carry content (validated; placeholder echoes are refused so the backend retries).
Text = Annotated[str, AfterValidator(_not_placeholder)]

VISPATH_SYSTEM = ("You are a careful assistant for multi-hop question answering over a knowledge graph. "
                  "Answer with one JSON object only, no prose.")


# ---------------------------------------------------------------- IV-A: referring expression + HEAD
class ReferringExpression(BaseModel):
    """The phrase of Q that refers to the pictured object, and its bare head noun (HEAD)."""

    expression: Text = Field(..., min_length=1, max_length=200)
    head: Text = Field(..., min_length=1, max_length=60)


REFERRING_EXPRESSION = """Question: {question}

The question is asked about an image. Copy the phrase of the question that refers to the object shown \
in the image (for example "the building shown in the image"), and give its bare head noun (for example "building").
Reply with JSON: {{"expression": "<phrase>", "head": "<noun>"}}"""

# Without an image the question names its topic entity in words (kgqa ask "question").
TOPIC_MENTION = """Question: {question}

Copy the name of the main entity the question is about (a person, place, thing or work), exactly as written, \
and give the kind of thing it is as one noun.
Reply with JSON: {{"expression": "<name as written>", "head": "<noun>"}}"""


# ---------------------------------------------------------------- IV-A: filter and rank candidates
class CandidateRanking(BaseModel):
    """Retrieved entity names the model keeps, most likely first (copied from the list)."""

    ranked: list[str] = Field(default_factory=list, max_length=50)


def _bounded_list(base: type[BaseModel], field_name: str, item_type: type, values: list, top: int):
    """``base`` with the JSON schema of its list field ``field_name`` narrowed to items among ``values``
    and at most ``top`` of them: what constrained decoding follows (llama.cpp's grammar, outlines).
    Validation stays ``base``'s; the schema keeps ``base``'s name (replay keys and scripted tests use it)."""
    item = Annotated[item_type, WithJsonSchema({"type": "string" if item_type is str else "integer",
                                                "enum": values})]
    return create_model(base.__name__, __base__=base,
                        **{field_name: (list[item], Field(default_factory=list, max_length=50,
                                                          json_schema_extra={"maxItems": top}))})


@lru_cache(maxsize=256)
def candidate_ranking_schema(names: tuple[str, ...], top: int) -> type[CandidateRanking]:
    """CandidateRanking allowing only the listed names, at most ``top`` of them, so a small model can neither
    invent a name nor list on until its token limit (the engine still ignores unknown names)."""
    return _bounded_list(CandidateRanking, "ranked", str, list(dict.fromkeys(names)), top)


CANDIDATE_RANKING = """Question: {question}
Phrase referring to the image: {expression}
Object recognised in the image: {object_name}

Knowledge-graph entities with similar names:
{candidates}

Keep the entities that could be the recognised object as the phrase describes it, most likely first. \
Copy their names exactly from the list.
Reply with JSON: {{"ranked": ["<name>", "..."]}}"""


# ---------------------------------------------------------------- IV-C: question analysis (Fig. 6)
class QuestionSketch(BaseModel):
    """Reasoning sketch S_Q (relation-level steps) and predicted depth D̂."""

    sketch: list[Text] = Field(..., min_length=1, max_length=8)
    depth: int = Field(..., ge=1, le=8)


#: The worked example inside QUESTION_ANALYSIS; a small model may copy it verbatim (the engine refuses a copy).
QUESTION_ANALYSIS_EXAMPLE = ("architect", "place of birth")

QUESTION_ANALYSIS = """Question: {question}

Break the question into the chain of relations to follow from the entity in the image to the answer. \
Example: "Where was the architect of the building shown in the image born?" -> \
{{"sketch": ["architect", "place of birth"], "depth": 2}}
Reply with JSON: {{"sketch": ["<relation>", "..."], "depth": <number of hops>}}"""


# ---------------------------------------------------------------- IV-B: hop intent q_Q^(i) (Fig. 7, Eq. 4)
class HopIntent(BaseModel):
    """A short description of what the next reasoning step should look for."""

    intent: Text = Field(..., min_length=1, max_length=200)


HOP_INTENT = """Question about the image: {question}
Reasoning so far (hop {hop} comes next):
{paths}

Looking at the image and the question, say in a few words which relation or fact the next hop \
should follow.
Reply with JSON: {{"intent": "<what to look for next>"}}"""


# ---------------------------------------------------------------- IV-C: chain examination (Fig. 9)
class ChainSelection(BaseModel):
    """Numbers of the candidate chains that form a valid line of reasoning for Q."""

    selected: list[int] = Field(default_factory=list, max_length=50)


@lru_cache(maxsize=256)
def chain_selection_schema(m3: int, n: int) -> type[ChainSelection]:
    """ChainSelection allowing at most ``m3`` numbers, each one of 1..n ("[1,2,3,4,…" until the token limit,
    then a retry, was a 135M model's habit; the engine still ignores numbers out of range)."""
    return _bounded_list(ChainSelection, "selected", int, list(range(1, n + 1)), m3)


CHAIN_EXAMINATION = """Question about the image: {question}
Expected reasoning: {sketch}

Candidate reasoning chains from the knowledge graph:
{chains}

Pick at most {m3} chains whose whole sequence of relations leads toward the answer. \
Give their numbers; an empty list if none fits.
Reply with JSON: {{"selected": [<number>, ...]}}"""


# ---------------------------------------------------------------- IV-D: evidence statement z_i (Fig. 8, Eq. 9)
class EvidenceStatement(BaseModel):
    statement: Text = Field(..., min_length=1, max_length=1000)


EVIDENCE_STATEMENT = """Question about the image: {question}
Knowledge-graph paths found so far:
{paths}

Summarise in one or two sentences what these paths say about the object in the image that helps \
answer the question.
Reply with JSON: {{"statement": "<summary>"}}"""


# ---------------------------------------------------------------- IV-D: answerability (Eq. 10)
class Answerability(BaseModel):
    """η_i (sufficient or not) and the candidate answer A_i."""

    answerable: bool
    answer: str = Field("", max_length=200)

    @property
    def candidate(self) -> str:
        """A_i, or "" when the model left the placeholder or nothing."""
        a = self.answer.strip()
        return "" if _PLACEHOLDER.match(a) or a.lower() in _VERDICTS else a


ANSWERABILITY = """Question about the image: {question}
Evidence: {statement}

Is this evidence enough to answer the question? If yes, give the answer (an entity name).
Reply with JSON: {{"answerable": true or false, "answer": "<answer or empty>"}}"""


# ---------------------------------------------------------------- IV-D: final answer from (I, Q, z*)
class FinalAnswer(BaseModel):
    answer: Text = Field(..., min_length=1, max_length=200)


FINAL_ANSWER = """Question about the image: {question}
Evidence: {statement}

Answer the question with the entity name only.
Reply with JSON: {{"answer": "<entity name>"}}"""


# The weak-model fallback of the final answer: log-likelihood choice among the retained endpoints.
ANSWER_CHOICE = """Question about the image: {question}
Evidence: {statement}
Answer:"""


def build_answer_choice(question: str, statement: str) -> str:
    return ANSWER_CHOICE.format(question=question, statement=statement)


# Likelihood selection (VisPathOptions.selection = "likelihood"): the same two LLM decisions of IV-A
# and IV-C, asked as a bare-answer continuation whose allowed options the chat model scores by
# log-likelihood (ChatModel.choose) instead of generating a JSON list. For small local models.
CANDIDATE_CHOICE = """Question: {question}
Phrase referring to the image: {expression}
Object recognised in the image: {object_name}
Which knowledge-graph entity is this object? Answer with the entity name only.
Entity:"""

CHAIN_CHOICE = """Question about the image: {question}
Expected reasoning: {sketch}
Which chain of knowledge-graph relations leads to the answer? Answer with the chain only.
Chain:"""


def build_candidate_choice(question: str, expression: str, object_name: str) -> str:
    return CANDIDATE_CHOICE.format(question=question, expression=expression, object_name=object_name)


def build_chain_choice(question: str, sketch: Sequence[str]) -> str:
    return CHAIN_CHOICE.format(question=question, sketch=" → ".join(sketch))


# ---------------------------------------------------------------- IV-D: terminal selection verification
class CandidateCheck(BaseModel):
    """Whether a candidate answer is consistent with the image and the question."""

    consistent: bool


CANDIDATE_CHECK = """Question about the image: {question}
Candidate answer: {candidate}
Reached by: {path}

Is this candidate consistent with the image and a correct answer to the question?
Reply with JSON: {{"consistent": true or false}}"""


# ---------------------------------------------------------------- IV-D: last resort, answer from the image
IMAGE_ANSWER = """Question about the image: {question}

No knowledge-graph evidence was found. Answer from the image alone with an entity name.
Reply with JSON: {{"answer": "<entity name>"}}"""


# ---------------------------------------------------------------- builders
def numbered(lines: Sequence[str]) -> str:
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1)) or "(none)"


def build_referring_expression(question: str, *, has_image: bool) -> str:
    return (REFERRING_EXPRESSION if has_image else TOPIC_MENTION).format(question=question)


def build_candidate_ranking(question: str, expression: str, object_name: str, names: Sequence[str]) -> str:
    return CANDIDATE_RANKING.format(question=question, expression=expression, object_name=object_name,
                                    candidates=numbered(names))


def build_question_analysis(question: str) -> str:
    return QUESTION_ANALYSIS.format(question=question)


def build_hop_intent(question: str, hop: int, paths: Sequence[str]) -> str:
    return HOP_INTENT.format(question=question, hop=hop, paths=numbered(paths))


def build_chain_examination(question: str, sketch: Sequence[str], chains: Sequence[str], m3: int) -> str:
    return CHAIN_EXAMINATION.format(question=question, sketch=" -> ".join(sketch), chains=numbered(chains), m3=m3)


def build_evidence_statement(question: str, paths: Sequence[str]) -> str:
    return EVIDENCE_STATEMENT.format(question=question, paths=numbered(paths))


def build_answerability(question: str, statement: str) -> str:
    return ANSWERABILITY.format(question=question, statement=statement)


def build_final_answer(question: str, statement: str) -> str:
    return FINAL_ANSWER.format(question=question, statement=statement)


def build_candidate_check(question: str, candidate: str, path: str) -> str:
    return CANDIDATE_CHECK.format(question=question, candidate=candidate, path=path)


def build_image_answer(question: str) -> str:
    return IMAGE_ANSWER.format(question=question)
