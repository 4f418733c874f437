"""mKG-RAG with the learned span reader (``-o reader=learned``, the shipped checkpoint in data/reader/, real
weights), end to end: real files loaded with ``kgqa load documents`` into the real Neo4j, questions asked with
``kgqa ask`` (tests/fixtures/docs_formats, the documents test_mkgrag_inputs.py reads with the rule reader).

* the span of a multi-word name is whole ("Ada Ringstrom", not "Ada" nor "engineer Ada Ringstrom");
* a fact that only a table row holds (an HTML ``<table>``) is read from that row, and cited;
* a question no loaded document answers is abstained on;
* a hostile page (text that tells the reader to answer HACKED) stays data: a question about that page is
  answered from its one factual sentence, and the answer to a question about another document is unchanged.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, run_kgqa

FIX = REPO / "tests" / "fixtures" / "docs_formats"
CPU = {"KGQA_DOC_EXTRACTOR": "cpu", "KGQA_CHAT_BACKEND": "none"}
SHIPPED = REPO / "data" / "reader" / "span-reader.safetensors"
LIGHTHOUSE = "Who designed the Kestrel Point Lighthouse?"

pytestmark = pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped span-reader checkpoint")


@pytest.fixture(scope="module")
def loaded(demo_kg):
    from kgqa.loaders.documents.store import remove_document

    for i in ("marlow_botanical_garden", "notice"):
        remove_document(demo_kg, i)
    for args in (("load", "documents", str(FIX / "evqa"), "--images", str(FIX / "evqa" / "images")),
                 ("load", "documents", str(FIX / "html"))):
        p = run_kgqa(*args, "--json", env=CPU)
        assert p.returncode == 0, p.stderr
    return demo_kg


def ask(question: str) -> dict:
    p = run_kgqa("ask", question, "--method", "mkgrag", "-o", "reader=learned", "--json", env=CPU)
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    assert a["details"]["cpu_reader"] == "learned", a["details"]          # not the rule reader's fallback
    return a


def test_the_span_of_a_multi_word_name_is_whole(loaded):
    a = ask(LIGHTHOUSE)
    assert a["answer"] == "Ada Ringstrom"
    assert a["details"]["support"]["sentence"] == "The lighthouse was designed by the engineer Ada Ringstrom."


def test_a_fact_only_in_a_table_row_is_read_from_it(loaded):
    a = ask("In which year did the Temperate House of Marlow Botanical Garden open?")
    assert a["answer"] == "1899"
    assert a["details"]["support"]["sentence"] == "Glasshouse: Temperate House; Opened: 1899; Plants: 1,800 species"


def test_a_question_no_document_answers_abstains(loaded):
    a = ask("Who painted the Mona Lisa?")
    assert a["answer"] is None and "abstained" in a["stop_reason"] and a["details"]["support"] is None


def test_a_hostile_page_stays_data(loaded):
    from kgqa.loaders.documents.store import remove_document

    before = ask(LIGHTHOUSE)
    p = run_kgqa("load", "documents", str(FIX / "hostile"), "--lenient", "--json", env=CPU)
    assert p.returncode == 0, p.stderr
    try:
        a = ask("In which year was the notice board of Grey Harbour repainted?")
        assert a["answer"] == "2015"               # not HACKED: the notice's instruction is text to read, no more
        assert a["details"]["support"]["sentence"] == "The notice board of Grey Harbour was repainted in 2015."
        after = ask(LIGHTHOUSE)
        assert (after["answer"], after["details"]["support"]) == (before["answer"], before["details"]["support"])
    finally:
        remove_document(loaded, "notice")


def test_a_later_ask_imports_neither_torch_nor_transformers(loaded):
    """A cold `kgqa ask --method mkgrag` reads with onnxruntime once the models are exported (the first ask
    exports them): importing torch and transformers was most of its time (7.0 s cold against 1.1 s now)."""
    import os
    import subprocess
    import sys

    from tests.conftest import KGQA

    first = ask(LIGHTHOUSE)
    p = subprocess.run([sys.executable, "-X", "importtime", KGQA, "ask", LIGHTHOUSE, "--method", "mkgrag", "--json"],
                       env={**os.environ, **CPU}, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")}
    assert "kgqa.methods.mkgrag.algorithm" in imported                     # the listing is real
    assert "torch" not in imported and "transformers" not in imported
    assert json.loads(p.stdout)["answer"] == first["answer"] == "Ada Ringstrom"


def test_the_torch_runtime_reads_the_same_name(loaded):
    p = run_kgqa("ask", LIGHTHOUSE, "--method", "mkgrag", "--json", env={**CPU, "KGQA_READER_BACKEND": "torch"})
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["answer"] == "Ada Ringstrom"


CANAL = [
    "The Harrowgate Canal is a narrow waterway in the county of Elmshire. It runs for 34 kilometres from the market "
    "town of Brackwell to the river Ouse at Lydford, passing through twenty-one locks on the way. Barges carried coal, "
    "lime and grain along it for more than a century, and the towpath beside it is now a public footpath that walkers "
    "follow from one end to the other in two days.",
    "Construction of the canal began in 1791 under the engineer Thomas Penlow, who had surveyed the route two years "
    "earlier for a company of Brackwell merchants. Work stopped twice when the money ran out, and the last section to "
    "Lydford was only finished in 1809, long after Penlow had left the company for a harbour scheme on the coast. The "
    "final cost was nearly three times his estimate.",
    "The largest structure on the canal is the Fennick Aqueduct, which carries it 22 metres above the river Tarn on "
    "nine stone arches. The aqueduct was designed by the architect Margaret Holloway. It opened in 1803 and was the "
    "longest navigable aqueduct in the county for fifty years. A flood in 1852 destroyed two of its arches, which were "
    "rebuilt in brick.",
    "Today the canal is maintained by the Elmshire Waterways Trust, a charity founded in 1974 by volunteers who cleared "
    "the silted locks by hand. Pleasure boats now use the whole length in summer, and the trust runs a small museum in "
    "the old toll house at Brackwell, where the company's ledgers and Penlow's survey drawings are kept.",
]


def test_a_long_section_loaded_with_paragraphs_is_read_a_paragraph_at_a_time(loaded, tmp_path):
    """``kgqa load documents --paragraphs``: a section longer than a chunk is cut at its paragraph ends (each
    paragraph whole in one chunk), and ``-o reader_passages=paragraph`` reads it a paragraph at a time and cites the
    sentence; loaded again without the option the same file is replaced and cut at sentence ends as before."""
    from kgqa.loaders.documents.store import remove_document

    (tmp_path / "harrowgate_canal.md").write_text("# Harrowgate Canal\n\n" + "\n\n".join(CANAL) + "\n", encoding="utf-8")
    try:
        p = run_kgqa("load", "documents", str(tmp_path), "--paragraphs", "--json", env=CPU)
        assert p.returncode == 0, p.stderr
        show = run_kgqa("docs", "show", "harrowgate_canal", "--json", env=CPU)
        texts = [c["text"] for c in json.loads(show.stdout)["chunks"]]
        assert len(texts) > 1 and any("\n\n" in t for t in texts)
        for para in CANAL:
            assert sum(para in t for t in texts) == 1                     # whole, in one chunk
        p = run_kgqa("ask", "Who designed the Fennick Aqueduct?", "--method", "mkgrag", "-o", "reader=learned",
                     "-o", "reader_passages=paragraph", "--docs", "harrowgate_canal", "--json", env=CPU)
        assert p.returncode == 0, p.stderr
        a = json.loads(p.stdout)
        assert a["answer"] == "Margaret Holloway"
        assert a["details"]["support"]["sentence"] == "The aqueduct was designed by the architect Margaret Holloway."
        p = run_kgqa("load", "documents", str(tmp_path), "--json", env=CPU)
        assert p.returncode == 0, p.stderr
        show = run_kgqa("docs", "show", "harrowgate_canal", "--json", env=CPU)
        assert not any("\n\n" in c["text"] for c in json.loads(show.stdout)["chunks"])
    finally:
        remove_document(loaded, "harrowgate_canal")
