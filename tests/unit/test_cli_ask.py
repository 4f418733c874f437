"""What `kgqa ask` prints after the answer: the fallbacks (steps off by design said once, real ones
listed) and the Neo4j Browser link of the trace, read back the way Neo4j Browser 5 reads its address."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, unquote, urlsplit

import pytest

from kgqa.app.cli.ask import fallback_lines
from kgqa.core.config import Settings
from kgqa.core.errors import InvalidInput
from kgqa.core.result import Answer, Fallback, RoleCost
from kgqa.core.trace import browser_cypher, browser_url
from tests.conftest import assert_one_line_error, run_kgqa

TRACE = "0123456789abcdef"


def _answer(codes: list[str], chat_calls: int = 0) -> Answer:
    cost = {"encoder": RoleCost(calls=7)} | ({"chat": RoleCost(calls=chat_calls)} if chat_calls else {})
    return Answer(question="q?", answer="a", method="vispath", cost=cost,
                  fallbacks=[Fallback(c, f"step {i}: {c}") for i, c in enumerate(codes)])


# --------------------------------------------------------------------------- fallbacks
def test_steps_off_by_design_are_one_line_not_a_list_of_fallbacks():
    assert fallback_lines(_answer(["off"] * 15)) == ["graph-only (no LLM step asked)"]
    assert fallback_lines(_answer(["graph_only"] * 13)) == ["graph-only (no LLM step asked)"]   # KGQA_CHAT_BACKEND=none
    assert fallback_lines(_answer([])) == []


def test_some_steps_asked_the_others_off_says_how_many_were_not_asked():
    assert fallback_lines(_answer(["off"] * 3, chat_calls=4)) == [
        "not asked by design: 3 step(s), by code off 3 (each took its graph-only fallback)"]


def test_real_fallbacks_are_still_listed_with_their_codes_and_messages():
    lines = fallback_lines(_answer(["off", "schema", "off", "empty", "schema"]))
    assert lines == ["graph-only (no LLM step asked)",
                     "fallbacks taken: 3, by code schema 2, empty 1 (step 1: schema; step 3: empty; step 4: schema)"]
    many = fallback_lines(_answer(["declined"] * 6, chat_calls=2))
    assert many == ["fallbacks taken: 6, by code declined 6 (step 0: declined; step 1: declined; step 2: declined; "
                    "step 3: declined …)"]


# --------------------------------------------------------------------------- the Browser link
def browser_reads(url: str) -> dict:
    """What Neo4j Browser 5 takes from its address: ``dbms``/``db`` through URLSearchParams; the editor's
    content: ``+`` made a space, the whole address decoded once, every ``arg`` up to ``&``/``#``, joined by
    new lines (neo4j-browser's populateEditorFromUrlEpic and getUrlParamValue)."""
    params = parse_qs(urlsplit(url).query)
    decoded = unquote(url.replace("+", " "))
    return {"dbms": params.get("dbms"), "db": params.get("db"),
            "cmd": re.findall(r"[?&]cmd=([^&#]*)", decoded),
            "editor": "\n".join(re.findall(r"[?&]arg=([^&#]*)", decoded))}


def test_the_browser_link_fills_in_the_server_and_the_trace_query():
    s = Settings(neo4j_uri="bolt://127.0.0.1:7687", neo4j_http_port=7474, neo4j_username="neo4j",
                 neo4j_database="neo4j")
    url = browser_url(s, TRACE)
    assert url.startswith("http://127.0.0.1:7474/browser/?")
    got = browser_reads(url)
    assert got == {"dbms": ["bolt://neo4j@127.0.0.1:7687"], "db": ["neo4j"], "cmd": ["edit"],
                   "editor": browser_cypher(TRACE)}
    # one token a terminal makes a link of: no space, no character a URL may not hold unencoded
    assert re.fullmatch(r"[A-Za-z0-9%:/?&=+._~()',*@\-]+", url), url


def test_the_browser_link_of_another_server_user_and_database():
    s = Settings(neo4j_uri="neo4j+s://kg.example.org:7688", neo4j_http_port=8474, neo4j_username="reader",
                 neo4j_database="wiki")
    url = browser_url(s, TRACE)
    assert url.startswith("http://kg.example.org:8474/browser/?")
    assert browser_reads(url)["dbms"] == ["neo4j+s://reader@kg.example.org:7688"]
    assert browser_reads(url)["db"] == ["wiki"]
    v6 = browser_url(Settings(neo4j_uri="bolt://[::1]:7687", neo4j_http_port=7474, neo4j_username="a b"),
                     TRACE)
    assert v6.startswith("http://[::1]:7474/browser/?")
    assert browser_reads(v6)["dbms"] == ["bolt://[::1]:7687"]      # a user name Browser would misread: left out


def test_the_browser_link_refuses_a_malformed_trace_id():
    with pytest.raises(InvalidInput, match="not a kgqa trace id"):
        browser_url(Settings(), "x' OR 1=1")


def test_a_query_holding_an_ampersand_would_be_cut_by_browser_and_is_refused(monkeypatch):
    monkeypatch.setattr("kgqa.core.trace.browser_cypher", lambda trace_id: "RETURN 'a & b'")
    with pytest.raises(ValueError, match="no '&' or '#'"):
        browser_url(Settings(), TRACE)


def test_trace_open_checks_the_id_before_connecting():
    p = run_kgqa("trace", "open", "zzz", env={"NEO4J_URI": "bolt://127.0.0.1:9", "KGQA_NEO4J_TIMEOUT_S": "2"},
                 timeout=60)
    assert_one_line_error(p, "trace id 'zzz' is not a kgqa trace id", code=2)
