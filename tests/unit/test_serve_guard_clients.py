"""Slow clients against ``kgqa serve``'s connection guard (issue 62, item 3): silent connections refilled as the
server closed them kept the connection cap full, and then /health was answered 0 of 74 times. Now a connection
that sends no headers is closed at the header deadline, one client holds at most its share of the slots, a client
holding none takes an idle slot from the heaviest client at the cap, and /health is answered over any limit
(tests/faults/test_hostile_client.py: the refill attack on the real server)."""

from __future__ import annotations

import socket
import time

import pytest

from tests.unit.test_serve_guard import _read_all, serving_guarded

HEADER_S, READ_S, CAP, PER_CLIENT = 0.5, 5.0, 8, 3


@pytest.fixture(scope="module")
def guarded():
    with serving_guarded(READ_S, CAP, HEADER_S, PER_CLIENT, host="0.0.0.0") as port:
        yield port


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0))


def _get(port: int, path: str, source: str = "127.0.0.1") -> bytes:
    s = _connect(port, source)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    data, _ = _read_all(s, timeout=10)
    s.close()
    return data


def test_a_silent_connection_is_closed_at_the_header_deadline_not_the_read_deadline(guarded):
    s = _connect(guarded)
    data, took = _read_all(s, timeout=READ_S + 5)
    s.close()
    assert data.startswith(b"HTTP/1.1 408") and b"KGQA_SERVE_HEADER_TIMEOUT_S" in data, data
    assert took < READ_S - 1, took


def test_one_client_holds_at_most_its_share_of_the_slots_and_health_is_answered_over_the_cap(guarded):
    attacker = [_connect(guarded, "127.0.0.2") for _ in range(3 * CAP)]     # silent, over every limit
    try:
        time.sleep(0.1)
        assert _get(guarded, "/x", "127.0.0.3").startswith(b"HTTP/1.1 200")  # another client is admitted
        over = _get(guarded, "/x", "127.0.0.2")
        assert over.startswith(b"HTTP/1.1 503") and b"KGQA_SERVE_MAX_CONNECTIONS_PER_CLIENT" in over, over
        assert _get(guarded, "/health", "127.0.0.2").startswith(b"HTTP/1.1 200")   # the health check, even so
    finally:
        for a in attacker:
            a.close()


def _closed(socks: list[socket.socket]) -> list[bool]:
    """Which of ``socks`` the server closed without a word (as a connection that gave its slot is closed)."""
    time.sleep(0.3)
    out = []
    for s in socks:
        s.setblocking(False)
        try:
            out.append(s.recv(1) == b"")
        except BlockingIOError:
            out.append(False)                   # open, nothing sent
        except OSError:
            out.append(True)
    return out


@pytest.fixture()
def patient():
    """The guard with deadlines far beyond the test: only the cap closes a connection here."""
    with serving_guarded(60.0, CAP, 60.0, PER_CLIENT, host="0.0.0.0") as port:
        yield port


def test_at_a_cap_full_of_silent_connections_a_client_holding_none_takes_an_idle_slot(patient):
    """The refill attack from many addresses: every slot silent. A client holding none is admitted in the slot of
    the heaviest client's oldest silent connection, which is closed; a client holding as many as the others does
    not (a slot moves only to a client holding two fewer: refills at the cap settle, never churn)."""
    held = [_connect(patient, f"127.0.1.{1 + i % 4}") for i in range(CAP)]      # 4 addresses, 2 slots each: full
    try:
        time.sleep(0.1)
        assert _get(patient, "/x", "127.0.0.4").startswith(b"HTTP/1.1 200")     # admitted, not 503
        assert _closed(held) == [True] + [False] * (CAP - 1)                    # the oldest gave its slot
        held.append(_connect(patient, "127.0.1.1"))                             # full again: each holds 2
        time.sleep(0.1)
        over = _get(patient, "/x", "127.0.1.2")                                 # it holds 2, the others 2
        assert over.startswith(b"HTTP/1.1 503") and b"KGQA_SERVE_MAX_CONNECTIONS" in over, over
        assert not any(_closed(held[1:]))
    finally:
        for h in held:
            h.close()


def test_a_connection_whose_request_has_begun_never_gives_its_slot(patient):
    """Slots full of requests under way (bodies stalled): a newcomer gets 503, /health is answered, none is closed."""
    held = [_connect(patient, f"127.0.2.{1 + i}") for i in range(CAP)]
    try:
        for h in held:
            h.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
        time.sleep(0.1)
        over = _get(patient, "/x", "127.0.0.5")
        assert over.startswith(b"HTTP/1.1 503") and b"KGQA_SERVE_MAX_CONNECTIONS" in over, over
        assert _get(patient, "/health", "127.0.0.5").startswith(b"HTTP/1.1 200")
        assert not any(_closed(held))
    finally:
        for h in held:
            h.close()
