"""The parsers' fuzz targets (tests/fuzz/parsers.py, atheris) on a fixed seed and budget, inside
``make test``: the Wikidata5M line parsers, the image checks, the Markdown, HTML and PDF parsers; no input may
end in anything but a result or one ``KgqaError`` line. (Longer runs: bench/fuzz.py.) Plus what fuzzing
found, as plain regression tests."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

RUNS = {"wd5m-line": 4000, "image": 4000, "markdown": 4000, "html": 3000, "pdf": 2000}


@pytest.mark.parametrize("target", sorted(RUNS))
def test_fuzzed_parser_input_never_ends_in_a_traceback(target, tmp_path):
    pytest.importorskip("atheris")
    p = subprocess.run([sys.executable, "-m", "tests.fuzz.parsers", "--target", target, f"-runs={RUNS[target]}",
                        "-seed=36", "-max_len=4096", "-len_control=0", "-rss_limit_mb=8192",
                        f"-artifact_prefix={tmp_path}/"], cwd=REPO, capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-4000:]
    assert "Uncaught Python exception" not in out, out[-4000:]
    assert f"#{RUNS[target]}\tDONE" in out, out[-2000:]


@pytest.mark.parametrize("html", ["<p>a <![YYYYYYJ b> c</p>", "<![", "<p>x</p><![ 1", "<![CDATA[ kept ]]><p>t</p>"])
def test_unknown_marked_sections_in_html_are_skipped_not_a_traceback(html):
    from kgqa.loaders.documents.parse import parse_html

    title, sections = parse_html(html)          # Python's HTMLParser raised AssertionError on the first three
    assert isinstance(sections, list)
