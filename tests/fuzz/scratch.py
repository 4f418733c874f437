"""The fuzz harnesses' scratch folder (tests/fuzz/loaders.py, tests/fuzz/parsers.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def work_dir() -> Path:
    """This run's scratch folder, ``kgqa-fuzz-<pid>-…`` in /dev/shm. libFuzzer ends the process without
    Python's clean-up, so a run first removes the folders of earlier runs whose pid no longer runs."""
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    for old in base.glob("kgqa-fuzz-*-*"):
        pid = old.name.split("-")[2]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"kgqa-fuzz-{os.getpid()}-", dir=base))
