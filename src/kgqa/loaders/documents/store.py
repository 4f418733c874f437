"""Step 9 and the stored documents: a document's rows written in one transaction, and
``kgqa docs list | show | rm``."""

from __future__ import annotations

from kgqa.loaders.documents.parse import ParsedDocument


def write_document(graph, doc: ParsedDocument, rows: dict, links: list[dict], counts: dict) -> None:
    """The whole document in ONE transaction: its previous version removed, the new one written, its
    content hash stored last (a killed write leaves the old or the new version, never a mix)."""
    from kgqa import cypher

    ents = [{k: v for k, v in e.items() if not k.startswith("_")} for e in rows["entities"]]

    def work(tx):
        def run(name, **params):
            return list(tx.run(cypher.load(name), params))

        run("docs_delete_document", id=doc.id)
        run("docs_write_document", doc=rows["document"])
        run("docs_write_chunks", doc_id=doc.id, chunks=rows["chunks"])
        if rows["images"]:
            run("docs_write_chunk_images", images=rows["images"])
        if ents:
            run("docs_write_entities", doc_id=doc.id, entities=ents)
        if rows["relations"]:
            run("docs_write_relations", doc_id=doc.id, relations=rows["relations"])
        if rows["regions"] or rows["rel_regions"]:
            run("docs_write_regions", doc_id=doc.id, regions=rows["regions"], rel_regions=rows["rel_regions"])
        if links:
            run("docs_write_same_as", links=links)
        run("docs_mark_complete", id=doc.id, content_hash=doc.content_hash, counts=counts)

    with graph.session() as s:
        graph._guard(lambda: s.execute_write(work))


def list_documents(graph) -> list[dict]:
    return graph.read("docs_list")


def show_document(graph, doc_id: str) -> dict | None:
    rows = graph.read("docs_show", id=doc_id)
    if not rows:
        return None
    r = rows[0]
    return {"document": r["document"], "chunks": [c for c in r["chunks"] if c],
            "entities": [e for e in r["entities"] if e], "relations": [x for x in r["relations"] if x]}


def remove_document(graph, doc_id: str) -> int:
    rows = graph.write("docs_delete_document", id=doc_id)
    return int(rows[0]["removed"]) if rows else 0
