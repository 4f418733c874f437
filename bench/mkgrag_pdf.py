"""The bundled documents as PDFs against the same documents as Markdown: mKG-RAG's accuracy on each route, and
whether the page each answer cites holds its evidence.

    KGQA_TORCH_THREADS=1 .venv/bin/python -m bench.mkgrag_pdf [--page-size a6] [--reader rules]

Needs the demo KG loaded (``kgqa load wikidata5m --path data/demo``: the relation catalogue and the SAME_AS
targets, as ``bench.mkgrag accuracy``). In one run:

1. ``data/docs/build_pdfs.py`` writes the 20 bundled documents (data/docs/corpus) as PDFs into a scratch folder
   (A6 pages by default, so that documents run over several pages);
2. the Markdown route: the bundled documents' previous versions removed, ``data/docs/corpus`` loaded with the
   CPU extractor, ``kgqa eval data/docs/questions.jsonl --method mkgrag -o reader=rules``;
3. the PDF route: the same ids removed, the PDFs loaded, the same evaluation;
4. for each question whose evidence is known (``support``: document and section), whether the page the answer
   cites holds it: the cited document is the supporting one, the cited page lies in the supporting section's
   pages (from the PDF's outline, read here with pypdfium2 apart from the loader: the page of its entry through
   the page of the next entry) and that page's text holds the gold answer or an alias. A question answered
   without a citation counts as a miss.

Prints EM (all, and the difference in points), document recall, and the page figure; the PDF route's documents
stay loaded at the end (the Markdown ones are removed). Asserts nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.mkgrag import DOCS, REPO, _evaluate, _load, _settings


def _reload(s, folder: Path, ids: list[str]) -> dict:
    """The documents of ``ids`` removed, then ``folder`` loaded with the CPU extractor; the load's report."""
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.loader import DocumentLoader
    from kgqa.loaders.documents.options import DocOptions
    from kgqa.loaders.documents.store import remove_document
    from kgqa.models import build_models

    s = s.model_copy(update={"doc_extractor": "cpu", "chat_backend": "none", "model_cache_dir": None})
    with Graph(s) as g:
        for i in ids:
            remove_document(g, i)
        t = time.perf_counter()
        rep = DocumentLoader(g, build_models(s, g), s, DocOptions()).load(folder).as_dict()
        rep["wall"] = time.perf_counter() - t
    return rep


