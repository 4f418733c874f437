"""Progress a user can follow when the loader's output goes to a log (not a terminal)."""

from __future__ import annotations

import io
import re


def test_log_progress_prints_phase_lines_and_periodic_rate_and_eta():
    from kgqa.loaders.progress import LogProgress

    out = io.StringIO()
    p = LogProgress(interval=0.0, out=out)
    t = p.add("facts", 1000)
    p.advance(t, 250)
    p.advance(t, 250)
    p.finish(t, 1000)
    lines = out.getvalue().splitlines()
    assert lines[0] == "kgqa load: facts: started (1,000 rows)"
    assert re.match(r"kgqa load: facts: 250/1,000 rows · [\d.,]+ rows/s · ETA [\d,]+ s$", lines[1]), lines[1]
    assert re.match(r"kgqa load: facts: 500/1,000 rows", lines[2])
    assert re.match(r"kgqa load: facts: done, 1,000 rows in [\d.,]+ s \([\d.,]+ rows/s\)$", lines[-1]), lines[-1]


def test_a_phase_counted_in_percent_says_percent_and_a_slow_rate_is_not_zero():
    from kgqa.loaders.progress import LogProgress

    out = io.StringIO()
    p = LogProgress(interval=0.0, out=out)
    t = p.add("neo4j-admin import (4 stages)", 400, unit="%")
    p.tasks[t]["t0"] -= 100.0                     # 100 s in: 40 % is 0.4 % a second
    p.advance(t, 40)
    line = out.getvalue().splitlines()[1]
    assert re.match(r"kgqa load: neo4j-admin import \(4 stages\): 40/400 % · 0\.4 %/s · ETA 9\d\d s$", line), line
    assert "rows" not in out.getvalue()


def test_log_progress_is_quiet_between_intervals_and_without_a_total():
    from kgqa.loaders.progress import LogProgress

    out = io.StringIO()
    p = LogProgress(interval=3600.0, out=out)
    t = p.add("validate entity.txt", None)
    for _ in range(100):
        p.advance(t, 50_000)
    p.finish(t, 5_000_000)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines                           # no line between the start and the end
    assert lines[0] == "kgqa load: validate entity.txt: started"   # no total: no "(N rows)"
    assert re.match(r"kgqa load: validate entity\.txt: done, 5,000,000 rows in [\d.,]+ s \([\d.,]+ rows/s\)$",
                    lines[1]), lines[1]


def test_bars_use_log_lines_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    import sys

    from kgqa.loaders.progress import Bars

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    with Bars(True) as bars:
        t = bars.add("entities", 10)
        bars.advance(t, 10)
        bars.finish(t, 10)
    out = capsys.readouterr()
    assert "kgqa load: entities: started (10 rows)" in out.out and "entities: done, 10 rows" in out.out
    assert out.err == ""                                    # stderr keeps the one-line error contract


def test_document_step_rate_counts_from_the_steps_start_not_its_first_report():
    """An encoder reports its first batch already done: the rate is over the time since the step began
    (the previous event), never units / 0 (it printed "1,024,000,000,000.0 texts/s · ETA 0 s")."""
    import time

    from kgqa.loaders.progress import DocumentProgress

    out = io.StringIO()
    with DocumentProgress(1, enabled=False, log=True, interval=0.0, out=out, big=10) as prog:
        prog.doc("big_doc")
        prog.stage("embeddings")
        time.sleep(0.05)
        prog.chunks("embeddings", 1024, 4096, unit="texts")
    line = [x for x in out.getvalue().splitlines() if "embeddings 1,024/4,096" in x][0]
    rate = float(re.search(r"· ([\d,.]+) texts/s", line).group(1).replace(",", ""))
    assert 0 < rate < 1024 / 0.04, line
