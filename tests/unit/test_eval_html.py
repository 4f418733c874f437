"""``kgqa eval --report DIR``'s page (kgqa.app.eval.html): what a reader of the page relies on."""

from __future__ import annotations

import re

from kgqa.app.eval.html import render_html
from kgqa.app.eval.records import QuestionResult
from kgqa.app.eval.report import build_report


def _report(method: str, wrong_ids: set[str]) -> dict:
    rows = []
    for i, hops in enumerate([1, 1, 2, 2, 3]):
        qid = f"q{i}"
        bad = qid in wrong_ids
        rows.append(QuestionResult(id=qid, hops=hops, question=f"Question <{qid}> & more?", gold="Paris",
                                   prediction="Lyon" if bad else "Paris", exact_match=not bad, sbert=not bad,
                                   start_entity=True, gold_path=True, selected=not bad,
                                   why_wrong="retained_not_selected" if bad else None,
                                   trace_id=f"{i:016x}" if bad else None, seconds=1.0))
    return build_report(rows, questions_file="qs.jsonl", method=method)


def test_the_page_shows_per_hop_bars_for_the_method_and_the_baseline():
    page = render_html({"vispath": _report("vispath", {"q4"})}, questions_file="qs.jsonl",
                       baseline=_report("grasp", {"q2", "q3", "q4"}))
    assert "vispath · 80.0 % of 5" in page and "baseline: grasp · 40.0 % of 5" in page      # all questions
    assert "vispath · 0.0 % of 1" in page and "baseline: grasp · 0.0 % of 2" in page        # 3-hop, 2-hop
    for h in ("1-hop", "2-hop", "3-hop"):
        assert f">{h}</div>" in page


def test_each_wrong_question_is_listed_with_its_cause_and_trace_link():
    page = render_html({"vispath": _report("vispath", {"q1", "q4"})}, questions_file="qs.jsonl",
                       link=lambda t: f"http://127.0.0.1:7474/browser/?trace={t}")
    assert "vispath: 2 wrong" in page
    assert 'href="http://127.0.0.1:7474/browser/?trace=0000000000000001"' in page
    assert 'href="http://127.0.0.1:7474/browser/?trace=0000000000000004"' in page
    assert page.count("gold path retained, another chosen") == 1 + 2        # the breakdown row, two questions
    assert ">q0<" not in page                                                # right answers are not listed


def test_the_page_is_self_contained_and_escapes_question_text():
    page = render_html({"m": _report("m", {"q0"})}, questions_file="<qs>.jsonl")
    assert "<script" not in page and not re.search(r"""(src|href)=["']?(https?:|//|file:)""", page)
    assert "Question &lt;q0&gt; &amp; more?" in page and "<q0>" not in page
    assert "no trace (run with --traces)" in page                            # no Browser address to link to
