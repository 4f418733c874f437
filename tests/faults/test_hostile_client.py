"""``kgqa serve`` tried as a hostile client would (issue 62): the real server process on the real Neo4j.

* a client names a server file (a FIFO, /dev/zero) as a checkpoint: 400 naming the option, nothing opened;
* numbers and bytes out of range: 400, never a 500 or a traceback;
* ``GET /health%2F``: 404, not a redirect to itself;
* silent connections refilled as the server closes them, from 20 addresses so that the connection cap stays full,
  and connections stalled mid-body: /health is still answered, and a real question on the demo KG (its q01 with
  its photograph) from another client is answered, rightly;
* ``kill -9`` with uploads queued: the next start removes them;
* the API fuzzed from its OpenAPI schema (schemathesis, hypothesis): no 500 in ``FUZZ_REQUESTS`` requests,
  and the server answers afterwards.

The figures (the refill attack's /health p95 and the question's time, the fuzz's request count) are printed
(``pytest -s``)."""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import selectors
import socket
import statistics
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import running_serve

#: requests the fuzz sends in all (the fault suite's bar: at least 5,000)
FUZZ_REQUESTS = int(os.environ.get("KGQA_FUZZ_REQUESTS", "5200"))
HEADER_S, READ_S, PER_CLIENT, CAP = 2, 5, 16, 64
#: the answering server's deadlines under the refill attack: the question is sent while the first round of silent
#: connections still holds every slot (before their header deadline), then two more rounds pass
ATTACK_HEADER_S, ATTACK_READ_S = 8, 10


def _env(data_dir: Path, header_s: float = HEADER_S, read_s: float = READ_S) -> dict:
    env = {**os.environ, "KGQA_CHAT_BACKEND": "none", "KGQA_DATA_DIR": str(data_dir),
           "KGQA_SERVE_HEADER_TIMEOUT_S": str(header_s), "KGQA_SERVE_READ_TIMEOUT_S": str(read_s),
           "KGQA_SERVE_MAX_CONNECTIONS": str(CAP), "KGQA_SERVE_MAX_CONNECTIONS_PER_CLIENT": str(PER_CLIENT)}
    env.pop("KGQA_DEBUG", None)
    env.pop("KGQA_API_TOKEN", None)
    return env


@pytest.fixture(scope="module")
def api(graph, tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    with running_serve(["--queue", "1", "--timeout", "2", "--max-upload-mb", "1", "--log-level", "error"],
                       _env(d / "data"), {}, d / "serve.log") as (base, proc):
        yield base, proc


def _no_500(r: httpx.Response) -> None:
    assert r.status_code < 500 or r.status_code in (503, 504), (r.status_code, r.text[:500])
    assert "Traceback" not in r.text


def test_a_client_never_makes_the_server_read_a_file(api, tmp_path):
    base, _ = api
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for method, option, path in (("vispath", "terminal_weights", fifo), ("vispath", "reader_checkpoint", "/dev/zero"),
                                 ("mkgrag", "ranker_checkpoint", "/nonexistent"), ("grasp", "checkpoint", fifo)):
        r = httpx.post(f"{base}/ask", json={"question": "Who?", "method": method, "options": {option: str(path)}},
                       timeout=30)
        assert r.status_code == 400, r.text
        assert option in r.json()["message"] and str(path) not in r.json()["message"]
    assert httpx.get(f"{base}/health", timeout=30).status_code == 200      # the inference thread is free


@pytest.mark.parametrize("body", [
    {"question": "q", "options": {"pre_cut": 2**70}}, {"question": "q", "options": {"M1": 2**70}},
    {"question": "q", "options": {"K": 2**70}}, {"question": "q", "method": "grasp", "options": {"scan_cap": 2**70}},
    b'{"question": "q", "options": {"M1": ' + b"9" * 5000 + b"}}", b'{"question": "\xff\xfe"}',
    {"question": "Where \ud800?"}, {"question": "q", "options": {"delta": float("nan")}},
    {"question": "q", "method": "mkgrag", "docs": ["caf\udce9"]},
])
def test_numbers_and_bytes_out_of_range_are_400(api, body):
    base, _ = api
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    r = httpx.post(f"{base}/ask", content=content, headers={"content-type": "application/json"}, timeout=30)
    assert r.status_code == 400, r.text


def test_an_encoded_slash_is_a_404_not_a_redirect_loop(api):
    base, _ = api
    r = httpx.get(f"{base}/health%2F", timeout=30, follow_redirects=False)
    assert r.status_code == 404 and "location" not in r.headers


@pytest.fixture(scope="module")
def answering(graph, tmp_path_factory):
    """A server over the demo KG that takes the time a real question needs (``--timeout 600``), with the same
    guard as ``api``; the demo KG is removed again at the end."""
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions
    from tests.integration.conftest import DEMO_DIR, remove_kg

    remove_kg(graph, DEMO_DIR)
    load_wikidata5m(graph, DEMO_DIR, options=LoadOptions(progress=False))
    d = tmp_path_factory.mktemp("answering")
    try:
        with running_serve(["--queue", "4", "--timeout", "600", "--log-level", "error"],
                           _env(d / "data", ATTACK_HEADER_S, ATTACK_READ_S), {},
                           d / "serve.log") as (base, _):
            yield base
    finally:
        remove_kg(graph, DEMO_DIR)


#: the real question: the demo's q01, with its photograph (graph-only: KGQA_CHAT_BACKEND=none)
QUESTION = json.loads((Path(__file__).resolve().parents[2] / "data" / "demo" / "questions.jsonl")
                      .read_text(encoding="utf-8").splitlines()[0])


def _ask_real(base: str, source: str) -> tuple[int | str, dict, float]:
    """The demo question with its image from client address ``source``, on a connection of its own (no retry):
    (status or error name, JSON body, seconds)."""
    image = Path(__file__).resolve().parents[2] / "data" / "demo" / QUESTION["image"]
    t0 = time.monotonic()
    try:
        with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=600) as c:
            r = c.post(f"{base}/ask", data={"question": QUESTION["question"]},
                       files={"image": (image.name, image.read_bytes(), "image/jpeg")})
        return r.status_code, (r.json() if r.headers.get("content-type") == "application/json" else {}), \
            time.monotonic() - t0
    except httpx.HTTPError as e:
        return type(e).__name__, {}, time.monotonic() - t0


