"""Shared fixtures and helpers (fakes shared by several modules: tests/fakes/).

Integration tests talk to the real Neo4j that `make test` starts (its own data dir
and ports, see the Makefile); they fail loudly, never skip, when it is not there.
Their mark and the fixture KGs: tests/integration/conftest.py.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
KGQA = str(Path(sys.executable).with_name("kgqa"))
#: the VisPath fixture KG (Wikidata5M format, real facts, skimage photographs)
VISPATH_KG = REPO / "tests" / "fixtures" / "vispath_kg"

#: kgqa settings the harness itself sets (the Makefile's test and fault servers, their tests' knobs); any other
#: KGQA_* variable exported in the shell that runs the tests (KGQA_CHAT_BACKEND=none, a model, a reader) would
#: change what the tests measure, so it is set aside for this run and named in pytest's header
_HARNESS = {"KGQA_DATA_DIR", "KGQA_NEO4J_BOLT_PORT", "KGQA_NEO4J_HTTP_PORT", "KGQA_FAULTS", "KGQA_FAULT_POINTS",
            "KGQA_DEBUG"}
SET_ASIDE = sorted(k for k in os.environ if k.startswith("KGQA_") and k not in _HARNESS
                   and not k.startswith("KGQA_TEST_"))
for _k in SET_ASIDE:
    del os.environ[_k]


def pytest_report_header(config):
    if SET_ASIDE:
        return f"kgqa settings from the shell set aside for the tests: {', '.join(SET_ASIDE)}"
    return None


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_serve(args: list[str], env: dict[str, str], headers: dict[str, str], log: Path, seconds: float = 600):
    """``kgqa serve --port <free port> *args`` with ``env``, its output in ``log``: yields (base URL, process) once
    /health answers 200 with ``headers`` (fails the test, with the log's tail, if it exits or ``seconds`` pass;
    the encoder loads at startup and 2 shared cores can be slow); terminated (killed after 30 s) at exit."""
    import httpx

    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen([KGQA, "serve", "--port", str(port), *args], env=env, stdout=out, stderr=out)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + seconds
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"kgqa serve exited {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/health", headers=headers, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"kgqa serve did not answer /health: {log.read_text()[-2000:]}")
            time.sleep(1)
        yield base, proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def settings():
    from kgqa.core.config import Settings

    return Settings()


@pytest.fixture(scope="session")
def graph(settings):
    from kgqa.core.graph import Graph

    g = Graph(settings)
    g.verify()  # GraphUnavailable with one clear line when `make test` did not start Neo4j
    g.apply_schema()
    yield g
    g.close()


def run_kgqa(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 600):
    """Run the installed `kgqa` CLI as a user would; returns CompletedProcess."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("KGQA_DEBUG", None)
    return subprocess.run([KGQA, *args], env=full_env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def kill_once_started(cmd: list[str], progress, env: dict | None = None, timeout: float = 300) -> int:
    """Start ``cmd`` and SIGKILL it as soon as ``progress()`` (a count read from the graph) is above 0;
    returns that count. Asserts the process was killed, not finished: a resume test needs an interruption."""
    import signal
    import time

    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline and proc.poll() is None:
        seen = progress()
        if seen > 0:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the load finished before it could be killed"
    return seen


def assert_one_line_error(proc, *fragments: str, code: int | None = None):
    """The bad-input contract: non-zero exit, one line on stderr naming the problem, no traceback."""
    assert proc.returncode != 0, proc.stdout
    if code is not None:
        assert proc.returncode == code, (proc.returncode, proc.stderr)
    err = proc.stderr.strip()
    assert "Traceback" not in err, err
    assert len(err.splitlines()) == 1, err
    for f in fragments:
        assert f in err, err


def make_vispath(graph, encoder, chat, vision, options=None):
    """A VisPath over the given graph and (real or scripted) models, as the pipeline builds it."""
    from types import SimpleNamespace

    from kgqa.methods.vispath.algorithm import VisPath
    from kgqa.core.kg import KG
    from kgqa.core.method import Context

    models = SimpleNamespace(encoder=encoder, chat=chat, vision=vision)
    return VisPath(Context(settings=None, graph=graph, models=models, kg=KG(graph, encoder)), options)


@pytest.fixture()
def sample(tmp_path) -> Path:
    """A copy of the Wikidata5M sample (tests/fixtures/wd5m_sample) that the test may edit."""
    from tests.fakes.loader import SAMPLE

    dst = tmp_path / "wd5m"
    shutil.copytree(SAMPLE, dst)
    return dst
