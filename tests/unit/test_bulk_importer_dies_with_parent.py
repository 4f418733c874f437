"""kill -9 of ``kgqa load --bulk`` while ``neo4j-admin import`` runs: the importer dies with it (its own
process group plus a parent-death signal), instead of running on as an orphan until the next load.

The parent here is a real Python process running the loader's ``_run_importer`` with a stand-in server
(its stop/start are no-ops) and a stand-in importer command (a sleeping Python whose command line says
AdminTool); the test reads the importer's pid from the state file, kill -9s the parent and waits for
the importer to be gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")

PARENT = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from types import SimpleNamespace
    from kgqa.loaders.wikidata5m.bulk import BulkState, _run_importer

    data = Path(sys.argv[1])
    class Server:
        home = conf_dir = data
        def stop(self): pass
        def start(self, wait_s=120.0): pass
        def status(self): return SimpleNamespace(running=True)
    state = BulkState(SimpleNamespace(data_dir=data))
    folder = data / "import" / "csv"
    folder.mkdir(parents=True)
    state.begin(folder)
    importer = [sys.executable, "-c", "import time; time.sleep(120)", "AdminTool"]
    _run_importer(state, Server(), importer, folder)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        return False


def test_kill_9_of_the_loader_takes_the_importer_with_it(tmp_path):
    import kgqa

    src = str(Path(kgqa.__file__).resolve().parents[1])     # the kgqa this test imports, for the parent too
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(tmp_path)], env=env)
    state = tmp_path / "import" / "bulk-state.json"
    importer = None
    deadline = time.monotonic() + 60
    while importer is None:
        assert parent.poll() is None, f"the stand-in loader exited {parent.returncode}"
        assert time.monotonic() < deadline, "the importer never started"
        try:
            importer = json.loads(state.read_text()).get("importer")
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(0.05)
    assert _alive(importer)
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
        deadline = time.monotonic() + 10
        while _alive(importer) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(importer), f"importer pid {importer} outlived its kill -9'd parent"
    finally:
        if _alive(importer):
            os.killpg(importer, signal.SIGKILL)


def test_the_importer_runs_in_its_own_process_group(tmp_path):
    from kgqa.loaders.wikidata5m.bulk import spawn_child

    with open(tmp_path / "log", "w") as out:
        proc = spawn_child([sys.executable, "-c", "import time; time.sleep(30)"], env=dict(os.environ), stdout=out)
    try:
        assert os.getpgid(proc.pid) == proc.pid != os.getpgid(0)
    finally:
        proc.kill()
        proc.wait(10)
