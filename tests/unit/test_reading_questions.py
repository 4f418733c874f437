"""Reading questions generated from a KG and its texts (WikiReading-style training data for the span reader)."""

from __future__ import annotations

import json
import random

import pytest

from kgqa.core.errors import InvalidInput
from kgqa.core.reading_questions import documents_of, reading_questions_from
from kgqa.core.walk_questions import Phraser


def _phraser() -> Phraser:
    names = {"P131": "located in the administrative territorial entity", "P17": "country", "P84": "architect"}
    return Phraser(random.Random(0), names, {"P17": ["land"], "P84": ["designed by"]}, {"Q90": "city"})


def _fact(rid: str, tid: str, name: str, aliases=()) -> dict:
    return {"relation_id": rid, "tail_id": tid, "tail_name": name, "tail_aliases": list(aliases)}


def test_the_answer_is_the_objects_span_in_the_text_about_its_subject():
    rows = [{"id": "Q1", "name": "Paris Opera", "description": "Paris Opera, opera house in Paris, France.",
             "chunks": [], "facts": [_fact("P131", "Q90", "Paris"), _fact("P17", "Q142", "France")]}]
    got = reading_questions_from(rows, _phraser(), random.Random(0), phrasings=1)
    assert {g.answer for g in got} == {"Paris", "France"}
    for g in got:
        assert g.context[g.start:g.start + len(g.answer)] == g.answer
        assert g.question.endswith(("?", "."))
    paris = next(g for g in got if g.answer == "Paris")
    assert paris.start == paris.context.index("in Paris") + 3         # not the "Paris" inside the subject's own name


def test_an_object_the_text_does_not_name_makes_no_question():
    rows = [{"id": "Q183", "name": "Germany", "description": "Germany, country in Central Europe.", "chunks": [],
             "facts": [_fact("P37", "Q188", "German"), _fact("P30", "Q46", "Europe")]}]
    got = reading_questions_from(rows, _phraser(), random.Random(0), phrasings=1)
    assert [g.answer for g in got] == ["Europe"]                   # "German" is only inside "Germany"


def test_an_alias_names_the_object_and_document_chunks_are_texts_too():
    rows = [{"id": "Q243", "name": "Eiffel Tower", "description": None,
             "chunks": ["The tower was designed by the engineer Gustave Eiffel's company."],
             "facts": [_fact("P84", "Q20882", "Stephen Sauvestre"),
                       _fact("P84", "Q2", "Alexandre Gustave Eiffel", ["Gustave Eiffel"])]}]
    got = reading_questions_from(rows, _phraser(), random.Random(0), phrasings=2)
    assert got and {g.answer for g in got} == {"Gustave Eiffel"}
    assert len({g.question for g in got}) == len(got)              # distinct phrasings only


def test_documents_of_reads_supporting_documents_and_names_a_bad_line(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text(json.dumps({"question": "q", "support": {"document": "falcon_9"}}) + "\n\n{oops\n")
    with pytest.raises(InvalidInput, match=r"q\.jsonl:3: not JSON"):
        documents_of(p)
    p.write_text(json.dumps({"question": "q", "support": {"document": "falcon_9"}}) + "\n")
    assert documents_of(p) == {"falcon_9"}