def section_pages(pdf: Path) -> dict[str, tuple[int, int]]:
    """Outline title → (first page, last page), 1-based: an entry's page through the next entry's page."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        entries = [(it.get_title(), it.get_dest().get_index() + 1) for it in doc.get_toc() if it.get_dest()]
        n = len(doc)
    finally:
        doc.close()
    return {t: (p, entries[k + 1][1] if k + 1 < len(entries) else n) for k, (t, p) in enumerate(entries)}


def page_text(pdf: Path, page: int) -> str:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        return doc[page - 1].get_textpage().get_text_range()
    finally:
        doc.close()


def page_holds_evidence(q, details: dict, pdfs: Path) -> tuple[bool, str]:
    """(whether the cited page holds the question's evidence, why not)."""
    from kgqa.app.eval.metrics import normalize_answer

    sup = details.get("support") or {}
    if not sup or sup.get("page") is None:
        return False, "no page cited"
    if sup.get("doc_id") != q.support.document:
        return False, f"cites {sup.get('doc_id')}, evidence in {q.support.document}"
    pdf = pdfs / f"{q.support.document}.pdf"
    span = section_pages(pdf).get(q.support.section) if q.support.section else None
    if span and not span[0] <= sup["page"] <= span[1]:
        return False, f"cites p. {sup['page']}, section {q.support.section!r} on pp. {span[0]}–{span[1]}"
    text = f" {normalize_answer(page_text(pdf, sup['page']))} "
    golds = [normalize_answer(g) for g in [q.answer, *(q.aliases or [])]]
    if not any(g and f" {g} " in text for g in golds):
        return False, f"p. {sup['page']} does not hold the answer"
    return True, ""


def main(argv=None) -> None:
    from kgqa.app.eval.questions import load_questions
    from kgqa.models.encoder import get_encoder

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--page-size", default="a6")
    ap.add_argument("--reader", default="rules")
    a = ap.parse_args(argv)
    s = _settings()
    qs, _ = load_questions(DOCS / "questions.jsonl")
    ids = sorted(p.stem for p in (DOCS / "corpus").iterdir() if p.is_file())
    enc = get_encoder(s.encoder_model, device=s.device, threads=s.torch_threads)
    opts = {"reader": a.reader}
    with tempfile.TemporaryDirectory() as tmp:
        pdfs = Path(tmp) / "pdf"
        subprocess.run([sys.executable, str(DOCS / "build_pdfs.py"), "--out", str(pdfs), "--page-size",
                        a.page_size], check=True, cwd=REPO)
        n_pages = sum(1 for _ in pdfs.glob("*.pdf"))
        md = _reload(s, DOCS / "corpus", ids)
        rep_md, det_md = _evaluate(s, enc, qs, "mkgrag", opts)[:2]
        pdf = _reload(s, pdfs, ids)
        rep_pdf, det_pdf = _evaluate(s, enc, qs, "mkgrag", opts)[:2]
        known = [(q, d) for q, d in zip(qs, det_pdf) if q.support is not None and q.support.document]
        checks = [(q, *page_holds_evidence(q, d, pdfs)) for q, d in known]
        multi = sum(1 for q, _ in known if _pages(pdfs / f"{q.support.document}.pdf") > 1)

    def em(rep):
        vals = [r["exact_match"] for r in rep["questions"]]
        return 100 * sum(vals) / len(vals)

    def recall(rep):
        vals = [r.get("doc_recall") for r in rep["questions"] if r.get("doc_recall") is not None]
        return 100 * sum(vals) / len(vals) if vals else float("nan")

    print(f"mkgrag on PDFs · {len(qs)} questions (data/docs/questions.jsonl) · reader {a.reader} · torch threads "
          f"{s.torch_threads} · load {_load()} · {n_pages} PDFs, {pdf['pages']} pages ({a.page_size.upper()}), "
          f"{pdf['figures']} figures")
    print(f"  load: Markdown {md['chunks']} chunks in {md['wall']:.1f} s · PDF {pdf['chunks']} chunks in "
          f"{pdf['wall']:.1f} s ({pdf['pages'] / pdf['wall'] * 60:.0f} pages/min, CPU extractor, startup included)")
    print(f"  {'route':<10} {'EM':>6} {'doc R':>6}")
    print(f"  {'Markdown':<10} {em(rep_md):>5.1f}% {recall(rep_md):>5.0f}%")
    print(f"  {'PDF':<10} {em(rep_pdf):>5.1f}% {recall(rep_pdf):>5.0f}%")
    print(f"  EM difference (PDF − Markdown): {em(rep_pdf) - em(rep_md):+.1f} points")
    md_em = {r["id"]: r["exact_match"] for r in rep_md["questions"]}
    for r in rep_pdf["questions"]:
        if r["exact_match"] != md_em.get(r["id"]):
            print(f"    {r['id']}: Markdown {'right' if md_em.get(r['id']) else 'wrong'}, PDF "
                  f"{'right' if r['exact_match'] else 'wrong'} ({r.get('prediction')!r})")
    ok = sum(1 for _, good, _ in checks if good)
    print(f"  cited page holds the evidence: {ok}/{len(checks)} = {100 * ok / max(1, len(checks)):.1f}% of the "
          f"questions whose evidence is known ({multi} of them about a document of more than one page)")
    for q, good, why in checks:
        if not good:
            print(f"    {q.id}: {why}")


def _pages(pdf: Path) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        return len(doc)
    finally:
        doc.close()


if __name__ == "__main__":
    main()
