"""``kgqa serve`` against a hostile client (issue 62): what a client may set, numbers and bytes out of range,
the encoded-slash path. The service is a stub here (no Neo4j); tests/faults/test_hostile_client.py runs the
real server."""

from __future__ import annotations

import json

import pytest

from tests.unit.test_serve import app_with  # noqa: F401 (the fixture)


def _never(req, image):
    raise AssertionError("a refused request reached the pipeline")


@pytest.mark.parametrize("method,option,value", [
    ("vispath", "terminal_weights", "/dev/zero"),
    ("vispath", "reader_checkpoint", "/etc/passwd"),
    ("vispath", "path_checkpoint", "/tmp/fifo"),
    ("mkgrag", "ranker_checkpoint", "/nonexistent"),
    ("mkgrag", "reader_checkpoint", "/etc"),
    ("grasp", "checkpoint", "/dev/zero"),
    ("grasp", "reader_checkpoint", "/proc/self/environ"),
])
def test_a_client_never_names_a_file_the_server_reads(app_with, method, option, value):
    with app_with(_never) as c:
        r = c.post("/ask", json={"question": "Who?", "method": method, "options": {option: value}})
    assert r.status_code == 400, r.text
    msg = r.json()["message"]
    assert f"option(s) {option}: the server's setting, not a client's" in msg
    assert value not in msg and "exist" not in msg            # nothing said about the path


def test_a_client_may_still_set_how_to_answer(app_with):
    seen = []
    with app_with(lambda req, image: seen.append(req.options) or {"answer": "x"}) as c:
        r = c.post("/ask", json={"question": "Who?", "options": {"M1": 5, "Dmax": 2, "llm_steps": "none",
                                                                 "path_scorer": "rules", "delta": 0.1}})
    assert r.status_code == 200, r.text
    assert seen == [{"M1": 5, "Dmax": 2, "llm_steps": "none", "path_scorer": "rules", "delta": 0.1}]


@pytest.mark.parametrize("body,fragment", [
    ({"question": "q", "options": {"pre_cut": 2**70}}, "vispath option pre_cut="),
    ({"question": "q", "options": {"M1": 2**70}}, "vispath option M1="),
    ({"question": "q", "options": {"K": 2**70}}, "vispath option K="),
    ({"question": "q", "method": "grasp", "options": {"scan_cap": 2**70}}, "grasp option scan_cap="),
    ({"question": "q", "options": {"M1": 10**4000}}, "digits is out of range"),
    ({"question": "q", "options": {"delta": float("nan")}}, "must be a finite number"),
    ({"question": "q", "options": {"delta": float("inf")}}, "must be a finite number"),
    ({"question": "Where \ud800 is it?"}, "question is not valid UTF-8 text at character 7"),
    ({"question": "Who\u0000?"}, "question holds a control character (U+0000)"),
    ({"question": "q", "entity_id": "Q\udcff"}, "entity_id is not valid UTF-8"),
    ({"question": "q", "method": "mkgrag", "docs": ["caf\udce9"]}, "a document id or pattern is not valid UTF-8"),
    ({"question": "q", "options": {"M\ud800": 1}}, "option name is not valid UTF-8"),
])
def test_numbers_and_text_out_of_range_are_400_never_500(app_with, body, fragment):
    with app_with(_never) as c:
        r = c.post("/ask", content=json.dumps(body, allow_nan=True), headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    assert fragment in r.json()["message"] and "Traceback" not in r.text


def test_an_integer_of_5000_digits_in_the_body_is_400(app_with):
    with app_with(_never) as c:
        r = c.post("/ask", content=b'{"question": "q", "options": {"M1": ' + b"9" * 5000 + b"}}",
                   headers={"content-type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.json()["message"].startswith("request body is not valid JSON")


def test_an_encoded_slash_is_not_a_trailing_slash_no_redirect_loop(app_with):
    with app_with(_never) as c:
        r = c.get("/health%2F", follow_redirects=False)
        assert r.status_code == 404 and "location" not in r.headers, (r.status_code, r.headers)
        r = c.get("/methods/", follow_redirects=False)
        assert r.status_code == 307 and r.headers["location"] == "/methods"


def test_uploads_a_killed_worker_left_are_removed_at_the_next_start_a_live_workers_kept(tmp_path):
    """Item 6: 12 temporary upload files stayed after kill -9 of serve (tests/faults runs the real server)."""
    import signal
    import subprocess
    import sys

    from kgqa.app.serve_input import claim_upload_dir

    root = tmp_path / "serve" / "uploads"
    code = ("import sys, time; from pathlib import Path; from kgqa.app.serve_input import claim_upload_dir; "
            "d, fd = claim_upload_dir(Path(sys.argv[1])); (d / 'upload-x.img').write_bytes(b'img'); "
            "print(d, flush=True); time.sleep(600)")
    dead = subprocess.Popen([sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE, text=True)
    live = subprocess.Popen([sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE, text=True)
    try:
        dead_dir, live_dir = dead.stdout.readline().strip(), live.stdout.readline().strip()
        dead.send_signal(signal.SIGKILL)
        dead.wait(30)
        (root / "upload-old.img").write_bytes(b"left by an older version")
        mine, fd = claim_upload_dir(root)
        left = sorted(p.name for p in root.iterdir())
        assert (root / live_dir).is_dir() and (root / live_dir / "upload-x.img").exists()
        assert not (root / dead_dir).exists() and "upload-old.img" not in left, left
        assert mine.parent == root and mine.is_dir()
    finally:
        live.kill()
        live.wait(30)
