"""Documents on the real Neo4j (issue 26, items 3 and 4): an id from another folder never replaces a
loaded document silently; a rerun of the same folder stays idempotent; a change of extractor (a
graph-only load, then a live one) re-extracts instead of saying "unchanged"; ``--force`` re-extracts
on demand (issue 36)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import assert_one_line_error, run_kgqa

LLM_EXTRACTOR = {"KGQA_DOC_EXTRACTOR": "llm"}      # graph-only vs live is a change of the paper's LLM extractor
GRAPH_ONLY = {"KGQA_CHAT_BACKEND": "none", **LLM_EXTRACTOR}


def _folder(root: Path, name: str, text: str) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "collins.md").write_text(f"# Collins\n\n## About\n\n{text}\n", encoding="utf-8")
    return d


def _rm(graph, *ids):
    from kgqa.loaders.documents.store import remove_document

    for i in ids:
        remove_document(graph, i)


def _chunk_texts(graph, doc_id):
    from kgqa.loaders.documents.store import show_document

    return [c["text"] for c in show_document(graph, doc_id)["chunks"]]


def test_same_id_from_another_folder_is_one_line_never_a_silent_replacement(graph, tmp_path):
    _rm(graph, "collins")
    a = _folder(tmp_path, "a", "Collins of folder A is an astronaut.")
    b = _folder(tmp_path, "b", "Collins of folder B is a publisher.")
    p = run_kgqa("load", "documents", str(a), "--json", env=GRAPH_ONLY)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["written"] == 1
    # strict: one line, exit 2, nothing replaced
    p = run_kgqa("load", "documents", str(b), env=GRAPH_ONLY)
    assert_one_line_error(p, "b/collins.md", "document id 'collins' is already loaded from another file",
                          "kgqa docs rm collins", code=2)
    assert _chunk_texts(graph, "collins") == ["About\nCollins of folder A is an astronaut."]
    # lenient: skipped and counted, still not replaced
    p = run_kgqa("load", "documents", str(b), "--lenient", "--json", env=GRAPH_ONLY)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert (rep["written"], rep["replaced"], rep["skipped"]) == (0, 0, {"id loaded from another file": 1})
    assert _chunk_texts(graph, "collins") == ["About\nCollins of folder A is an astronaut."]
    # the same folder again, by a relative path from elsewhere: idempotent
    p = run_kgqa("load", "documents", "a", "--json", env=GRAPH_ONLY, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["unchanged"] == 1
    # after `kgqa docs rm collins`, folder B's document loads
    assert run_kgqa("docs", "rm", "collins").returncode == 0
    p = run_kgqa("load", "documents", str(b), "--json", env=GRAPH_ONLY)
    assert p.returncode == 0 and json.loads(p.stdout)["written"] == 1
    assert _chunk_texts(graph, "collins") == ["About\nCollins of folder B is a publisher."]
    _rm(graph, "collins")


def test_the_same_document_from_a_moved_checkout_is_unchanged_and_comes_from_there_after(graph, tmp_path):
    """`make demo` from a second clone (or a moved one) loads the bundled corpus again: same ids, same content,
    other paths. That is the same document, not another file's: unchanged, and its next edit there replaces it."""
    _rm(graph, "collins")
    a = _folder(tmp_path, "a", "Collins of the first clone is an astronaut.")
    b = _folder(tmp_path, "b", "Collins of the first clone is an astronaut.")       # a copy, same content
    assert run_kgqa("load", "documents", str(a), "--json", env=GRAPH_ONLY).returncode == 0
    p = run_kgqa("load", "documents", str(b), "--json", env=GRAPH_ONLY)
    assert p.returncode == 0, p.stderr
    assert (json.loads(p.stdout)["unchanged"], json.loads(p.stdout)["written"]) == (1, 0)
    (b / "collins.md").write_text("# Collins\n\n## About\n\nCollins of the second clone is a publisher.\n",
                                  encoding="utf-8")
    p = run_kgqa("load", "documents", str(b), "--json", env=GRAPH_ONLY)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["replaced"] == 1
    assert _chunk_texts(graph, "collins") == ["About\nCollins of the second clone is a publisher."]
    # the first folder is now the other file: its (different) content is refused, naming where the id comes from
    p = run_kgqa("load", "documents", str(a), env=GRAPH_ONLY)
    assert_one_line_error(p, "a/collins.md", "already loaded from another file", str(b / "collins.md"), code=2)
    _rm(graph, "collins")


