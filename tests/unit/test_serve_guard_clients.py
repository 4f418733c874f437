"""Slow clients against ``kgqa serve``'s connection guard (issue 62, item 3): silent connections refilled as the
server closed them kept the connection cap full, and then /health was answered 0 of 74 times. Now a connection
that sends no headers is closed at the header deadline, one client holds at most its share of the slots, and
/health is answered over any limit (tests/faults/test_hostile_client.py: the refill attack on the real server)."""

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
        held = [_connect(guarded, f"127.0.1.{i}") for i in range(CAP)]      # now the cap itself is full
        try:
            time.sleep(0.1)
            assert _get(guarded, "/x", "127.0.0.4").startswith(b"HTTP/1.1 503")
            assert _get(guarded, "/health", "127.0.0.4").startswith(b"HTTP/1.1 200")
        finally:
            for h in held:
                h.close()
    finally:
        for a in attacker:
            a.close()
