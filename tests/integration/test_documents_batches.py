"""A large document on the real Neo4j (issue 26, item 4): written in bounded transactions, and a load
killed after the 2nd of them leaves a document nothing takes for complete, which the rerun replaces
with exactly what an uninterrupted load writes (no duplicates, nothing of the partial one left).

The CPU extractor (KGQA_CHAT_BACKEND=none) and the real encoder; small chunks and a write batch of
40 rows make a 40-section document (80 chunks, 200 entities, 240 relations) take 13 transactions."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa.loaders.progress import DocumentProgress

DOC_ID = "batched-atlas"
BATCH = 40


class Killed(BaseException):
    """What a kill -9 after a commit amounts to for the graph: no further statement runs."""


class KillAfterBatches(DocumentProgress):
    """Progress that stops the load after ``n`` committed write transactions."""

    def __init__(self, n: int):
        super().__init__(1, enabled=False)
        self.n, self.commits = n, 0

    def chunks(self, what, done, total, unit="chunks"):
        super().chunks(what, done, total, unit)
        if what == "write":
            self.commits += 1
            if self.commits == self.n:
                raise Killed()


def _document(folder: Path, sections: int = 40) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    parts = ["# Batched Atlas\n\nThe Batched Atlas describes mountains and lakes.\n"]
    for i in range(sections):
        parts.append(f"## Region {i}\n\nMount Alder {i} lies north of Lake Briar {i} and was first climbed in "
                     f"{1800 + i}. Lake Briar {i} is {10 + i} km long.\n\nPopulation: {100 + i} people\n")
    (folder / f"{DOC_ID}.md").write_text("\n".join(parts), encoding="utf-8")
    return folder


def _counts(graph) -> dict:
    rows, _, _ = graph.driver.execute_query(
        "MATCH (n) WHERE n.doc_id = $id RETURN labels(n)[0] AS label, count(*) AS n, count(DISTINCT n.id) AS ids",
        {"id": DOC_ID}, database_=graph.settings.neo4j_database)
    nodes = {r["label"]: (r["n"], r["ids"]) for r in rows}
    rows, _, _ = graph.driver.execute_query(
        "MATCH (d:Document {id: $id}) OPTIONAL MATCH (d)-[h:HAS_CHUNK]->() "
        "WITH d, count(h) AS has_chunk "
        "OPTIONAL MATCH (e:DocEntity {doc_id: $id})-[r]->() "
        "RETURN count(DISTINCT d) AS documents, has_chunk, type(r) AS type, count(r) AS n",
        {"id": DOC_ID}, database_=graph.settings.neo4j_database)
    rels = {r["type"]: r["n"] for r in rows if r["type"]}
    docs = rows[0]["documents"] if rows else 0
    return {"nodes": nodes, "rels": rels, "documents": docs, "has_chunk": rows[0]["has_chunk"] if rows else 0}


@pytest.fixture()
def loader(graph, monkeypatch):
    monkeypatch.setenv("KGQA_CHAT_BACKEND", "none")
    monkeypatch.setenv("KGQA_DOC_EXTRACTOR", "cpu")
    from kgqa.core.config import Settings
    from kgqa.loaders.documents.loader import DocumentLoader
    from kgqa.loaders.documents.options import DocOptions
    from kgqa.models import build_models

    s = Settings()
    models = build_models(s, graph)
    return lambda: DocumentLoader(graph, models, s, DocOptions(chunk_tokens=40, write_batch=BATCH, link=False))


def test_a_large_document_killed_mid_write_is_replaced_exactly_by_the_rerun(graph, loader, tmp_path):
    from kgqa.loaders.documents.store import remove_document

    remove_document(graph, DOC_ID)
    folder = _document(tmp_path / "atlas")
    # the reference: one uninterrupted load
    rep = loader().load(folder)
    [res] = rep.documents
    assert res.status == "written" and res.chunks >= 40 and res.entities >= 120 and res.relations >= 120, res
    rows = res.chunks + res.entities + res.relations
    assert rows > 10 * BATCH                                    # a dozen transactions, not one
    want = _counts(graph)
    assert want["nodes"]["Chunk"] == (res.chunks, res.chunks) and want["has_chunk"] == res.chunks
    assert want["nodes"]["DocEntity"] == (res.entities, res.entities) and want["rels"]["DOC_REL"] == res.relations
    assert graph.read("docs_document_status", ids=[DOC_ID])[0]["status"] == "complete"

    # killed after the 2nd write transaction: a partial document, not complete, no content hash
    assert remove_document(graph, DOC_ID) > rows // 2
    assert _counts(graph)["documents"] == 0
    with pytest.raises(Killed):
        loader().load(folder, progress=KillAfterBatches(2))
    [st] = graph.read("docs_document_status", ids=[DOC_ID])
    assert st["status"] == "writing" and st["content_hash"] is None
    partial = _counts(graph)
    assert partial["nodes"]["Chunk"][0] == 2 * BATCH and "DocEntity" not in partial["nodes"]

    # the rerun: written again, exactly the uninterrupted load's nodes and relationships
    rep = loader().load(folder)
    assert [(d.id, d.status) for d in rep.documents] == [(DOC_ID, "written")]
    assert _counts(graph) == want
    assert graph.read("docs_document_status", ids=[DOC_ID])[0]["status"] == "complete"
    # and a third load sees it complete and unchanged
    assert [d.status for d in loader().load(folder).documents] == ["unchanged"]

    # killed while the changed document replaces the complete one: the old one is no longer taken for
    # complete (its parts are being removed), and the rerun writes the new one exactly
    doc = folder / f"{DOC_ID}.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("Mount Alder 7 ", "Mount Cedar 7 "), encoding="utf-8")
    with pytest.raises(Killed):
        loader().load(folder, progress=KillAfterBatches(3))
    assert graph.read("docs_document_status", ids=[DOC_ID])[0]["status"] == "writing"
    rep = loader().load(folder)
    assert [(d.id, d.status) for d in rep.documents] == [(DOC_ID, "written")]
    got = _counts(graph)
    assert got["nodes"]["Chunk"] == want["nodes"]["Chunk"] and got["documents"] == 1
    assert got["nodes"]["DocEntity"][0] == got["nodes"]["DocEntity"][1]        # no duplicates
    assert remove_document(graph, DOC_ID) > rows // 2
    assert _counts(graph)["documents"] == 0


def test_removal_deletes_a_documents_relationships_in_bounded_transactions(graph, loader, tmp_path):
    """A large document's relationships outnumber its nodes (a 500-page PDF: ~72,000 of them; deleting them
    with 500 nodes at once ran Neo4j's 1 GB heap out): each removal transaction deletes at most the batch."""
    from kgqa.loaders.documents.store import remove_document

    remove_document(graph, DOC_ID)
    rep = loader().load(_document(tmp_path / "atlas", sections=12))
    assert rep.documents[0].status == "written"
    total = sum(_counts(graph)["rels"].values())
    assert total > 100
    calls = []
    write = graph.write

    def spy(name, **params):
        rows = write(name, **params)
        calls.append((name, params.get("limit"), int(rows[0].get("removed", 0)) if rows else 0))
        return rows

    graph.write = spy
    try:
        assert remove_document(graph, DOC_ID, batch=BATCH, relation_batch=25) > 0
    finally:
        graph.write = write
    rel_calls = [c for c in calls if c[0] == "docs_delete_document_relations_batch"]
    assert all(n <= 25 for _, _, n in rel_calls) and sum(n for _, _, n in rel_calls) >= total
    assert len(rel_calls) >= total // 25
    assert _counts(graph)["documents"] == 0 and not _counts(graph)["nodes"]