def _timed_health(base: str) -> tuple[int | str, float]:
    t0 = time.monotonic()
    try:
        code: int | str = httpx.get(f"{base}/health", timeout=30).status_code
    except httpx.HTTPError as e:
        code = type(e).__name__
    return code, time.monotonic() - t0


#: what the attacker counts: connections opened, answered before being closed (408/503), closed without a word
SEEN = ("opened", "answered", "closed silently")


def _attack(port: int, sources: list[str], n: int, stop, stall_body: bool, seen) -> None:
    """``n`` connections spread over the client addresses ``sources``: silent ones, each reopened as soon as the
    server closes it (the refill attack), or ones stalled mid-body, opened once and held. Runs in a process of its
    own and waits on a selector, as an attacker elsewhere would cost the server nothing but the connections (a
    loop polling every socket, or one in the test's process, would take the CPU the server and the test need);
    ``seen`` (a shared array) counts as ``SEEN`` says."""
    sel = selectors.DefaultSelector()

    def open_one(i: int) -> None:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(sources[i % len(sources)], 0))
            if stall_body:
                s.sendall(b"POST /ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 1000\r\n\r\n{\"q")
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, [i, False])     # its index, whether it was answered
            seen[0] += 1
        except OSError:
            pass

    for i in range(n):
        open_one(i)
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.1):
            s, (i, answered) = key.fileobj, key.data
            try:
                if s.recv(65536):
                    key.data[1] = True                  # answered (408/503): closed by the server next
                    continue
            except BlockingIOError:
                continue
            except OSError:
                pass
            sel.unregister(s)                           # closed by the server
            s.close()
            seen[1 if answered else 2] += 1
            if not stall_body:
                open_one(i)                             # refilled at once
    for key in list(sel.get_map().values()):
        key.fileobj.close()


#: the silent refill from 20 addresses, each under its client limit (15 < 16), 300 in all: the cap (64) stays full
MANY = [f"127.0.1.{i}" for i in range(1, 21)]


@pytest.mark.parametrize("stall_body,n,sources", [(False, 300, MANY), (True, 600, ["127.0.0.2"])],
                         ids=["silent-refilled-at-the-cap", "stalled-mid-body"])
