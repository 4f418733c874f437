"""``kgqa serve``'s connection guard (kgqa.app.serve_guard) on a real uvicorn server over raw sockets, and
the trailing-slash redirect of the real app (no Neo4j: the app's lifespan is not run).

* a client that declares a 1,000-byte body and sends 3 bytes is answered 408 and dropped at the deadline;
* so is one that trickles its headers, and one that connects and sends nothing;
* a connection over the cap gets 503 with Retry-After while the open ones are still served;
* ``Host: evil.example`` never reaches a ``Location``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time

import pytest

from tests.conftest import free_port

DEADLINE_S = 1.0
CAP = 3


async def _echo(scope, receive, send):
    """A tiny ASGI app: reads the whole body, answers its length."""
    if scope["type"] == "lifespan":
        while True:
            msg = await receive()
            if msg["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    n = 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            return
        n += len(msg.get("body", b""))
        if not msg.get("more_body"):
            break
    body = str(n).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


@contextlib.contextmanager
def serving_guarded(*limits, host: str = "127.0.0.1"):
    """``_echo`` on a real uvicorn with the guard configured with ``limits`` (``serve_guard.configure``'s
    arguments); yields the port."""
    import uvicorn

    from kgqa.app import serve_guard

    saved = serve_guard.limits()
    serve_guard.configure(*limits)
    port = free_port()
    config = uvicorn.Config(_echo, host=host, port=port, log_level="error",
                            http="kgqa.app.serve_guard:GuardedH11Protocol", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(10)
        serve_guard.configure(**saved)


@pytest.fixture(scope="module")
def guarded():
    with serving_guarded(DEADLINE_S, CAP) as port:
        yield port


def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def _read_all(s: socket.socket, timeout: float) -> tuple[bytes, float]:
    """Everything the server sends until it closes; (bytes, seconds it took)."""
    t0 = time.monotonic()
    s.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pytest.fail(f"the server kept the connection open for {timeout} s; got {data!r}")
    except ConnectionResetError:
        pass
    return data, time.monotonic() - t0


def test_a_declared_body_that_never_arrives_is_dropped_at_the_deadline_with_408(guarded):
    s = _connect(guarded)
    s.sendall(b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\nabc")
    data, took = _read_all(s, timeout=DEADLINE_S + 10)
    s.close()
    assert data.startswith(b"HTTP/1.1 408"), data
    assert b"KGQA_SERVE_READ_TIMEOUT_S" in data, data
    assert took < DEADLINE_S + 5, took


def test_trickled_headers_and_a_silent_connection_are_dropped_at_the_deadline(guarded):
    s = _connect(guarded)
    s.sendall(b"GET /x HTTP/1.1\r\nHo")
    data, took = _read_all(s, timeout=DEADLINE_S + 10)
    s.close()
    assert data.startswith(b"HTTP/1.1 408"), data
    silent = _connect(guarded)
    data, took = _read_all(silent, timeout=DEADLINE_S + 10)
    silent.close()
    assert took < DEADLINE_S + 5, took


def test_a_whole_request_is_answered_and_keep_alive_still_works(guarded):
    s = _connect(guarded)
    for _ in range(2):
        s.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
        s.settimeout(10)
        reply = b""
        while not reply.endswith(b"\r\n\r\n5"):             # headers and the one-byte body, in any packets
            chunk = s.recv(65536)
            assert chunk, reply
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200"), reply
    time.sleep(DEADLINE_S + 0.5)      # idle between requests: keep-alive's own timer, not a 408 on the wire
    s.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
    data, _ = _read_all(s, timeout=10)
    s.close()
    assert data in (b"",) or data.startswith(b"HTTP/1.1 200"), data
    assert b"408" not in data


def test_a_connection_over_the_cap_gets_503_with_retry_after_and_the_open_ones_are_served(guarded):
    held = [_connect(guarded) for _ in range(CAP)]
    for h in held:
        h.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n")   # headers, no body yet
    time.sleep(0.2)
    extra = _connect(guarded)
    extra.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")
    data, _ = _read_all(extra, timeout=DEADLINE_S + 10)
    extra.close()
    assert data.startswith(b"HTTP/1.1 503"), data
    head = data.split(b"\r\n\r\n", 1)[0].lower()
    assert b"retry-after: 1" in head and b"connection: close" in head, head
    assert b"too_many_connections" in data
    held[0].sendall(b"ping")                                    # an admitted connection finishes its request
    held[0].settimeout(10)
    assert held[0].recv(65536).startswith(b"HTTP/1.1 200")
    for h in held:
        h.close()
    time.sleep(0.3)
    again = _connect(guarded)                                   # the slots are free again
    again.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data, _ = _read_all(again, timeout=10)
    again.close()
    assert data.startswith(b"HTTP/1.1 200"), data


def test_the_trailing_slash_redirect_is_relative_never_built_from_host():
    from fastapi.testclient import TestClient

    from kgqa.app.serve import create_app
    from kgqa.core.config import Settings

    from kgqa.app import serve_guard

    saved = serve_guard.limits()
    app = create_app(Settings(api_token="t0k"))       # no `with`: the lifespan (Neo4j, models) does not run
    serve_guard.configure(**saved)                    # create_app set the worker's limits: the fixture's again
    client = TestClient(app, base_url="http://evil.example")
    r = client.get("/traces/abc/?x=1", headers={"Authorization": "Bearer t0k", "Host": "evil.example"},
                   follow_redirects=False)
    assert r.status_code == 307, r.text
    assert r.headers["location"] == "/traces/abc?x=1"
    assert "evil" not in r.headers["location"]
    r = client.get("//evil.example/", headers={"Authorization": "Bearer t0k"}, follow_redirects=False)
    assert r.status_code == 404 and "location" not in r.headers
    r = client.get("/nothing-here/", headers={"Authorization": "Bearer t0k"}, follow_redirects=False)
    assert r.status_code == 404 and r.json()["code"] == "not_found"


def test_the_cli_settings_hold_the_limits(monkeypatch):
    from kgqa.core.config import Settings

    monkeypatch.setenv("KGQA_SERVE_READ_TIMEOUT_S", "7.5")
    monkeypatch.setenv("KGQA_SERVE_MAX_CONNECTIONS", "9")
    s = Settings()
    monkeypatch.setenv("KGQA_SERVE_HEADER_TIMEOUT_S", "2.5")
    monkeypatch.setenv("KGQA_SERVE_MAX_CONNECTIONS_PER_CLIENT", "4")
    s = Settings()
    assert (s.serve_read_timeout_s, s.serve_max_connections) == (7.5, 9)
    assert (s.serve_header_timeout_s, s.serve_max_connections_per_client) == (2.5, 4)
    guard = __import__("kgqa.app.serve_guard", fromlist=["x"])
    assert asyncio.iscoroutinefunction(guard._over_capacity(_echo, "full"))


def test_a_half_sent_pipelined_request_has_its_deadline_too(guarded):
    s = _connect(guarded)
    s.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi"
              b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc")
    data, took = _read_all(s, timeout=DEADLINE_S + 10)
    s.close()
    assert data.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 408" in data, data
    assert took < DEADLINE_S + 5
