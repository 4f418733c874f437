"""A full disk during a load (issue 36): the data dir on a small tmpfs (``mount -t tmpfs -o size=…``, root
only: skipped with the reason elsewhere). The load stops with one line naming the path, what is free
there and about how much it needs (exit 5), no traceback, nothing half-written; the same command after space is
freed completes with exact counts (and the rejects file it then writes is about the size the line said).

* the rejects file of a ``--lenient`` Wikidata5M load (written while validating, before any write);
* the importer's CSVs of a ``--bulk`` load (the server's store is elsewhere; it never stops: the CSVs are
  written first, and the local server is not this data dir's, so --bulk prints its next steps)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_kgqa
from tests.faults.test_kill_neo4j import _count, _wipe

N = 200          # entities; N good triples, BAD bad ones


def _mount(where: Path, size: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                       text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a size-limited tmpfs here ({(p.stderr or p.stdout).strip()[:120]}): "
                    "the disk-full cases need root or a user namespace")


def _umount(where: Path) -> None:
    subprocess.run(["umount", str(where)], capture_output=True)


@pytest.fixture()
def small_disk(tmp_path):
    where = tmp_path / "small"
    _mount(where, "128k")
    yield where
    _umount(where)


def _folder(root: Path, bad: int) -> Path:
    d = root / "wd5m"
    d.mkdir()
    (d / "wikidata5m_relation.txt").write_text("P1\tlinked to\n", encoding="utf-8")
    (d / "wikidata5m_entity.txt").write_text("".join(f"Q{i}\tentity {i}\n" for i in range(1, N + 1)),
                                             encoding="utf-8")
    (d / "wikidata5m_transductive_train.txt").write_text(
        "".join(f"Q{i}\tP1\tQ{i % N + 1}\n" for i in range(1, N + 1))
        + "".join(f"Q{i}\tP1\tQ9{i:07d}\n" for i in range(1, bad + 1)), encoding="utf-8")
    for split in ("valid", "test"):
        (d / f"wikidata5m_transductive_{split}.txt").write_text("", encoding="utf-8")
    return d


def _one_line_no_space(p, where: Path) -> None:
    assert p.returncode == 5, (p.returncode, p.stderr[-2000:])
    err = p.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err[-2000:]
    assert "no space left writing" in err and str(where) in err and "MB free there" in err, err
    assert "MB needed" in err, err                      # about how much the write needs, from its own figures


def _needed_mb(err: str) -> float:
    return float(err.split("about ", 1)[1].split(" MB needed", 1)[0].replace(",", ""))


def test_rejects_file_on_a_full_disk_then_a_rerun_with_space(graph, server, tmp_path, small_disk):
    _wipe(graph)
    folder = _folder(tmp_path, bad=6000)          # ~6,000 rejects lines: far over 128 KB
    env = {"KGQA_DATA_DIR": str(small_disk)}
    p = run_kgqa("load", "wikidata5m", "--path", str(folder), "--lenient", "--no-embeddings", "--json", env=env)
    _one_line_no_space(p, small_disk)
    assert "(the rejects file)" in p.stderr and "at that rate over the rest of the input" in p.stderr, p.stderr
    needed = _needed_mb(p.stderr)
    print(p.stderr.strip())
    assert _count(graph, "MATCH (e:Entity) RETURN count(e) AS n") == 0          # validated first: nothing written
    _umount(small_disk)
    _mount(small_disk, "16m")                                                    # space freed
    p = run_kgqa("load", "wikidata5m", "--path", str(folder), "--lenient", "--no-embeddings", "--json", env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    rejects = max((small_disk / "rejects").glob("*.tsv"), key=lambda f: f.stat().st_mtime)
    print(f"the rejects file took {rejects.stat().st_size / 1e6:.2f} MB; the line said about {needed:.2f} MB")
    assert 0.7 < needed * 1e6 / rejects.stat().st_size < 1.5, (needed, rejects.stat().st_size)   # "about": it was
    assert _count(graph, "MATCH (e:Entity) RETURN count(e) AS n") == N
    assert _count(graph, "MATCH (:Entity)-[r:P1]->(:Entity) RETURN count(r) AS n") == N
    assert _count(graph, "MATCH (e:Entity) WITH e.id AS id, count(*) AS c WHERE c > 1 RETURN count(id) AS n") == 0
    _wipe(graph)


def test_bulk_csvs_on_a_full_disk_leave_nothing_behind(graph, server, tmp_path, small_disk):
    _wipe(graph)
    big = _folder(tmp_path, bad=0)
    with open(big / "wikidata5m_entity.txt", "a", encoding="utf-8") as f:     # CSVs well over 128 KB
        f.writelines(f"Q{i}\tentity {i} with a longer name to fill the CSV\talias {i}\n" for i in range(N + 1, 8000))
    env = {"KGQA_DATA_DIR": str(small_disk)}
    p = run_kgqa("load", "wikidata5m", "--path", str(big), "--bulk", "--no-embeddings", "--json", env=env)
    _one_line_no_space(p, small_disk)
    assert "MB needed" in p.stderr and "CSVs" in p.stderr, p.stderr
    print(p.stderr.strip())
    assert not any((small_disk / "import").glob("wikidata5m-*")), list((small_disk / "import").iterdir())
    assert _count(graph, "MATCH (n) RETURN count(n) AS n") == 0
    assert os.listdir(small_disk)    # the state file's folder is there; no CSV is
