"""A PDF load killed with SIGKILL in the middle of its embedding resumes (issue 35): ``kgqa load documents`` of a
multi-page PDF with figures is killed as soon as it has saved its first slice of vectors; the rerun says it
resumed from them, computes only the rest, and writes exactly what a clean load writes (chunks, entities,
relations, figures, regions; no duplicates); the saved vectors go once the document is complete, and
``kgqa docs rm`` removes those an interrupted load left. The real Neo4j, the real encoder, the CPU extractor."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import pytest

from tests.conftest import KGQA, run_kgqa
from tests.pdfs import IMAGES, make_pdf

pytestmark = [pytest.mark.integration]

DOC_ID = "resume-plants"
ENV = {"KGQA_CHAT_BACKEND": "none", "KGQA_DOC_EXTRACTOR": "cpu"}
PLACES = ["Kamarsen", "Holbeck", "Tarvos", "Ulmenau"]


def _pdf(folder):
    """About 14 A4 pages: 7 sections, a figure with its caption in every other one, 96 sentences each
    (≈ 3,000 texts to embed: three slices of ``EMBED_SLICE``)."""
    from reportlab.lib.pagesizes import A4

    images = sorted(IMAGES.glob("*.jpg"))
    sections = []
    for k in range(7):
        place = PLACES[k % len(PLACES)]
        paras = [" ".join(f"Unit {k * 40 + j * 8 + i} of the {place} plant runs at {(k + i + j) % 90 + 10} bar and "
                          f"was serviced in {1950 + (k * 7 + i + j) % 70}." for i in range(8)) for j in range(12)]
        figs = [(images[k % len(images)], f"Figure {k // 2 + 1}: the {place} plant")] if k % 2 == 0 else []
        sections.append((f"Section {k + 1}: the {place} plant", paras, figs))
    folder.mkdir(parents=True, exist_ok=True)
    return make_pdf(folder / f"{DOC_ID}.pdf", "Plant records", sections, page_size=A4,
                    page_break_before={h for h, _, _ in sections[1:]})


def kill_after_first_slice(folder, saved) -> None:
    """Start ``kgqa load documents folder`` and kill it (SIGKILL) as soon as a slice of vectors is saved."""
    proc = subprocess.Popen([KGQA, "load", "documents", str(folder), "--no-link"],
                            env={**os.environ, **ENV}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t = time.monotonic()
    while proc.poll() is None and not list(saved.glob("part-*.npz")) and time.monotonic() - t < 300:
        time.sleep(0.05)
    assert proc.poll() is None, "the load ended before it saved a slice of vectors"
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def _counts(graph) -> dict:
    """The document's nodes and relationships, each with its count of distinct ids (a duplicate shows)."""
    q = ("MATCH (d:Document {id: $id}) "
         "OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) WITH d, count(c) AS chunks, count(DISTINCT c.id) AS chunk_ids "
         "OPTIONAL MATCH (:Chunk {doc_id: $id})-[h:HAS_IMAGE]->(:Image) WITH d, chunks, chunk_ids, count(h) AS figures "
         "OPTIONAL MATCH (e:DocEntity {doc_id: $id}) WITH d, chunks, chunk_ids, figures, count(e) AS entities, "
         "  count(DISTINCT e.id) AS entity_ids "
         "OPTIONAL MATCH (:DocEntity {doc_id: $id})-[r:DOC_REL]->() WITH d, chunks, chunk_ids, figures, entities, "
         "  entity_ids, count(r) AS relations, count(DISTINCT r.id) AS relation_ids "
         "OPTIONAL MATCH (g:Region {doc_id: $id}) "
         "RETURN d.status AS status, chunks, chunk_ids, figures, entities, entity_ids, relations, relation_ids, "
         "  count(g) AS regions, count(DISTINCT g.id) AS region_ids")
    rows, _, _ = graph.driver.execute_query(q, {"id": DOC_ID}, database_=graph.settings.neo4j_database)
    return dict(rows[0]) if rows else {}


def test_a_pdf_load_killed_after_its_first_saved_vectors_resumes_and_equals_a_clean_load(graph, settings, tmp_path):
    from kgqa.loaders.documents.embed import EMBED_SLICE
    from kgqa.loaders.documents.embed_cache import cache_root, doc_folder

    folder = _pdf(tmp_path / "pdf")
    saved = doc_folder(cache_root(settings.data_dir), DOC_ID)
    run_kgqa("docs", "rm", DOC_ID)
    # the reference: one clean load; nothing is left saved once it is complete
    p = run_kgqa("load", "documents", str(folder), "--no-link", env=ENV)
    assert p.returncode == 0, p.stderr
    assert "resumed" not in p.stdout
    clean = _counts(graph)
    assert clean["status"] == "complete" and clean["chunks"] >= 20 and clean["figures"] == 4, clean
    assert clean["regions"] >= 1 and clean["relations"] > EMBED_SLICE, clean
    assert not saved.exists()
    for what in ("chunk", "entity", "relation", "region"):
        assert clean[f"{what}_ids"] == clean[f"{what}s" if what != "entity" else "entities"], clean

    # killed (SIGKILL) as soon as its first slice of vectors is on disk: nothing in the graph yet
    assert run_kgqa("docs", "rm", DOC_ID).returncode == 0
    kill_after_first_slice(folder, saved)
    parts = list(saved.glob("part-*.npz"))
    assert parts and _counts(graph) == {}

    # the rerun resumes: it says how much it took from the killed load, and computes only the rest
    p = run_kgqa("load", "documents", str(folder), "--no-link", env=ENV)
    assert p.returncode == 0, p.stderr
    m = re.search(r"resumed after page (\d+) of (\d+): ([\d,]+) of ([\d,]+) vectors saved by an interrupted load "
                  r"reused", p.stdout)
    assert m, p.stdout
    reused, total = int(m[3].replace(",", "")), int(m[4].replace(",", ""))
    assert len(parts) * EMBED_SLICE <= reused < total and 1 <= int(m[1]) < int(m[2]), m[0]
    assert "documents: 1 written" in p.stdout
    # exactly the clean load's document: counts equal, no duplicates, and the saved vectors gone
    assert _counts(graph) == clean
    assert not saved.exists()

    # a killed load leaves vectors that kgqa docs rm removes, also when the graph holds nothing of it
    assert run_kgqa("docs", "rm", DOC_ID).returncode == 0
    kill_after_first_slice(folder, saved)
    assert list(saved.glob("part-*.npz"))
    p = run_kgqa("docs", "rm", DOC_ID)
    assert p.returncode == 0 and "removed the vectors an interrupted load had saved" in p.stdout, p.stdout + p.stderr
    assert not saved.exists()
    assert run_kgqa("docs", "rm", DOC_ID).returncode == 2
