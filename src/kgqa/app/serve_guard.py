"""``kgqa serve``'s connection guard: uvicorn's HTTP/1.1 protocol (h11) with a deadline for reading a
request and a cap on open connections.

* **Read deadline** (``KGQA_SERVE_READ_TIMEOUT_S``, ``--read-timeout``): from the moment a connection
  opens (or a keep-alive connection's next request begins) its request line, headers and whole body
  must arrive within the deadline. A client that is still sending when it passes (a declared
  1,000-byte body of which 3 bytes came, headers trickled a byte at a time, a connection that sends
  nothing) gets ``408`` with one JSON line, when no response has begun, and the connection is closed.
  The question itself is not bounded by this: ``--timeout`` is.
* **Connection cap** (``KGQA_SERVE_MAX_CONNECTIONS``, ``--max-connections``, per worker): a connection
  opened while that many are open (and none idle can be given up, below) is answered ``503`` with
  ``Retry-After`` (and ``Connection: close``) as soon as its request line and headers have arrived, but for
  ``GET /health``; the ones already open are served as before.

* **Header deadline** (``KGQA_SERVE_HEADER_TIMEOUT_S``, 5 s): the request line and headers must arrive within
  it (408, closed), so a connection that sends nothing holds its slot 5 s, not the whole read deadline.
* **Per-client limit** (``KGQA_SERVE_MAX_CONNECTIONS_PER_CLIENT``, per worker and client address): a client's
  connections beyond it are not admitted; they count toward no cap and are treated as over the cap, so one
  client refilling silent connections as they close can hold at most this many of the slots.
* **/health is always answered**: a connection over the cap (or the client's limit) is still served a
  ``GET /health``, so a health check tells the truth while the slots are full; every other request gets 503.
* **An idle slot is given to a lighter client**: at the cap, a new connection takes the slot of an admitted one
  on which no request has begun (opened and silent, or a keep-alive between requests: nothing received since),
  the oldest of the client holding the most slots, provided that client holds at least two more than the
  newcomer's does (each such move evens the shares, so refills at the cap settle instead of churning); the idle
  one is closed (nginx closes its idle connections so when it runs out). Silent connections refilled at the cap
  from many addresses then never shut out a client that holds none while any attacking address holds two: its
  question is admitted.
  A connection whose request has begun (headers sent, a body under way) is never taken; the read deadline
  bounds it.

``GuardedH11Protocol`` is what ``kgqa.app.serve.run`` hands uvicorn (``http=``); the two limits come
from the worker's settings through ``configure`` (``create_app`` calls it), so every worker holds the
same limits. The guard knows nothing of the API: it works on bytes and h11's states only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("kgqa.app.serve")

#: Defaults when no settings were given (the same as ``kgqa.core.config.Settings``'s).
READ_TIMEOUT_S = 30.0
MAX_CONNECTIONS = 256
HEADER_TIMEOUT_S = 5.0
MAX_PER_CLIENT = 32
#: What a refused connection is told to wait before it retries, in seconds.
RETRY_AFTER_S = 1

_limits = {"read_timeout_s": READ_TIMEOUT_S, "max_connections": MAX_CONNECTIONS,
           "header_timeout_s": HEADER_TIMEOUT_S, "max_per_client": MAX_PER_CLIENT}
#: this worker's admitted connections (within the cap and their client's limit)
_admitted: set = set()


def configure(read_timeout_s: float, max_connections: int, header_timeout_s: float = HEADER_TIMEOUT_S,
              max_per_client: int = MAX_PER_CLIENT) -> None:
    """The limits of this worker's connections (``create_app`` calls it with the settings' values)."""
    _limits["read_timeout_s"] = float(read_timeout_s)
    _limits["max_connections"] = int(max_connections)
    _limits["header_timeout_s"] = min(float(header_timeout_s), float(read_timeout_s))
    _limits["max_per_client"] = int(max_per_client)


def limits() -> dict:
    return dict(_limits)


#: one line per kind of event per this many seconds: an attack of thousands of connections a minute is told, not
#: written out line by line (which would cost the event loop more than the connections do)
WARN_EVERY_S = 10.0
_warned: dict[str, list] = {}        # kind -> [time of its last line, events not written since]


def _warn(kind: str, msg: str, *args) -> None:
    now = time.monotonic()
    last = _warned.setdefault(kind, [-WARN_EVERY_S, 0])
    if now - last[0] < WARN_EVERY_S:
        last[1] += 1
        return
    more = f" (and {last[1]} more like it in the last {now - last[0]:.0f} s)" if last[1] else ""
    last[0], last[1] = now, 0
    log.warning(msg + "%s", *args, more)


def _json_response(status: int, reason: str, code: str, message: str, headers: list[tuple[str, str]]) -> bytes:
    body = json.dumps({"code": code, "message": message}).encode()
    lines = [f"HTTP/1.1 {status} {reason}", "content-type: application/json",
             f"content-length: {len(body)}", "connection: close", *(f"{k}: {v}" for k, v in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _over_capacity(app, why: str):
    """The ASGI app of a connection over the cap or its client's limit: ``GET /health`` goes to ``app`` (a health
    check is answered while the slots are full), anything else is 503 with Retry-After and the connection
    closes."""

    async def limited(scope, receive, send) -> None:
        if scope.get("type") == "http" and scope.get("method") in ("GET", "HEAD") and scope.get("path") == "/health":
            return await app(scope, receive, send)
        await _refuse(why, send)

    return limited


async def _refuse(why: str, send) -> None:
    body = json.dumps({"code": "too_many_connections",
                       "message": f"{why}; retry in about {RETRY_AFTER_S} s"}).encode()
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", str(RETRY_AFTER_S).encode()),
                            (b"connection", b"close"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _host(c) -> str | None:
    return c.client[0] if c.client else None


def _take_idle_slot(mine: int) -> bool:
    """Close the admitted connection that gives its slot to a newcomer whose client holds ``mine`` slots (the
    module doc): the oldest idle one of the client holding the most, if that client holds ``mine + 2`` or more."""
    held: dict[str | None, int] = {}
    for c in _admitted:
        held[_host(c)] = held.get(_host(c), 0) + 1
    idle = [c for c in _admitted if held[_host(c)] >= mine + 2 and c.idle()]
    if not idle:
        return False
    victim = max(idle, key=lambda c: (held[_host(c)], -c.opened))
    _admitted.discard(victim)
    _warn("idle", "kgqa serve: an idle connection of %s (%d held) closed for a client holding %d",
          _host(victim), held[_host(victim)], mine)
    victim.transport.close()
    return True


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the read deadline and the connection cap of the module doc."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)        # adds itself to the open connections
        self.opened = self.loop.time()
        self._read_deadline: asyncio.TimerHandle | None = None
        self._header_deadline: asyncio.TimerHandle | None = None
        host = _host(self)
        mine = sum(1 for c in _admitted if _host(c) == host)
        if mine >= _limits["max_per_client"]:
            why = f"{mine} connections from {host} are open (KGQA_SERVE_MAX_CONNECTIONS_PER_CLIENT)"
        elif len(_admitted) >= _limits["max_connections"] and not _take_idle_slot(mine):
            why = (f"{len(_admitted)} connections are open (KGQA_SERVE_MAX_CONNECTIONS / --max-connections)")
        else:
            why = ""
        if why:
            self.app = _over_capacity(self.app, why)   # /health is served, the rest 503; the others go on
            _warn("over", "kgqa serve: %s: 503 but for /health", why)
        else:
            _admitted.add(self)
        self._arm_read_deadline()
        self._header_deadline = self.loop.call_later(_limits["header_timeout_s"], self._header_deadline_passed)

    def connection_lost(self, exc: Exception | None) -> None:
        _admitted.discard(self)
        self._disarm_read_deadline()
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None
        super().connection_lost(exc)

    def _header_deadline_passed(self) -> None:
        """The first request's line and headers did not arrive within the header deadline: 408, closed."""
        self._header_deadline = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        t = _limits["header_timeout_s"]
        self.transport.write(_json_response(
            408, "Request Timeout", "request_timeout",
            f"the request headers did not arrive within {t:g} s (KGQA_SERVE_HEADER_TIMEOUT_S)", []))
        _warn("headers", "kgqa serve: %s sent no request headers within %g s: closed",
                    "%s:%d" % self.client if self.client else "a client", t)
        self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_deadline is not None and self.conn.their_state is not h11.IDLE:
            self._header_deadline.cancel()        # the headers are in: the read deadline bounds the rest
            self._header_deadline = None
        if self._request_read():
            self._disarm_read_deadline()
        elif self._read_deadline is None and not self.transport.is_closing():
            self._arm_read_deadline()            # a keep-alive connection's next request began

    def on_response_complete(self) -> None:
        super().on_response_complete()            # keep-alive's timer for an idle connection
        if self._request_read():
            self._disarm_read_deadline()
        elif not self.transport.is_closing() and (self.conn.their_state is not h11.IDLE or self.conn.trailing_data[0]):
            self._arm_read_deadline()             # the next request (pipelined, half-sent) began: its deadline runs

    def idle(self) -> bool:
        """No request has begun on this connection: nothing received since it opened or since its last response."""
        return (not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete)
                and self.conn.their_state is h11.IDLE and not self.conn.trailing_data[0])

    # -- the deadline ----------------------------------------------------------
    def _request_read(self) -> bool:
        """Whether the current request has arrived whole (h11: the client is done sending it)."""
        return self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.SWITCHED_PROTOCOL)

    def _arm_read_deadline(self) -> None:
        self._disarm_read_deadline()
        self._read_deadline = self.loop.call_later(_limits["read_timeout_s"], self._read_deadline_passed)

    def _disarm_read_deadline(self) -> None:
        handle = getattr(self, "_read_deadline", None)
        if handle is not None:
            handle.cancel()
            self._read_deadline = None

    def _read_deadline_passed(self) -> None:
        self._read_deadline = None
        if self.transport.is_closing() or self._request_read():
            return
        if self.cycle is not None and self.conn.their_state is h11.SEND_BODY:
            answered = self.cycle.response_started     # this request's cycle: the app may have answered early
        else:
            answered = False                           # its request line and headers are still incomplete
        if not answered:
            t = _limits["read_timeout_s"]
            self.transport.write(_json_response(
                408, "Request Timeout", "request_timeout",
                f"the request did not arrive whole within {t:g} s (KGQA_SERVE_READ_TIMEOUT_S / --read-timeout)", []))
        client = "%s:%d" % self.client if self.client else "a client"
        _warn("read", "kgqa serve: %s did not send its request within %g s: closed", client, _limits["read_timeout_s"])
        self.transport.close()                   # connection_lost tells a waiting request it is gone
