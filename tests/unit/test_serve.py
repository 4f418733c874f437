"""``kgqa serve``'s HTTP logic around the pipeline: limits, token, queue, timeout, error bodies, OpenAPI.

The service's graph and models are replaced by a stub here (no Neo4j); tests/integration/test_serve.py
runs the real server process on the real Neo4j and models.
"""

from __future__ import annotations

import io
import threading
import time

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from kgqa.app import serve
from kgqa.core.config import Settings
from kgqa.core.errors import GraphUnavailable, InvalidInput, ModelUnavailable


def _png(w=64, h=48) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (10, 120, 200)).save(buf, "PNG")
    return buf.getvalue()


@pytest.fixture()
def app_with(monkeypatch, tmp_path):
    """A client over create_app whose inference is ``answer(req, image) -> dict`` (given per test)."""

    def make(answer, token=None, queue=4, timeout=30.0, max_upload_mb=1.0):
        monkeypatch.setattr(serve.Service, "start", lambda self: self.uploads.mkdir(parents=True, exist_ok=True))
        monkeypatch.setattr(serve.Service, "answer", lambda self, req, image: answer(req, image))
        s = Settings(data_dir=tmp_path, api_token=token, serve_queue=queue, serve_timeout_s=timeout,
                     serve_max_upload_mb=max_upload_mb)
        return TestClient(serve.create_app(s), raise_server_exceptions=False)

    return make


def _ok(req, image):
    return {"question": req.question, "answer": "Paris", "trace_id": "0123456789abcdef",
            "image": image.read_bytes()[:4].hex() if image else None}


def test_json_ask_returns_the_pipelines_answer(app_with):
    with app_with(_ok) as c:
        r = c.post("/ask", json={"question": "  Where is the Eiffel Tower?  ", "entity_id": "Q243"})
    assert r.status_code == 200
    assert r.json()["answer"] == "Paris" and r.json()["trace_id"] == "0123456789abcdef"


def test_multipart_ask_hands_the_uploaded_image_to_the_pipeline_and_removes_it(app_with, tmp_path):
    with app_with(_ok) as c:
        r = c.post("/ask", data={"question": "What is shown?", "options": '{"M1": 5}'},
                   files={"image": ("x.png", _png(), "image/png")})
        assert r.status_code == 200, r.text
        assert r.json()["image"] == "89504e47"  # the PNG signature: the upload reached the method
        time.sleep(0.1)
        assert list((tmp_path / "serve" / "uploads").iterdir()) == []  # the temporary file is gone


@pytest.mark.parametrize("body,fragment", [
    ({"question": ""}, "question is empty"),
    ({"question": "x" * 2001}, "over the 2,000-character limit"),
    ({"question": "q", "method": "nope"}, "--method 'nope' is unknown"),
    ({"question": "q", "options": {"M9": 1}}, "vispath option(s) M9 unknown"),
    ({"question": "q", "options": {"M1": 0}}, "vispath option M1=0"),
    ({"question": "q", "ablations": ["no_such"]}, "ablation 'no_such' is unknown"),
    ({"quest": "q"}, "body field question: Field required"),
    ([1, 2], "request body must be a JSON object"),
])
def test_bad_input_is_400_with_the_cli_line_and_never_reaches_the_pipeline(app_with, body, fragment):
    calls = []
    with app_with(lambda req, image: calls.append(req)) as c:
        r = c.post("/ask", json=body)
    assert r.status_code == 400, r.text
    assert r.json()["code"] == "bad_input" and fragment in r.json()["message"]
    assert "\n" not in r.json()["message"] and "Traceback" not in r.text
    assert calls == []