def test_under_a_refill_attack_health_is_answered_and_a_real_question_too(answering, stall_body, n, sources):
    base = answering
    port = int(base.rsplit(":", 1)[1])
    idle = _ask_real(base, "127.0.0.3")                          # once before the attack: the models warm
    assert idle[0] == 200, idle
    quiet = [_timed_health(base)[1] for _ in range(15)]          # the same machine's /health without the attack
    mp = multiprocessing.get_context("spawn")
    stop, seen = mp.Event(), mp.Array("i", len(SEEN))
    t = mp.Process(target=_attack, args=(port, sources, n, stop, stall_body, seen), daemon=True)
    t.start()
    times, codes, asked = [], [], []
    try:
        time.sleep(3)                                            # every slot filled, no header deadline passed
        q = threading.Thread(target=lambda: asked.append(_ask_real(base, "127.0.0.3")), daemon=True)
        q.start()
        until = time.monotonic() + 3 * ATTACK_READ_S            # several rounds of the server closing them
        while time.monotonic() < until or (q.is_alive() and time.monotonic() < until + 600):
            code, took = _timed_health(base)
            codes.append(code)
            times.append(took)
            time.sleep(0.2)
        q.join(30)
    finally:
        stop.set()
        t.join(30)
        if t.is_alive():
            t.kill()
    seen = dict(zip(SEEN, seen[:]))
    p95 = statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]
    p95_quiet = statistics.quantiles(quiet, n=20)[-1]
    status, body, took = asked[0] if asked else ("not sent", {}, 0.0)
    print(f"\nrefill attack ({'stalled mid-body' if stall_body else 'silent, refilled'}, {n} connections from "
          f"{len(sources)} address(es), {seen}): /health {codes.count(200)}/{len(codes)} answered, p95 {p95:.3f} s, median {statistics.median(times):.3f} s "
          f"(without the attack, just before: {p95_quiet:.3f} s); "
          f"the demo question with its image from another client: {status} {body.get('answer')!r} in {took:.1f} s "
          f"({idle[2]:.1f} s before the attack)")
    assert codes.count(200) == len(codes), codes
    assert status == 200, (status, body)
    assert body["answer"] == QUESTION["answer"], body.get("answer")


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 30, 30)).save(buf, "PNG")
    return buf.getvalue()


def _uploads(data: Path) -> list[Path]:
    return [p for p in (data / "serve" / "uploads").rglob("*") if p.is_file() and p.name != ".lock"]


def test_uploads_a_killed_server_left_are_removed_at_the_next_start(graph, tmp_path):
    data = tmp_path / "data"
    png = _png()
    with running_serve(["--queue", "16", "--timeout", "600", "--log-level", "error"], _env(data), {},
                       tmp_path / "a.log") as (base, proc):
        def ask():
            try:
                httpx.post(f"{base}/ask", data={"question": "Which country does this flag belong to?"},
                           files={"image": ("f.png", png, "image/png")}, timeout=60)
            except httpx.HTTPError:
                pass

        threads = [threading.Thread(target=ask, daemon=True) for _ in range(12)]
        for th in threads:
            th.start()
        deadline = time.monotonic() + 60
        while len(_uploads(data)) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.kill()                                              # kill -9 with the uploads queued
        proc.wait(30)
    left = _uploads(data)
    assert len(left) >= 6, left                                  # what the killed server left
    with running_serve(["--log-level", "error"], _env(data), {}, tmp_path / "b.log"):
        assert _uploads(data) == []                              # removed at the next start


def test_the_api_fuzzed_from_its_openapi_schema_never_answers_500(api):
    """schemathesis generates requests for every operation of /openapi.json (valid and invalid ones); none may
    be a 500 (503 queue_full and 504 timeout are answers), and the server answers afterwards."""
    schemathesis = pytest.importorskip("schemathesis")    # the dev extra: pip install -e '.[dev]'
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hyp_seed
    from hypothesis.errors import Unsatisfiable

    base, _ = api
    spec = httpx.get(f"{base}/openapi.json", timeout=30).json()
    schema = schemathesis.openapi.from_dict(spec)
    ops = [o.ok() for o in schema.get_all_operations()]
    sent, failures, by_status = [0], [], {}

    def run(op, mode, examples: int, seed: int) -> None:
        @hyp_seed(seed)
        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(case=op.as_strategy(generation_mode=mode))
        def fuzz(case):
            try:
                r = case.call(base_url=base, timeout=30)
            except Exception as e:                        # a request the client cannot even send: not the server's
                by_status[type(e).__name__] = by_status.get(type(e).__name__, 0) + 1
                return
            sent[0] += 1
            by_status[r.status_code] = by_status.get(r.status_code, 0) + 1
            if r.status_code >= 500 and r.status_code not in (503, 504) or "Traceback" in r.text:
                failures.append((op.method, op.path, r.status_code, r.text[:300], repr(case)[:300]))

        try:
            fuzz()
        except Unsatisfiable:                              # nothing to make invalid (GET /health has no input)
            pass

    modes = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
    for op in ops:                                        # every operation, valid and invalid requests
        for mode in modes:
            run(op, mode, 200, 1)
    ask = next(op for op in ops if op.path == "/ask")
    k = 2
    while sent[0] < FUZZ_REQUESTS:                        # the rest on POST /ask, the one with a body
        run(ask, modes[k % 2], 500, k)
        k += 1
    print(f"\nfuzz: {sent[0]} requests over {len(ops)} operations; by status {dict(sorted(by_status.items(), key=str))}")
    assert failures == [], failures[:5]
    assert sent[0] >= 5000 or FUZZ_REQUESTS < 5000, sent[0]
    assert httpx.get(f"{base}/health", timeout=30).status_code == 200
