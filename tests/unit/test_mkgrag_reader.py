"""The rule reader of mKG-RAG (kgqa.methods.mkgrag.rule_reader) with the real all-MiniLM-L6-v2 encoder: answer
types from the wh-word and type noun, a fact only in a table answered from the table with its row as
the supporting sentence, an unanswerable question abstained on, and the question's own words never
returned as the answer. Questions and text here are invented, not the bundled set's."""

from __future__ import annotations

import numpy as np
import pytest

from kgqa.methods.mkgrag.answer_types import answer_type
from kgqa.methods.mkgrag.reading import ReadRequest
from kgqa.methods.mkgrag.records import Chunk, Document, Element
from kgqa.methods.mkgrag.rule_reader import RuleReader


def read(question, chunks, elements, embed, *, documents=(), image_note=None, debug=False):
    """The rule reader over chunks given as their Cypher rows and stage 1's ``documents`` (the first: the subject)."""
    req = ReadRequest(question, [Chunk.from_row(c) for c in chunks], list(elements), list(documents),
                      image_note=image_note)
    return RuleReader(embed, debug=debug).read(req)


@pytest.fixture(scope="module")
def embed():
    from kgqa.core.config import Settings
    from kgqa.models.encoder import get_encoder

    s = Settings()
    enc = get_encoder(s.encoder_model, device="cpu", threads=1)

    def f(texts):
        v = np.asarray(enc.encode(list(texts)), dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)
    return f


BRIDGE = {"id": "glass_bridge#c0", "doc_id": "glass_bridge", "title": "Glass Bridge", "sections": ["Overview", "Records"],
          "text": "Overview\nThe Glass Bridge is a footbridge over the river Lune in Northbury, designed by the engineer "
                  "Mara Quell. It opened on 3 May 2011.\n\nRecords\n| Year | Visitors | Operator |\n|---|---|---|\n"
                  "| 2019 | 410,000 | Lune Trust |\n| 2020 | 120,000 | Lune Trust |"}


@pytest.mark.parametrize("question,expected", [
    ("In what year was the treaty signed?", "year"),
    ("When did the ship sink?", "date"),
    ("How many moons does the planet have?", "count"),
    ("How long is the canal?", "quantity"),
    ("Who wrote the novel?", "person"),
    ("Where did the painter die?", "place"),
    ("Which company built the locomotive?", "organisation"),
    ("In which city is the museum?", "place"),
    ("What is the dish shown here called in Italian?", "name"),
    ("What is the length of the river?", "quantity"),
])
def test_answer_type_from_wh_word_and_type_noun(question, expected):
    assert answer_type(question)[0] == expected


def test_a_fact_only_in_a_table_is_answered_from_the_table(embed):
    r = read("How many visitors did the Glass Bridge have in 2020?", [BRIDGE], [], embed,
             documents=[Document("glass_bridge", "Glass Bridge", 0.7)])
    assert r.answer == "120,000"
    assert r.candidate.sentence == "Year: 2020; Visitors: 120,000; Operator: Lune Trust"    # the row, cited
    assert r.candidate.chunk_id == "glass_bridge#c0" and r.candidate.heading == "Records"


def test_prose_answers_carry_their_sentence(embed):
    r = read("Who designed the Glass Bridge?", [BRIDGE], [], embed, documents=[Document("glass_bridge", "Glass Bridge", 0.0)])
    assert r.answer == "Mara Quell" and "designed by the engineer Mara Quell" in r.candidate.sentence
    r = read("On what date did the Glass Bridge open?", [BRIDGE], [], embed)
    assert r.answer == "3 May 2011"


def test_a_question_whose_answer_is_in_no_document_abstains(embed):
    r = read("Who painted the ceiling of the Sistine Chapel?", [BRIDGE], [], embed)
    assert r.answer is None and "abstained" in r.reason


def test_nothing_of_the_asked_type_abstains(embed):
    r = read("How tall is the Glass Bridge?", [{**BRIDGE, "text": "The Glass Bridge is painted green."}], [], embed)
    assert r.answer is None


def test_the_question_s_own_words_are_not_the_answer(embed):
    r = read("Which river does the Glass Bridge cross in Northbury?", [BRIDGE], [], embed,
             documents=[Document("glass_bridge", "Glass Bridge", 0.0)])
    assert r.answer == "Lune"


def test_the_relation_phrase_of_a_graph_edge_picks_the_tail_the_question_asks_for(embed):
    sent = "Varnholm is an island in the Grey Sea whose main town is Skarby."
    chunk = {"id": "varnholm#c0", "doc_id": "varnholm", "title": "Varnholm", "sections": ["Overview"],
             "text": f"Overview\n{sent}"}

    def edge(tail, phrase):
        return Element("relation", f"r-{tail}", "varnholm", f"relation: Varnholm -> {tail}: {sent}", 0.5,
                       ["varnholm#c0"], name=f"Varnholm -> {tail}", phrase=phrase)

    g = [edge("Grey Sea", "is an island in"), edge("Skarby", "is an island in whose main town is")]
    q = "What is the main town of Varnholm?"
    with_graph = read(q, [chunk], g, embed, documents=[Document("varnholm", "Varnholm", 0.0)], debug=True)
    chunks_only = read(q, [chunk], [], embed, documents=[Document("varnholm", "Varnholm", 0.0)], debug=True)
    assert with_graph.answer == "Skarby"
    score = {c.text: c.score for c in with_graph.debug}
    base = {c.text: c.score for c in chunks_only.debug}
    # the edge whose phrase holds the question's relation words ("main town") lifts its tail, not the other one
    assert score["Skarby"] - base["Skarby"] > score["Grey Sea"] - base["Grey Sea"] + 0.5


def test_what_the_image_shows_must_be_where_the_answer_is_read(embed):
    denmark = {"id": "dk#c0", "doc_id": "dk", "title": "Flag of Denmark", "sections": ["Design"],
               "text": "Design\nThe flag is red with a white cross. It is called the Dannebrog."}
    japan = {"id": "jp#c0", "doc_id": "jp", "title": "Flag of Japan", "sections": ["Names"],
             "text": "Names\nThe flag is officially called Nisshoki."}
    r = read("What is the name of the flag shown in this image?", [japan, denmark], [], embed, image_note="Denmark",
             documents=[Document("jp", "Flag of Japan", 0.0), Document("dk", "Flag of Denmark", 0.0)])
    assert r.answer == "Dannebrog" and r.candidate.doc_id == "dk"