def test_a_document_whose_file_is_gone_is_replaced_by_the_same_id_from_another(graph, tmp_path):
    """The first clone deleted, a newer one loads its (changed) corpus: the old file has no claim left."""
    import shutil

    _rm(graph, "collins")
    a = _folder(tmp_path, "a", "Collins of the deleted clone is an astronaut.")
    b = _folder(tmp_path, "b", "Collins of the new clone is a publisher.")
    assert run_kgqa("load", "documents", str(a), "--json", env=GRAPH_ONLY).returncode == 0
    shutil.rmtree(a)
    p = run_kgqa("load", "documents", str(b), "--json", env=GRAPH_ONLY)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["replaced"] == 1
    assert _chunk_texts(graph, "collins") == ["About\nCollins of the new clone is a publisher."]
    _rm(graph, "collins")


def test_a_graph_only_load_is_re_extracted_by_a_live_one(graph, tmp_path):
    """The document node records its extractor; "unchanged" compares it too."""
    _rm(graph, "collins")
    a = _folder(tmp_path, "a", "Michael Collins flew on Apollo 11 with Neil Armstrong.")
    p = run_kgqa("load", "documents", str(a), "--no-link", "--json", env=GRAPH_ONLY)
    assert p.returncode == 0, p.stderr
    assert graph.read("docs_document_status", ids=["collins"])[0]["extractor"].split(" · ")[1].startswith("none:")
    p = run_kgqa("load", "documents", str(a), "--no-link", "--json", "--replay-cache", str(tmp_path / "replay"), env=LLM_EXTRACTOR)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert (rep["unchanged"], rep["replaced"], rep["re_extracted"]) == (0, 0, 1), rep
    assert graph.read("docs_document_status", ids=["collins"])[0]["extractor"].split(" · ")[1].startswith("local:")
    p = run_kgqa("load", "documents", str(a), "--no-link", "--json", "--replay-cache", str(tmp_path / "replay"), env=LLM_EXTRACTOR)
    assert json.loads(p.stdout)["unchanged"] == 1                  # same extractor, same text: skipped
    _rm(graph, "collins")


def test_force_re_extracts_an_unchanged_document_exactly(graph, tmp_path):
    _rm(graph, "collins")
    a = _folder(tmp_path, "a", "Michael Collins flew on Apollo 11 with Neil Armstrong.")
    p = run_kgqa("load", "documents", str(a), "--no-link", "--json")
    assert p.returncode == 0, p.stderr
    before = graph._run("MATCH (d:Document {id: 'collins'})-[:HAS_CHUNK]->(c) RETURN count(c) AS n", {},
                        write=False)[0]["n"]
    p = run_kgqa("load", "documents", str(a), "--no-link", "--json")
    assert json.loads(p.stdout)["unchanged"] == 1
    p = run_kgqa("load", "documents", str(a), "--no-link", "--json", "--force")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert (rep["unchanged"], rep["re_extracted"], rep["written"], rep["replaced"]) == (0, 1, 0, 0), rep
    assert [d["status"] for d in rep["documents"]] == ["re-extracted"]
    after = graph._run("MATCH (d:Document {id: 'collins'})-[:HAS_CHUNK]->(c) RETURN count(d) AS docs, "
                       "count(c) AS n", {}, write=False)[0]
    assert after["n"] == before and graph._run("MATCH (d:Document {id: 'collins'}) RETURN count(d) AS n", {},
                                                write=False)[0]["n"] == 1
    p = run_kgqa("load", "documents", str(a), "--no-link")
    assert p.returncode == 0 and "0 re-extracted, 0 relinked, 1 unchanged" in p.stdout, p.stdout
    _rm(graph, "collins")
