"""``kgqa serve`` as a user runs it: a real uvicorn process on the real Neo4j, the real encoder and
the reference-image grounder, over the VisPath fixture KG, graph-only chat (KGQA_CHAT_BACKEND=none,
so that no LLM makes the run slow; the pipeline is the same).

One server for the module: token set, queue 1 (so that a second concurrent question is refused),
1 MB upload limit, a 3 s read deadline and 8 connections at most.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import KGQA, VISPATH_KG, free_port, running_serve

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TOKEN = "test-token-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PHOTO = VISPATH_KG / "photos"
READ_TIMEOUT_S = 3
MAX_CONNECTIONS = 8


@pytest.fixture(scope="module")
def server(kg, tmp_path_factory):
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "KGQA_API_TOKEN": TOKEN, "KGQA_CHAT_BACKEND": "none",
           "KGQA_SERVE_READ_TIMEOUT_S": str(READ_TIMEOUT_S), "KGQA_SERVE_MAX_CONNECTIONS": str(MAX_CONNECTIONS)}
    env.pop("KGQA_DEBUG", None)
    with running_serve(["--queue", "1", "--max-upload-mb", "1", "--timeout", "300", "--log-level", "warning"],
                       env, AUTH, log) as (base, _):
        yield base, log


def _photo() -> Path:
    return next(p for p in sorted(PHOTO.iterdir()) if p.suffix.lower() in (".jpg", ".jpeg", ".png"))


def test_ask_with_an_image_upload_returns_the_cli_answer_json_with_a_stored_trace(server, graph):
    from kgqa.core.result import Answer

    base, _ = server
    photo = _photo()
    before = graph._run("MATCH (n) WHERE NOT n:Question AND NOT n:Path AND NOT n:Subgraph "
                        "RETURN count(n) AS n", {}, write=False)[0]["n"]
    with open(photo, "rb") as fh:
        r = httpx.post(f"{base}/ask", headers=AUTH, timeout=300,
                       data={"question": "Which company manufactures the rocket shown in the image?"},
                       files={"image": (photo.name, fh, "image/jpeg")})
    assert r.status_code == 200, r.text
    a = r.json()
    assert set(a) == {f.name for f in dataclasses.fields(Answer)}  # the Answer of `kgqa ask --json`
    assert re.fullmatch(r"[0-9a-f]{16}", a["trace_id"]) and f"'{a['trace_id']}'" in a["browser_cypher"]
    assert a["method"] == "vispath" and a["start_entity_id"]
    assert any(f["code"] == "graph_only" for f in a["fallbacks"])  # the chat setting the server runs

    t = httpx.get(f"{base}/traces/{a['trace_id']}", headers=AUTH, timeout=30)
    assert t.status_code == 200
    assert t.json()["question"]["text"] == "Which company manufactures the rocket shown in the image?"
    assert t.json()["question"]["answer"] == a["answer"]
    # the reasoning only read the KG: the trace nodes are the only new nodes
    after = graph._run("MATCH (n) WHERE NOT n:Question AND NOT n:Path AND NOT n:Subgraph "
                       "RETURN count(n) AS n", {}, write=False)[0]["n"]
    assert after == before


def test_reads_are_read_transactions_that_neo4j_refuses_to_write_in(graph):
    from neo4j.exceptions import ClientError

    with pytest.raises(ClientError, match="(?i)read"):
        graph._run("CREATE (:ServeProbe)", {}, write=False)  # Graph.read's access mode is enforced


def test_without_the_token_401(server):
    base, _ = server
    for headers in ({}, {"Authorization": "Bearer nope"}):
        r = httpx.post(f"{base}/ask", json={"question": "Where was Elon Musk born?"}, headers=headers, timeout=30)
        assert r.status_code == 401 and r.json()["code"] == "unauthorized"
        assert httpx.get(f"{base}/health", headers=headers, timeout=30).status_code == 401


def test_an_oversized_upload_is_413_and_the_server_keeps_answering(server):
    base, _ = server
    r = httpx.post(f"{base}/ask", headers=AUTH, timeout=60, data={"question": "What is shown?"},
                   files={"image": ("big.jpg", b"\xff\xd8" + os.urandom(2 * 1024 * 1024), "image/jpeg")})
    assert r.status_code == 413 and r.json()["code"] == "too_large"
    assert httpx.get(f"{base}/health", headers=AUTH, timeout=30).status_code == 200


@pytest.mark.parametrize("body,fragment", [
    ({"question": "q" * 3000}, "over the 2,000-character limit"),
    ({"question": "Where?", "options": {"M1": "many"}}, "vispath option M1='many'"),
    ({"question": "Where?", "entity_id": "Q999999999"}, "no such entity in the graph"),
])
def test_bad_input_is_400_with_the_cli_message(server, body, fragment):
    base, _ = server
    r = httpx.post(f"{base}/ask", json=body, headers=AUTH, timeout=120)
    assert r.status_code == 400, r.text
    assert r.json()["code"] == "bad_input" and fragment in r.json()["message"]


def test_a_second_concurrent_question_gets_503_with_retry_after_not_a_hung_socket(server):
    base, _ = server
    out = []

    def ask(i):
        r = httpx.post(f"{base}/ask", headers=AUTH, timeout=300,
                       json={"question": f"Who manufactures the Falcon 9 rocket? ({i})", "entity_id": "Q741925"})
        out.append(r)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    codes = sorted(r.status_code for r in out)
    assert len(out) == 3 and codes[0] == 200 and 503 in codes, codes
    for r in out:
        if r.status_code == 503:
            assert r.json()["code"] == "queue_full" and int(r.headers["retry-after"]) >= 1


def test_health_methods_and_openapi(server):
    base, _ = server
    h = httpx.get(f"{base}/health", headers=AUTH, timeout=30).json()
    assert h["ok"] is True and {c["name"] for c in h["checks"]} >= {"neo4j", "schema"}
    assert h["models"]["chat"]["backend"] == "none" and h["auth"] is True
    assert "vispath" in [m["name"] for m in httpx.get(f"{base}/methods", headers=AUTH, timeout=30).json()]
    doc = httpx.get(f"{base}/openapi.json", headers=AUTH, timeout=30).json()
    assert "/ask" in doc["paths"]


def test_serve_with_neo4j_down_is_one_line_exit_3():
    p = subprocess.run([KGQA, "serve", "--port", str(free_port())], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "NEO4J_URI": "bolt://127.0.0.1:9", "KGQA_NEO4J_TIMEOUT_S": "2"})
    assert p.returncode == 3 and p.stderr.strip().startswith("kgqa: error: Neo4j is not reachable")
    assert len(p.stderr.strip().splitlines()) == 1


def _raw(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _until_closed(s: socket.socket, timeout: float) -> tuple[bytes, float]:
    t0, data = time.monotonic(), b""
    s.settimeout(timeout)
    try:
        while chunk := s.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data, time.monotonic() - t0


def test_slow_clients_are_dropped_at_the_read_deadline_and_over_the_cap_get_503(server):
    base, _ = server
    slow = []
    for _ in range(MAX_CONNECTIONS):       # headers and 3 bytes of a declared 1,000-byte body
        s = _raw(base)
        s.sendall(f"POST /ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                  "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"q".encode())
        slow.append(s)
    time.sleep(0.5)
    over = _raw(base)                      # over the cap: a request other than /health is refused
    over.sendall(f"GET /methods HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode())
    data, _ = _until_closed(over, 30)
    assert data.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in data.lower(), data[:300]
    health = _raw(base)                    # ... and a health check still tells the truth while the slots are full
    health.sendall(f"GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
                   .encode())
    data, _ = _until_closed(health, 30)
    assert data.startswith(b"HTTP/1.1 200"), data[:300]
    for s in slow:
        data, took = _until_closed(s, READ_TIMEOUT_S + 30)
        s.close()
        assert data.startswith(b"HTTP/1.1 408"), data[:300]
        assert took < READ_TIMEOUT_S + 10
    r = httpx.get(f"{base}/health", headers=AUTH, timeout=60)   # the slots are free again
    assert r.status_code == 200


def test_the_trailing_slash_redirect_never_takes_its_location_from_host(server):
    base, _ = server
    r = httpx.get(f"{base}/traces/abc/", headers={**AUTH, "Host": "evil.example"}, follow_redirects=False, timeout=30)
    assert r.status_code == 307
    assert r.headers["location"] == "/traces/abc", r.headers
