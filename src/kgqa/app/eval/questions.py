"""The question file of ``kgqa eval``: JSON lines, each validated (``kgqa.app.eval`` describes the fields)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from kgqa.core.errors import InvalidInput, cap, first_error
from kgqa.core.inputs import check_question


class Topic(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    label: Optional[str] = None


class Support(BaseModel):
    """Where the answer is written (document QA, mKG-RAG): a loaded document's id, a section heading, and in a PDF
    the page (``page``: 12) or pages (``pages``: [12, 13], a first and a last page) it is printed on."""

    model_config = ConfigDict(extra="forbid")
    document: str = Field(min_length=1)
    section: Optional[str] = None
    page: Optional[int] = Field(default=None, ge=1)
    pages: Optional[tuple[int, int]] = None

    @field_validator("pages")
    @classmethod
    def _range(cls, v):
        if v is not None and not 1 <= v[0] <= v[1]:
            raise ValueError(f"must be [first, last] with 1 <= first <= last, got {list(v)}")
        return v

    @model_validator(mode="after")
    def _one_of(self):
        if self.page is not None and self.pages is not None:
            raise ValueError("give page or pages, not both")
        return self

    @property
    def page_range(self) -> Optional[tuple[int, int]]:
        """The supporting pages as (first, last), or None when the support names no page."""
        return (self.page, self.page) if self.page is not None else self.pages


class EvalQuestion(BaseModel):
    """One line of a question file. Unknown extra fields are ignored."""

    model_config = ConfigDict(extra="ignore")
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    image: Optional[str] = None
    answer_id: Optional[str] = None
    aliases: list[str] = Field(default_factory=list)
    hops: Optional[int] = Field(default=None, ge=1)
    topic: Optional[Topic] = None
    support: Optional[Support] = None
    path: Optional[list[tuple[str, str, str]]] = None

    # resolved by load_questions (relative to the question file), never read from the file
    _image_path: Optional[Path] = PrivateAttr(default=None)

    @property
    def image_path(self) -> Optional[Path]:
        return self._image_path

    @field_validator("id", "question", "answer")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v

    @field_validator("path")
    @classmethod
    def _path_ok(cls, v):
        if v is None:
            return v
        if not v:
            raise ValueError("must hold at least one [head, relation, tail] edge")
        for i, (h, r, t) in enumerate(v):
            if not (h and r and t):
                raise ValueError(f"edge {i}: head, relation and tail must be non-empty")
        for i, (a, b) in enumerate(zip(v, v[1:]), 1):
            if a[2] != b[0]:
                raise ValueError(f"edge {i} starts at {b[0]} but edge {i - 1} ends at {a[2]}")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        if self.path is not None and self.hops is not None and len(self.path) != self.hops:
            raise ValueError(f"hops is {self.hops} but path has {len(self.path)} edges")
        if self.path is not None and self.topic is not None and self.path[0][0] != self.topic.id:
            raise ValueError(f"path starts at {self.path[0][0]} but topic.id is {self.topic.id}")
        if self.path is not None and self.answer_id is not None and self.path[-1][2] != self.answer_id:
            raise ValueError(f"path ends at {self.path[-1][2]} but answer_id is {self.answer_id}")
        return self


@dataclass
class SkippedLine:
    line: int
    why: str


def _why(e: ValidationError) -> str:
    loc, msg = first_error(e)
    more = f" (+{len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
    return f"{loc}: {msg}{more}" if loc else f"{msg}{more}"


def load_questions(path: str | Path, lenient: bool = False) -> tuple[list[EvalQuestion], list[SkippedLine]]:
    """Read and validate a question file.

    Strict (default): the first bad line raises ``InvalidInput("file:line: why")``.
    Lenient: bad lines are skipped and returned with their reason.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError as e:
        raise InvalidInput(f"{p}: question file not found") from e
    except OSError as e:
        raise InvalidInput(f"{p}: cannot read question file ({e.strerror})") from e
    questions: list[EvalQuestion] = []
    skipped: list[SkippedLine] = []
    seen: dict[str, int] = {}

    def bad(lineno: int, why: str):
        if not lenient:
            raise InvalidInput(f"{p}:{lineno}: {why}")
        skipped.append(SkippedLine(lineno, why))

    for lineno, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            bad(lineno, f"not UTF-8 (byte {e.start})")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            bad(lineno, f"not valid JSON ({e.msg} at column {e.colno})")
            continue
        if not isinstance(obj, dict):
            bad(lineno, f"expected a JSON object, got {type(obj).__name__}")
            continue
        try:
            q = EvalQuestion.model_validate(obj)
        except ValidationError as e:
            bad(lineno, _why(e))
            continue
        if q.id in seen:
            bad(lineno, f"id {q.id!r} already used on line {seen[q.id]}")
            continue
        try:
            q.question = check_question(q.question)      # the gate: validated once, here
        except InvalidInput as e:
            bad(lineno, str(e).replace("question is ", "question: ", 1))
            continue
        if q.image is not None:
            img = Path(q.image)
            img = img if img.is_absolute() else p.parent / img
            # an image path may not leave the question file's folder (``../../etc/passwd``)
            if not img.resolve().is_relative_to(p.parent.resolve()):
                bad(lineno, f"image: {cap(q.image)} leaves the question file's folder {p.parent}")
                continue
            if not img.is_file():
                bad(lineno, f"image: {cap(q.image)} not found (relative to {p.parent})")
                continue
            q._image_path = img
        seen[q.id] = lineno
        questions.append(q)
    if not questions and not skipped:
        raise InvalidInput(f"{p}: no questions in the file")
    return questions, skipped
