"""``kgqa serve`` while its Neo4j dies, and while a writer loads (issue 36). One real ``kgqa serve`` over the
VisPath fixture KG (graph-only chat), questions asked by several clients at once:

* kill -9 of the Neo4j process while the questions run: every reply is a 200 answer or a 503
  ``graph_unavailable`` with a one-line message (never a 500, a hung socket or a dead server), ``/health``
  says 503 while Neo4j is down; after ``kgqa neo4j start`` the same server answers the same question
  the same way, without a restart of its own;
* a ``kgqa load documents`` (a writer, holding the database's writer lock) while the questions run: the
  readers are not held up or refused, their answers do not change, and the load ends complete."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import httpx
import pytest

from tests.conftest import KGQA, REPO, VISPATH_KG, run_kgqa, running_serve
from tests.faults.test_kill_neo4j import _count, _doc_state, _restart

pytestmark = pytest.mark.faults

TOKEN = "faults-token-36"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
QUESTION = "Which company manufactures the rocket shown in the image?"
CLIENTS = 4


def _photo():
    return next(p for p in sorted((VISPATH_KG / "photos").iterdir()) if p.suffix.lower() in (".jpg", ".jpeg", ".png"))


@pytest.fixture(scope="module")
def serve(graph, server, tmp_path_factory):
    from tests.faults.test_kill_neo4j import _wipe

    _wipe(graph)
    p = run_kgqa("load", "wikidata5m", "--path", str(VISPATH_KG), "--json")
    assert p.returncode == 0, p.stderr
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "KGQA_API_TOKEN": TOKEN, "KGQA_CHAT_BACKEND": "none", "KGQA_NEO4J_TIMEOUT_S": "5"}
    env.pop("KGQA_DEBUG", None)
    try:
        with running_serve(["--queue", "16", "--timeout", "300", "--log-level", "warning"], env, AUTH, log) as (
                base, proc):
            yield base, proc, log
    finally:
        if server.status().running:
            _wipe(graph)


def _ask(base: str) -> httpx.Response:
    photo = _photo()
    with open(photo, "rb") as fh:
        return httpx.post(f"{base}/ask", headers=AUTH, timeout=120, data={"question": QUESTION},
                          files={"image": (photo.name, fh, "image/jpeg")})


class Clients:
    """CLIENTS threads asking QUESTION again and again until stopped; every reply (status, json) is kept."""

    def __init__(self, base: str):
        self.base, self.replies, self.stop = base, [], threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(CLIENTS)]

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                r = _ask(self.base)
                self.replies.append((r.status_code, r.json()))
            except httpx.HTTPError as e:            # a hung or dropped connection: what must never happen
                self.replies.append((None, {"exception": repr(e)}))

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(180)


def _one_line_503(body: dict) -> None:
    assert body.get("code") == "graph_unavailable", body
    assert "\n" not in body["message"] and "Traceback" not in body["message"], body


def test_neo4j_killed_while_serve_answers_then_it_answers_again_after_a_restart(serve, server):
    base, proc, log = serve
    first = _ask(base)
    assert first.status_code == 200, first.text
    answer = first.json()["answer"]
    with Clients(base) as clients:
        time.sleep(3)
        os.kill(server.status().pid, signal.SIGKILL)
        time.sleep(4)
        down = [_ask(base) for _ in range(2)]
        health = httpx.get(f"{base}/health", headers=AUTH, timeout=60)
    for r in down:
        assert r.status_code == 503, r.text
        _one_line_503(r.json())
    assert health.status_code == 503 and health.json()["ok"] is False
    statuses = [s for s, _ in clients.replies]
    print(f"{len(statuses)} replies while Neo4j was killed: {statuses.count(200)} × 200, {statuses.count(503)} × 503")
    assert None not in statuses, [b for s, b in clients.replies if s is None][:3]
    assert set(statuses) <= {200, 503}, [(s, b) for s, b in clients.replies if s not in (200, 503)][:3]
    for s, body in clients.replies:
        if s == 503:
            _one_line_503(body)
        else:
            assert body["answer"] == answer
    assert proc.poll() is None, "kgqa serve died with its Neo4j"
    _restart(server)
    deadline = time.monotonic() + 120
    while httpx.get(f"{base}/health", headers=AUTH, timeout=60).status_code != 200:
        assert time.monotonic() < deadline, "kgqa serve never found its restarted Neo4j"
        time.sleep(1)
    again = _ask(base)
    assert again.status_code == 200, again.text
    assert again.json()["answer"] == answer
    assert httpx.get(f"{base}/traces/{again.json()['trace_id']}", headers=AUTH, timeout=30).status_code == 200
    assert "Traceback" not in log.read_text(errors="replace")


def test_a_load_while_serve_answers_holds_up_no_reader(serve, graph):
    base, proc, log = serve
    first = _ask(base)
    assert first.status_code == 200, first.text
    answer = first.json()["answer"]
    docs = REPO / "data" / "docs" / "corpus"
    env = {**os.environ, "KGQA_DOC_EXTRACTOR": "cpu", "KGQA_CHAT_BACKEND": "none"}
    env.pop("KGQA_DEBUG", None)
    with Clients(base) as clients:
        load = subprocess.run([KGQA, "load", "documents", str(docs), "--no-link", "--write-batch", "10", "--json"],
                              env=env, capture_output=True, text=True, timeout=900)
        during = len(clients.replies)
    assert load.returncode == 0, load.stderr[-2000:]
    print(f"{during} questions answered during the document load")
    assert during >= CLIENTS, f"only {during} questions answered during the load"
    assert [s for s, _ in clients.replies] == [200] * len(clients.replies), \
        [(s, b) for s, b in clients.replies if s != 200][:3]
    assert {b["answer"] for _, b in clients.replies} == {answer}
    state = _doc_state(graph)
    assert state["documents"] > 0 and state["complete"] == state["documents"]
    assert state["duplicates"] == state["orphan_chunks"] == 0
    assert _count(graph, "MATCH (e:Entity) RETURN count(e) AS n") > 0
    assert proc.poll() is None and "Traceback" not in log.read_text(errors="replace")