def test_not_json_and_wrong_media_type(app_with):
    with app_with(_ok) as c:
        r = c.post("/ask", content=b"{nope", headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["message"].startswith("request body is not valid JSON")
        r = c.post("/ask", content=b"question=x", headers={"content-type": "text/plain"})
        assert r.status_code == 415 and r.json()["code"] == "unsupported_media_type"


def test_oversized_body_is_413_before_it_is_decoded(app_with, monkeypatch):
    decoded = []
    monkeypatch.setattr("kgqa.core.images.load_image", lambda *a, **k: decoded.append(a))
    with app_with(_ok, max_upload_mb=0.5) as c:
        big = b"\x89PNG" + b"\0" * (700 * 1024)
        r = c.post("/ask", data={"question": "What is shown?"}, files={"image": ("big.png", big, "image/png")})
        assert r.status_code == 413 and r.json()["code"] == "too_large"
        assert "over the" in r.json()["message"] and decoded == []
        r = c.post("/ask", json={"question": "x" * 600_000})  # a JSON body too
        assert r.status_code == 413


def _png_header(w: int, h: int) -> bytes:
    """A PNG that claims w x h pixels in its header and holds no pixel data (a decompression bomb's shape)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))


def test_an_upload_that_is_not_an_image_or_too_many_pixels_is_400_from_its_header(app_with):
    calls = []
    with app_with(lambda req, image: calls.append(req)) as c:
        r = c.post("/ask", data={"question": "q"}, files={"image": ("x.png", b"not an image at all", "image/png")})
        assert r.status_code == 400 and r.json()["message"] == "image upload: not a readable image (JPEG, PNG or WebP)"
        r = c.post("/ask", data={"question": "q"}, files={"image": ("bomb.png", _png_header(10_000, 10_000), "image/png")})
        assert r.status_code == 400, r.text
        assert r.json()["message"] == "image upload: image is 10000x10000 pixels, over the 64,000,000-pixel limit"
    assert calls == []


def test_token_required_when_set(app_with):
    with app_with(_ok, token="s3cret") as c:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}):
            r = c.post("/ask", json={"question": "q"}, headers=headers)
            assert r.status_code == 401 and r.json()["code"] == "unauthorized"
            assert r.headers["www-authenticate"] == "Bearer"
        assert c.get("/methods").status_code == 401
        r = c.post("/ask", json={"question": "q"}, headers={"Authorization": "Bearer s3cret"})
        assert r.status_code == 200


@pytest.mark.parametrize("exc,status,code", [
    (InvalidInput("--entity Q99: no such entity in the graph"), 400, "bad_input"),
    (GraphUnavailable("Neo4j is not reachable at bolt://x:1"), 503, "graph_unavailable"),
    (ModelUnavailable("chat backend http://127.0.0.1:9/v1: cannot connect"), 503, "model_unavailable"),
])
def test_pipeline_errors_are_the_cli_line_with_a_stable_code(app_with, exc, status, code):
    def fail(req, image):
        raise exc

    with app_with(fail) as c:
        r = c.post("/ask", json={"question": "q"})
    assert r.status_code == status and r.json() == {"code": code, "message": str(exc)}


def test_an_unexpected_error_is_500_without_a_stack_trace(app_with):
    def bug(req, image):
        raise KeyError("secret internals")

    with app_with(bug) as c:
        r = c.post("/ask", json={"question": "q"})
    assert r.status_code == 500 and r.json()["code"] == "internal"
    assert "Traceback" not in r.text and "secret internals" not in r.text


def test_a_full_queue_answers_503_with_retry_after_at_once(app_with):
    gate = threading.Event()

    def slow(req, image):
        gate.wait(20)
        return {"answer": req.question}

    with app_with(slow, queue=2) as c:
        results = []
        threads = [threading.Thread(target=lambda i=i: results.append(c.post("/ask", json={"question": f"q{i}"})))
                   for i in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        t0 = time.monotonic()
        r = c.post("/ask", json={"question": "one too many"})
        waited = time.monotonic() - t0
        gate.set()
        for t in threads:
            t.join(20)
    assert r.status_code == 503 and r.json()["code"] == "queue_full"
    assert int(r.headers["retry-after"]) >= 1
    assert waited < 5  # answered at once, not after the queue drained
    assert sorted(x.status_code for x in results) == [200, 200]


def test_a_question_over_the_timeout_is_504_and_frees_its_slot_when_it_ends(app_with):
    def slow(req, image):
        time.sleep(1.0)
        return {"answer": "late"}

    with app_with(slow, timeout=0.2, queue=1) as c:
        r = c.post("/ask", json={"question": "q"})
        assert r.status_code == 504 and r.json()["code"] == "timeout"
        time.sleep(1.2)
        assert c.app.state.service.stats()["queued_or_running"] == 0


def test_traces_and_unknown_routes(app_with):
    with app_with(_ok) as c:
        r = c.get("/traces/not-an-id")
        assert r.status_code == 400 and "is not a kgqa trace id" in r.json()["message"]
        r = c.get("/nope")
        assert r.status_code == 404 and r.json()["code"] == "not_found"


def test_openapi_documents_ask_for_json_and_multipart(app_with):
    with app_with(_ok) as c:
        doc = c.get("/openapi.json").json()
    assert {"/ask", "/traces/{trace_id}", "/health", "/methods"} <= set(doc["paths"])
    body = doc["paths"]["/ask"]["post"]["requestBody"]["content"]
    assert set(body) == {"application/json", "multipart/form-data"}
    assert "question" in body["application/json"]["schema"]["properties"]
    assert body["multipart/form-data"]["schema"]["properties"]["image"]["format"] == "binary"
    assert {"400", "401", "413", "503", "504"} <= set(doc["paths"]["/ask"]["post"]["responses"])


def test_methods_lists_the_registry(app_with):
    with app_with(_ok) as c:
        names = [m["name"] for m in c.get("/methods").json()]
    assert "vispath" in names


# --------------------------------------------------------------------------- issue 26 (6): nesting, Retry-After, paths
@pytest.mark.parametrize("make", [
    lambda n: ("json", '{"question": "q", "options": {"x": ' + "[" * n + "]" * n + "}}"),
    lambda n: ("json", "[" * n + "]" * n),
    lambda n: ("form", "{\"x\": " + "{\"y\": " * n + "1" + "}" * n + "}"),
])
def test_deeply_nested_json_is_400_not_a_recursion_error(app_with, make):
    calls = []
    kind, text = make(100_000)
    with app_with(lambda req, image: calls.append(req)) as c:
        if kind == "json":
            r = c.post("/ask", content=text.encode(), headers={"content-type": "application/json"})
        else:
            r = c.post("/ask", data={"question": "q", "options": text}, files={"image": ("x.png", _png(), "image/png")})
    assert r.status_code == 400, r.text
    assert r.json()["code"] == "bad_input" and "nests deeper than 32 levels" in r.json()["message"]
    assert not calls


def test_nesting_within_the_limit_still_reaches_validation(app_with):
    with app_with(_ok) as c:
        r = c.post("/ask", json={"question": "q", "options": {"M9": [[[[1]]]]}})
    assert r.status_code == 400 and "vispath option(s) M9 unknown" in r.json()["message"]


def test_retry_after_is_the_measured_drain_time_not_the_waits_times_the_queue(app_with):
    """Four questions of 0.6 s each drain in 2.4 s: a client told to retry should wait about one
    question's time (the old estimate, mean latency with the queue wait x in flight, said 6 s)."""
    gate = threading.Event()

    def answer(req, image):
        if req.question.startswith("gated"):
            gate.wait(20)
        else:
            time.sleep(0.6)
        return {"answer": req.question}

    with app_with(answer, queue=4) as c:
        burst = [threading.Thread(target=lambda i=i: c.post("/ask", json={"question": f"q{i}"})) for i in range(4)]
        for t in burst:
            t.start()
        for t in burst:
            t.join(20)
        held = [threading.Thread(target=lambda i=i: c.post("/ask", json={"question": f"gated {i}"}))
                for i in range(4)]
        for t in held:
            t.start()
        time.sleep(0.5)
        r = c.post("/ask", json={"question": "one too many"})
        gate.set()
        for t in held:
            t.join(20)
    assert r.status_code == 503, r.text
    assert 1 <= int(r.headers["retry-after"]) <= 2, r.headers["retry-after"]
    assert f"retry in about {r.headers['retry-after']} s" in r.json()["message"]


def _truncated_jpeg() -> bytes:
    import numpy as np

    buf = io.BytesIO()
    Image.fromarray((np.random.default_rng(0).random((480, 640, 3)) * 255).astype("uint8")).save(buf, "JPEG")
    data = buf.getvalue()
    return data[: len(data) // 2]      # the header is whole: only decoding every pixel finds the cut


def test_a_truncated_upload_is_400_and_its_error_shows_no_server_path(app_with, tmp_path):
    def pipeline(req, image):          # what the pipeline does with the file: decode it, naming it
        from kgqa.core.images import load_image, open_rgb

        try:
            open_rgb(load_image(image))
        except OSError as e:
            raise InvalidInput(f"{image}: cannot decode the image ({e})") from None
        return {"answer": "?"}

    with app_with(pipeline) as c:
        r = c.post("/ask", data={"question": "What is shown?"},
                   files={"image": ("x.jpg", _truncated_jpeg(), "image/jpeg")})
    assert r.status_code == 400, r.text
    msg = r.json()["message"]
    assert msg.startswith("image upload: truncated or corrupt image"), msg
    assert str(tmp_path) not in r.text and "upload-" not in r.text and "/tmp" not in r.text
    assert list((tmp_path / "serve" / "uploads").iterdir()) == []


def test_pipeline_errors_naming_the_upload_or_data_dir_show_neither(app_with, tmp_path):
    def pipeline(req, image):
        raise InvalidInput(f"{image}: no entity recognised in the image (cache {tmp_path / 'models'})")

    with app_with(pipeline) as c:
        r = c.post("/ask", data={"question": "What is shown?"}, files={"image": ("x.png", _png(), "image/png")})
    assert r.status_code == 400
    msg = r.json()["message"]
    assert msg.startswith("the uploaded image: no entity recognised"), msg
    assert str(tmp_path) not in r.text and "<data dir>/models" in msg
