"""How a document's rows are cut into write transactions (issue 26, item 4): bounded, in the order the
statements' MATCHes need, nothing lost or repeated; and the progress lines of one large document."""

from __future__ import annotations

import io

from kgqa.loaders.documents.store import _steps, plan_transactions


def _rows(chunks=0, entities=0, relations=0, regions=0, images=0):
    return {"chunks": [{"id": f"c{i}"} for i in range(chunks)],
            "images": [{"chunk_id": f"c{i}"} for i in range(images)],
            "entities": [{"id": f"e{i}", "_name_vec": [0.0]} for i in range(entities)],
            "relations": [{"id": f"r{i}"} for i in range(relations)],
            "regions": [{"id": f"g{i}"} for i in range(regions)], "rel_regions": []}


def test_a_small_document_is_one_transaction():
    txs = plan_transactions(_steps("d", _rows(3, 2, 1, 1, 1), [{"docentity_id": "e0"}]), 500)
    assert len(txs) == 1
    assert [name for name, _, _ in txs[0]] == ["docs_write_chunks", "docs_write_chunk_images", "docs_write_entities",
                                               "docs_write_relations", "docs_write_regions", "docs_write_same_as"]


def test_a_large_document_is_cut_into_bounded_transactions_in_order_with_every_row_once():
    rows = _rows(chunks=1234, entities=321, relations=456, regions=3, images=7)
    txs = plan_transactions(_steps("d", rows, [{"docentity_id": "e1"}] * 5), 100)
    assert all(sum(n for _, _, n in tx) <= 100 for tx in txs)
    assert len(txs) == -(-(1234 + 321 + 456 + 3 + 7 + 5) // 100)           # full transactions but the last
    flat = [(name, p) for tx in txs for name, p, _ in tx]
    order = [name for name, _ in flat]
    # every chunk before any image or entity (FROM_CHUNK matches chunks), every entity before a relation
    assert max(i for i, n in enumerate(order) if n == "docs_write_chunks") < order.index("docs_write_chunk_images")
    assert max(i for i, n in enumerate(order) if n == "docs_write_entities") < order.index("docs_write_relations")
    assert [c["id"] for n, p in flat if n == "docs_write_chunks" for c in p["chunks"]] == [f"c{i}" for i in range(1234)]
    ents = [e for n, p in flat if n == "docs_write_entities" for e in p["entities"]]
    assert [e["id"] for e in ents] == [f"e{i}" for i in range(321)] and not any("_name_vec" in e for e in ents)
    assert all(p["doc_id"] == "d" for n, p in flat if n != "docs_write_same_as" and n != "docs_write_chunk_images")


def test_progress_of_one_large_document_names_each_step_with_its_own_rate():
    from kgqa.loaders.progress import DocumentProgress

    out = io.StringIO()
    with DocumentProgress(1, enabled=False, log=True, interval=0.0, out=out, big=10) as prog:
        prog.doc("big")
        prog.note("5.0 MB in 20 chunks", 20)
        for i in (8, 16, 20):
            prog.chunks("embeddings", i, 20)
        for i in (50, 60):
            prog.chunks("write", i, 60, unit="rows")
        prog.advance()
    lines = out.getvalue().splitlines()
    assert "kgqa load documents: big: 5.0 MB in 20 chunks" in lines
    assert any(x.startswith("kgqa load documents: big: embeddings 8/20 chunks · ") and "chunks/s · ETA" in x
               for x in lines), lines
    assert any(x.startswith("kgqa load documents: big: embeddings done, 20 chunks in ") for x in lines), lines
    assert any(x.startswith("kgqa load documents: big: write 50/60 rows · ") and "rows/s · ETA" in x for x in lines)
    assert any(x.startswith("kgqa load documents: big: write done, 60 rows in ") for x in lines), lines
