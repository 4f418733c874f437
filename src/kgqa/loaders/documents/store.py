"""Step 9 and the stored documents: a document's rows written in bounded transactions, and
``kgqa docs list | show | rm``.

A document of at most ``batch`` rows is written in ONE transaction that first removes its previous
version and ends by marking it complete: a killed write leaves the old or the new version. A larger
one is written in transactions of at most ``batch`` rows each (chunks, images, entities, relations,
regions, SAME_AS links, in that order); its ``Document`` node says ``status: 'writing'`` from the first
of them until the last one sets ``status: 'complete'`` and the content hash. Retrieval reads complete
documents only, and the next load replaces a document that is not complete: a load killed in the
middle of a large document leaves a document that nothing takes for complete, and the rerun removes
it (in bounded transactions too) and writes it again, exactly."""

from __future__ import annotations

from typing import Callable

from kgqa.loaders.documents.parse import ParsedDocument

#: rows per write transaction (chunks, entities, relations, ... each count one)
WRITE_BATCH = 500
#: relationships removed per transaction by ``remove_document`` (a 500-page PDF has ~72,000)
RELATION_BATCH = 10_000


def _steps(doc_id: str, rows: dict, links: list[dict]) -> list[tuple[str, str, list, dict]]:
    """(statement, its list parameter, the rows, other parameters), in the order their MATCHes need."""
    ents = [{k: v for k, v in e.items() if not k.startswith("_")} for e in rows["entities"]]
    d = {"doc_id": doc_id}
    return [("docs_write_chunks", "chunks", rows["chunks"], d),
            ("docs_write_chunk_images", "images", rows["images"], {}),
            ("docs_write_entities", "entities", ents, d),
            ("docs_write_relations", "relations", rows["relations"], d),
            ("docs_write_regions", "regions", rows["regions"], {**d, "rel_regions": []}),
            ("docs_write_regions", "rel_regions", rows["rel_regions"], {**d, "regions": []}),
            ("docs_write_same_as", "links", links, {})]


def plan_transactions(steps: list[tuple[str, str, list, dict]], batch: int) -> list[list[tuple[str, dict, int]]]:
    """The statements of ``steps`` cut into transactions of at most ``batch`` rows: each transaction a
    list of (statement, parameters, rows); a step's rows may span transactions, in order."""
    batch = max(1, int(batch))
    txs: list[list[tuple[str, dict, int]]] = [[]]
    room = batch
    for name, key, items, params in steps:
        i = 0
        while i < len(items):
            if room == 0:
                txs.append([])
                room = batch
            part = items[i:i + room]
            txs[-1].append((name, {**params, key: part}, len(part)))
            i += len(part)
            room -= len(part)
    return txs


def write_document(graph, doc: ParsedDocument, rows: dict, links: list[dict], counts: dict,
                   batch: int = WRITE_BATCH, old: dict | None = None,
                   on_batch: Callable[[int, int], None] | None = None) -> int:
    """Write the document (replacing ``old``, its stored status row, if any) in transactions of at most
    ``batch`` rows; ``on_batch(rows_done, rows_total)`` after each commit. Returns the transactions used.

    The previous version goes in the first transaction when it is a complete document of at most
    ``batch`` nodes; otherwise it is first marked 'writing' and removed in bounded transactions."""
    from kgqa import cypher

    if old is not None and (old.get("nodes") is None or old["nodes"] > batch):
        remove_document(graph, doc.id, batch)
    txs = plan_transactions(_steps(doc.id, rows, links), batch)
    total = sum(n for tx in txs for _, _, n in tx)
    done = 0

    def work(tx, statements, first, last):
        if first:
            tx.run(cypher.load("docs_delete_document"), {"id": doc.id}).consume()
            tx.run(cypher.load("docs_write_document"), {"doc": rows["document"]}).consume()
        for name, params, _ in statements:
            tx.run(cypher.load(name), params).consume()
        if last:
            tx.run(cypher.load("docs_mark_complete"),
                   {"id": doc.id, "content_hash": doc.content_hash, "link_key": doc.link_key or None,
                    "counts": counts}).consume()

    with graph.session() as s:
        for i, statements in enumerate(txs):
            graph._guard(lambda: s.execute_write(work, statements, i == 0, i == len(txs) - 1))
            done += sum(n for _, _, n in statements)
            if on_batch is not None:
                on_batch(done, total)
    return len(txs)


def list_documents(graph) -> list[dict]:
    return graph.read("docs_list")


def show_document(graph, doc_id: str) -> dict | None:
    rows = graph.read("docs_show", id=doc_id)
    if not rows:
        return None
    r = rows[0]
    return {"document": r["document"], "chunks": [c for c in r["chunks"] if c],
            "entities": [e for e in r["entities"] if e], "relations": [x for x in r["relations"] if x]}


def remove_document(graph, doc_id: str, batch: int = WRITE_BATCH, relation_batch: int = RELATION_BATCH) -> int:
    """Remove a document: marked 'writing' (no longer complete), the relationships of its entities and
    regions removed ``relation_batch`` at a time, its inner nodes ``batch`` at a time, then the ``Document``
    node: every transaction bounded, so a large document goes within Neo4j's default heap. Returns the
    nodes removed (0 when it is not there)."""
    if not graph.write("docs_mark_writing", id=doc_id):
        return 0
    while True:
        rows = graph.write("docs_delete_document_relations_batch", id=doc_id, limit=max(1, int(relation_batch)))
        if not rows or int(rows[0]["removed"]) == 0:
            break
    removed = 0
    while True:
        rows = graph.write("docs_delete_document_batch", id=doc_id, limit=max(1, int(batch)))
        n = int(rows[0]["removed"]) if rows else 0
        removed += n
        if n == 0:
            break
    rows = graph.write("docs_delete_document", id=doc_id)
    return removed + (int(rows[0]["removed"]) if rows else 0)


def sweep_figures(graph, figures_dir) -> int:
    """Remove the figure files under ``figures_dir`` (``<sha256>.<ext>``, saved from PDFs) whose ``Image``
    node the graph no longer holds; returns how many. Call it under the writer lock: a load running beside
    it saves its figures before it writes their nodes."""
    import re
    from pathlib import Path

    folder = Path(figures_dir)
    if not folder.is_dir():
        return 0
    files = {}
    for f in folder.iterdir():
        if f.is_file() and re.fullmatch(r"[0-9a-f]{64}", f.stem):
            files.setdefault(f.stem, []).append(f)
    if not files:
        return 0
    present = {r["sha256"] for r in graph.read("docs_images_present", sha256s=sorted(files))}
    gone = 0
    for sha, paths in files.items():
        if sha in present:
            continue
        for f in paths:
            f.unlink(missing_ok=True)
            gone += 1
    return gone

