"""The fuzz run of both loaders' validation (tests/fuzz/loaders.py, atheris) on a fixed budget:
3,000 inputs from a fixed seed, none of which may end in anything but accepted rows or one
InvalidInput line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow


def test_fuzzed_input_files_never_end_in_a_traceback():
    pytest.importorskip("atheris")
    p = subprocess.run([sys.executable, "-m", "tests.fuzz.loaders", "-runs=3000", "-seed=26", "-max_len=2048",
                        "-len_control=0",
                        "-rss_limit_mb=8192"], cwd=REPO, capture_output=True, text=True, timeout=900)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    assert "Traceback" not in out and "Uncaught Python exception" not in out, out[-4000:]
    assert "#3000\tDONE" in out, out[-2000:]
