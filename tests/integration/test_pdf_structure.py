"""A document's structure in every chunk (issue 59), on the real Neo4j with the real encoder, ranker and reader:
a multi-topic PDF guide whose sections say "the tower" is answered from the right topic and cited with the
topic's heading path, and ``kgqa eval`` takes the page in ``support`` and reports the cited page. The PDF is
typeset in the test (reportlab), as a user's tools write one."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_kgqa
from tests.pdfs import make_guide_pdf

pytestmark = [pytest.mark.integration]

ENV = {"KGQA_CHAT_BACKEND": "none", "KGQA_DOC_EXTRACTOR": "cpu"}
#: an overview long enough that each topic's "Design and construction" is a chunk of its own, which names its
#: tower only as "the tower": its topic is in its heading path, not in its text
VISITS = ["It is one of the most visited monuments that charge for entry in the world.",
          "Visitors climb the stairs to the first and second levels or take one of the lifts.",
          "Restaurants on the first and second levels serve lunch and dinner with a view over the city.",
          "At night thousands of lights make it sparkle for five minutes at the start of every hour.",
          "Its shape is recognised around the world and appears on stamps, posters and souvenirs."]


def guide(tmp_path, outline: bool):
    overview = lambda name, city: [f"The {name} is a lattice tower in {city}."] + [  # noqa: E731
        " ".join(f"{s[:-1]}, as the guides of {city} tell their groups on tour number {k}." for s in VISITS)
        for k in range(1, 5)]
    topics = [("Eiffel Tower", [("Overview", overview("Eiffel Tower", "Paris")),
                                ("Design and construction", ["The tower was designed by the engineers Maurice "
                                                             "Koechlin and Emile Nouguier."])]),
              ("Tokyo Tower", [("Overview", overview("Tokyo Tower", "Tokyo")),
                               ("Design and construction", ["The tower was designed by the architect Tachu "
                                                            "Naito."])])]
    d = tmp_path / ("outline" if outline else "plain")
    d.mkdir()
    return make_guide_pdf(d / "towers.pdf", "Towers of the world", topics, outline=outline)


@pytest.fixture(scope="module", params=[True, False], ids=["outline", "no-outline"])
def towers(request, demo_kg, tmp_path_factory):
    pdf = guide(tmp_path_factory.mktemp("towers"), request.param)
    run_kgqa("docs", "rm", "towers", env=ENV)          # the other parameter's guide (one id, another file)
    p = run_kgqa("load", "documents", str(pdf.parent), "--json", env=ENV)
    assert p.returncode == 0, p.stderr
    (row,) = demo_kg.read("docs_show", id="towers")
    yield pdf, row["chunks"]
    run_kgqa("docs", "rm", "towers", env=ENV)


def test_each_chunk_stores_its_heading_path_and_none_crosses_a_topic(towers):
    _, chunks = towers
    paths = {tuple(c["heading_path"]) for c in chunks}
    # the section level is kept (a chunk of one section carries it); a chunk that packs two sections of one
    # topic carries the topic (where the page breaks fall decides which sections share a chunk)
    assert ("Towers of the world", "Eiffel Tower", "Design and construction") in paths
    for needle, topic in (("Koechlin", "Eiffel Tower"), ("Tachu Naito", "Tokyo Tower")):
        (c,) = [c for c in chunks if needle in c["text"]]
        assert c["heading_path"][:2] == ["Towers of the world", topic], c["heading_path"]
    for c in chunks:
        other = "Tokyo" if "Eiffel Tower" in c["heading_path"] else "Eiffel"
        assert other not in c["text"]


def test_the_tower_is_answered_from_its_topic_and_cited_with_the_heading_path(towers):
    p = run_kgqa("ask", "Who designed the Eiffel Tower?", "--method", "mkgrag", "--json", env=ENV)
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    assert a["answer"] and "Koechlin" in a["answer"], a["stop_reason"]
    sup = a["details"]["support"]
    assert sup["citation"] == f"towers.pdf p. {sup['page']} \u00b7 Eiffel Tower \u203a Design and construction"
    p = run_kgqa("ask", "Who designed the Tokyo Tower?", "--method", "mkgrag", env=ENV)
    assert "answer: Tachu Naito" in p.stdout, p.stdout


def test_eval_takes_the_page_and_reports_the_cited_page(towers, tmp_path):
    pdf, chunks = towers
    page = next(c["page_start"] for c in chunks if "Koechlin" in c["text"])
    tokyo = next(c for c in chunks if "Tachu Naito" in c["text"])
    q = tmp_path / "qs.jsonl"
    q.write_text(json.dumps({"id": "t1", "question": "Who designed the Eiffel Tower?",
                             "answer": "Maurice Koechlin and Emile Nouguier", "aliases": ["Maurice Koechlin"],
                             "support": {"document": "towers", "page": page}}) + "\n"
                 + json.dumps({"id": "t2", "question": "Who designed the Tokyo Tower?", "answer": "Tachu Naito",
                               "support": {"document": "towers",
                                           "pages": [tokyo["page_start"], tokyo["page_end"]]}}) + "\n",
                 encoding="utf-8")
    p = run_kgqa("eval", str(q), "--method", "mkgrag", "--json", env=ENV)
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout)["overall"]
    assert m["exact_match"]["correct"] == 2 and m["cited_page"] == {"correct": 2, "n": 2, "accuracy": 1.0}
    p = run_kgqa("eval", str(q), "--method", "mkgrag", env=ENV)
    assert "cited page right 100.0 (2/2 right answers with a supporting page)" in p.stdout


def test_a_reload_of_the_unchanged_guide_says_unchanged(towers):
    pdf, _ = towers
    p = run_kgqa("load", "documents", str(pdf.parent), "--json", env=ENV)
    assert p.returncode == 0, p.stderr
    assert [d["status"] for d in json.loads(p.stdout)["documents"]] == ["unchanged"]
