"""Two writers at once on the real Neo4j (issue 36): two ``kgqa load documents`` of the same folder started
together, and a ``kgqa docs rm`` of a document while it loads. One writer holds the database's lock; the
other is one line naming the holder's pid and command, exit 3, and writes nothing; a reader answers
meanwhile. After: every document once, 0 duplicates, 0 orphan chunks, and the refused load's rerun finds
everything unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import time

from tests.conftest import KGQA, run_kgqa

ENV = {"KGQA_DOC_EXTRACTOR": "cpu", "KGQA_CHAT_BACKEND": "none"}
N = 12


def _folder(root):
    d = root / "writers"
    d.mkdir()
    for i in range(N):
        (d / f"writer_doc_{i:02d}.md").write_text(
            f"# Writer document {i}\n\n## About\n\nWriter document {i} was written in {1900 + i} by Person {i}.\n"
            f"Its subject is topic number {i}, which borders topic number {i + 1}.\n", encoding="utf-8")
    return d


def _ids():
    return [f"writer_doc_{i:02d}" for i in range(N)]


def _rm_all(graph):
    from kgqa.loaders.documents.store import remove_document

    for i in _ids():
        remove_document(graph, i)


def _holder_pid(settings):
    from kgqa.core.writer_lock import lock_path

    try:
        return json.loads(lock_path(settings).read_text() or "{}").get("pid")
    except (OSError, ValueError):
        return None


def test_two_loads_of_one_folder_and_a_docs_rm_meanwhile(graph, settings, tmp_path):
    _rm_all(graph)
    folder = _folder(tmp_path)
    env = {**os.environ, **ENV}
    env.pop("KGQA_DEBUG", None)
    first = subprocess.Popen([KGQA, "load", "documents", str(folder), "--no-link", "--json"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _holder_pid(settings) != first.pid:
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first load never took the lock"
        time.sleep(0.05)
    second = run_kgqa("load", "documents", str(folder), "--no-link", "--json", env=ENV)
    rm = run_kgqa("docs", "rm", "writer_doc_00", env=ENV)
    reader = run_kgqa("docs", "list", "--json", env=ENV)
    out, err = first.communicate(timeout=1200)
    assert first.returncode == 0, err
    for p in (second, rm):
        assert p.returncode == 3, (p.returncode, p.stderr)
        line = p.stderr.strip()
        assert len(line.splitlines()) == 1 and "Traceback" not in line, line
        assert f"pid {first.pid}" in line and "load documents" in line, line
        assert p.stdout.strip() == ""
    assert reader.returncode == 0, reader.stderr                       # a reader is never held up
    assert json.loads(out)["written"] == N
    counts = graph._run(
        "UNWIND $ids AS id MATCH (d:Document {id: id}) WITH id, count(d) AS n "
        "RETURN count(id) AS docs, sum(CASE WHEN n > 1 THEN 1 ELSE 0 END) AS dup", {"ids": _ids()}, write=False)[0]
    assert (counts["docs"], counts["dup"]) == (N, 0)
    orphans = graph._run("MATCH (c:Chunk) WHERE NOT ()-[:HAS_CHUNK]->(c) RETURN count(c) AS n", {}, write=False)[0]
    assert orphans["n"] == 0
    again = run_kgqa("load", "documents", str(folder), "--no-link", "--json", env=ENV)
    assert again.returncode == 0 and json.loads(again.stdout)["unchanged"] == N, again.stderr
    rm = run_kgqa("docs", "rm", "writer_doc_00", env=ENV)               # the lock is free again
    assert rm.returncode == 0, rm.stderr
    _rm_all(graph)


def test_the_lease_is_taken_again_after_the_store_was_replaced_and_a_writer_in_between_is_refused(settings):
    """``--bulk``'s importer replaces the store: lease node and constraint gone (dropped here, as the new store
    has neither). The holder takes its lease again; had another writer taken it in between, the holder is
    refused (one line naming it) instead of writing beside it. Given back, no lease node is left."""
    import pytest

    from kgqa.core.graph import Graph
    from kgqa.core.writer_lease import WriterLease
    from kgqa.core.writer_lock import WriterBusy

    def store_replaced(g):
        g._run("MATCH (l:WriterLease) DELETE l", {}, write=True)
        g._run("DROP CONSTRAINT writer_lease_name IF EXISTS", {}, write=True)

    def leases(g):
        return g._run("MATCH (l:WriterLease) RETURN l.holder AS holder", {}, write=False)

    with Graph(settings) as g, Graph(settings) as other_g, Graph(settings) as lease_g:
        with WriterLease(lease_g, "kgqa load wikidata5m --bulk --path a") as lease:
            store_replaced(g)
            lease.retake()
            assert [r["holder"] for r in leases(g)] == [lease.holder]
            with pytest.raises(WriterBusy, match=r"kgqa load wikidata5m --bulk --path a"):
                WriterLease(other_g, "kgqa docs rm x").acquire()
            store_replaced(g)
            other = WriterLease(other_g, "kgqa docs rm x").acquire()      # came in between
            try:
                with pytest.raises(WriterBusy, match=r"`kgqa docs rm x`"):
                    lease.retake()
            finally:
                other.release()
        assert leases(g) == []
        names = {r["name"] for r in g._run("SHOW CONSTRAINTS YIELD name RETURN name", {}, write=False)}
        assert "writer_lease_name" in names
