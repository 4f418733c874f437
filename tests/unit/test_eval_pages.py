"""``kgqa eval`` with pages in ``support`` (issue 59): the question file takes a page or a page range, evidence
recall checks the page, and the report gives the share of right answers cited on their supporting page, in the
table, the JSON and the HTML page. The answers are built by hand (no services); the real load-and-eval is in
tests/integration/test_pdf.py."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from kgqa.app.eval.html import render_html
from kgqa.app.eval.questions import load_questions
from kgqa.app.eval.report import render_tables
from kgqa.app.eval.runner import evaluate
from kgqa.core.errors import InvalidInput
from kgqa.core.result import CHUNK_SECTIONS, DOCUMENT_IDS, Answer, ChunkEvidence


def write(tmp_path, rows):
    p = tmp_path / "qs.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def q(i, answer, **support):
    return {"id": f"q{i}", "question": f"Question {i}?", "answer": answer, "support": {"document": "guide", **support}}


def test_support_takes_a_page_or_a_page_range(tmp_path):
    qs, _ = load_questions(write(tmp_path, [q(1, "a", page=12), q(2, "b", pages=[12, 13]), q(3, "c")]))
    assert [x.support.page_range for x in qs] == [(12, 12), (12, 13), None]


@pytest.mark.parametrize("support, why", [
    ({"page": 0}, r"support\.page: .*greater than or equal to 1"),
    ({"pages": [13, 12]}, r"support\.pages: .*1 <= first <= last"),
    ({"pages": [12]}, r"support\.pages"),
    ({"page": 3, "pages": [3, 4]}, r"support: give page or pages, not both"),
    ({"folio": 3}, r"support\.folio: Extra inputs are not permitted"),
])
def test_a_bad_page_is_one_line_naming_the_line(tmp_path, support, why):
    with pytest.raises(InvalidInput, match=r"qs\.jsonl:1: " + why):
        load_questions(write(tmp_path, [q(1, "a", **support)]))


class Guide:
    """Answers as mKG-RAG gives them for a PDF: the context's chunks as evidence, the cited one with its sentence
    and the page it is on."""

    def __init__(self, replies):
        self.replies = replies

    def answer(self, question, image=None, entity_id=None):
        text, page = self.replies[question]
        ev = [ChunkEvidence("guide#c0", "guide", "…", pages=[1, 2], page=1),
              ChunkEvidence("guide#c1", "guide", "…", pages=[3, 4], page=page, sentence="It opened in 1889."
                            if text else None)]
        return Answer(question=question, answer=text, method="mkgrag", evidence=ev,
                      details={DOCUMENT_IDS: ["guide"], CHUNK_SECTIONS: [
                          {"id": "guide#c0", "doc_id": "guide", "sections": ["Overview"]},
                          {"id": "guide#c1", "doc_id": "guide", "sections": ["History"]}]})


class NoEncoder:
    def encode(self, texts):
        import numpy as np

        return np.ones((len(texts), 4), dtype=np.float32)


def test_cited_page_accuracy_counts_right_answers_with_a_page_only(tmp_path):
    qs, _ = load_questions(write(tmp_path, [
        q(1, "1889", page=3),            # right, cited on p. 3: right
        q(2, "1889", pages=[4, 5]),      # right, cited on p. 3, printed on 4-5: wrong page
        q(3, "1889", page=3),            # wrong answer: not counted
        q(4, "1889"),                    # no page: not counted
        q(5, "1889", page=9)]))          # right, no context chunk on p. 9: page wrong, evidence not recalled
    guide = Guide({"Question 1?": ("1889", 3), "Question 2?": ("1889", 3), "Question 3?": ("1890", 3),
                   "Question 4?": ("1889", 3), "Question 5?": ("1889", 3)})
    rep = evaluate(qs, guide, NoEncoder(), questions_file="qs.jsonl", method="mkgrag")
    m = rep["overall"]
    assert m["cited_page"] == {"correct": 1, "n": 3, "accuracy": 1 / 3}
    assert [x["cited_page"] for x in rep["questions"]] == [True, False, None, None, False]
    assert [x["evidence_recall"] for x in rep["questions"]] == [True, True, True, True, False]
    out = io.StringIO()
    render_tables(rep, Console(file=out, width=200))
    assert "cited page right 33.3 (1/3 right answers with a supporting page)" in out.getvalue()
    assert json.loads(json.dumps(rep))["overall"]["cited_page"]["n"] == 3        # the JSON of --json
    page = render_html({"mkgrag": rep}, questions_file="qs.jsonl")
    assert "cited page right" in page and "33.3 % (1/3)" in page and "document recall@Kd" in page
