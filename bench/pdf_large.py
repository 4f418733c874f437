"""A large generated PDF with figures through ``kgqa load documents``: pages/min beside the Markdown route's
chars/min on the same text, and kill -9 in the middle then a rerun, with the counts of a clean load.

    KGQA_TORCH_THREADS=1 .venv/bin/python -m bench.pdf_large [--pages 500] [--keep]

1. writes one PDF of ``--pages`` A4 pages (reportlab): a section with an outline entry every two pages, a
   figure (the bundled images in turn) every five pages with its caption, generated sentences ("Unit 17 of
   the Kamarsen plant runs at 45 bar.") in between; and the same text and images as one Markdown file;
2. loads each (``kgqa load documents FILE --json`` as a new process, the CPU extractor, models loaded in it:
   the wall time is what a user waits) and prints pages/min, chars/min and the stages;
3. removes the PDF's document, starts the load again and kills it (SIGKILL) at half the clean load's wall
   time (and with ``--mid-write`` once more, as soon as its first write transaction has committed: the
   document in the graph, ``status: 'writing'``); after each, the rerun, which resumes from the vectors the
   killed load saved (``loaders/documents/embed_cache``) and says so; then compares the document's chunks,
   entities, relations, regions and figures with the clean load's, and the rerun's time with the clean load's;
4. removes the PDF's document with ``kgqa docs rm`` (the server as it runs: ``KGQA_NEO4J_HEAP``, 1 GB by
   default) and the Markdown one, unless ``--keep``.

Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.mkgrag import DOCS, REPO, _load, _settings

KGQA = str(REPO / ".venv" / "bin" / "kgqa")
IMAGES = sorted((DOCS / "corpus" / "images").glob("*.jpg"))
PLACES = ["Kamarsen", "Holbeck", "Tarvos", "Ulmenau", "Brisk", "Odenvale", "Pellam", "Quorn"]


def sections(pages: int) -> list[tuple[str, list[str], Path | None]]:
    """(heading, paragraphs, figure) per section: about two A4 pages each, a figure every other section."""
    out = []
    for k in range(pages // 2):
        place = PLACES[k % len(PLACES)]
        paras = [" ".join(f"Unit {k * 40 + j * 8 + i} of the {place} plant runs at {(k + i + j) % 90 + 10} bar "
                          f"and was serviced in {1950 + (k * 7 + i + j) % 70}." for i in range(8))
                 for j in range(12)]
        out.append((f"Section {k + 1}: the {place} plant, part {k // len(PLACES) + 1}", paras,
                    IMAGES[k % len(IMAGES)] if k % 2 == 0 else None))
    return out


def write_pdf(path: Path, pages: int) -> int:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Image, PageBreak, Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()

    class Heading(Paragraph):
        def __init__(self, text, key):
            super().__init__(text, styles["Heading2"])
            self.key, self.label = key, text

        def draw(self):
            super().draw()
            self.canv.bookmarkPage(self.key)
            self.canv.addOutlineEntry(self.label, self.key, 0)

    doc = SimpleDocTemplate(str(path), pagesize=A4, title="Plant records", invariant=1)
    story = [Paragraph("Plant records", styles["Title"])]
    for k, (heading, paras, fig) in enumerate(sections(pages)):
        if k:
            story.append(PageBreak())
        story.append(Heading(heading, f"s{k}"))
        if fig is not None:
            story.append(Image(str(fig), width=doc.width * 0.6, height=doc.width * 0.4))
            story.append(Paragraph(f"<i>Figure {k // 2 + 1}: {fig.stem.replace('_', ' ')}</i>", styles["Italic"]))
        for p in paras:
            story.append(Paragraph(p, styles["BodyText"]))
    doc.build(story)
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        return len(pdf)
    finally:
        pdf.close()


def write_markdown(path: Path, pages: int) -> int:
    lines = ["# Plant records", ""]
    for k, (heading, paras, fig) in enumerate(sections(pages)):
        lines += [f"## {heading}", ""]
        if fig is not None:
            lines += [f"![Figure {k // 2 + 1}: {fig.stem.replace('_', ' ')}]({fig.name})", ""]
        for p in paras:
            lines += [p, ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    for img in IMAGES:
        (path.parent / img.name).write_bytes(img.read_bytes())
    return len(path.read_text(encoding="utf-8"))


def load(path: Path, env: dict) -> tuple[dict, float]:
    t = time.perf_counter()
    p = subprocess.run([KGQA, "load", "documents", str(path), "--json"], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if p.returncode:
        raise SystemExit(f"load of {path} failed: {p.stderr.strip().splitlines()[-1:]}")
    return json.loads(p.stdout), wall


def counts(graph, doc_id: str) -> dict:
    rows = graph.read("docs_show", id=doc_id)
    if not rows:
        return {}
    r = rows[0]
    return {"status": r["document"]["status"], "chunks": len([c for c in r["chunks"] if c]),
            "entities": len([e for e in r["entities"] if e]), "relations": len([x for x in r["relations"] if x]),
            "figures": sum(len([i for i in c["images"] if i]) for c in r["chunks"] if c),
            "regions": sum(len([g for g in e["regions"] if g]) for e in r["entities"] if e)}


def kill_and_rerun(path: Path, doc_id: str, env: dict, graph, when) -> tuple[dict, dict, float]:
    """Start the load, SIGKILL it when ``when(seconds, graph)`` says so, then rerun it: (what the kill left,
    the counts after the rerun, the rerun's wall time)."""
    from kgqa.loaders.documents.store import remove_document

    remove_document(graph, doc_id)
    proc = subprocess.Popen([KGQA, "load", "documents", str(path), "--json"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    t = time.perf_counter()
    while proc.poll() is None and not when(time.perf_counter() - t, graph):
        time.sleep(0.1)
    finished = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = counts(graph, doc_id) or {"status": "absent"}
    left["killed_after_s"] = round(time.perf_counter() - t, 1)
    left["finished_before_kill"] = finished
    rep, wall = load(path, env)
    return left, {**counts(graph, doc_id), "resumed": rep.get("resumed")}, wall


def main(argv=None) -> None:
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.store import remove_document

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--mid-write", action="store_true", help="also kill the load after its first write transaction")
    a = ap.parse_args(argv)
    s = _settings()
    env = {**os.environ, "KGQA_CHAT_BACKEND": "none", "KGQA_DOC_EXTRACTOR": "cpu"}
    with tempfile.TemporaryDirectory() as tmp, Graph(s) as g:
        pdf, md = Path(tmp) / "pdf" / "bench-large-pdf.pdf", Path(tmp) / "md" / "bench-large-md.md"
        pdf.parent.mkdir()
        md.parent.mkdir()
        t = time.perf_counter()
        pages = write_pdf(pdf, a.pages)
        print(f"large PDF · {pages} pages, {pdf.stat().st_size / 1e6:.1f} MB, written in {time.perf_counter() - t:.0f} s "
              f"· torch threads {s.torch_threads} · load {_load()}")
        chars = write_markdown(md, a.pages)
        for doc_id in ("bench-large-pdf", "bench-large-md"):
            remove_document(g, doc_id)
        rep_md, wall_md = load(md, env)
        rep_pdf, wall_pdf = load(pdf, env)
        clean = counts(g, "bench-large-pdf")
        print(f"  Markdown: {chars:,} chars, {rep_md['chunks']} chunks in {wall_md:.1f} s → {chars / wall_md * 60:,.0f} "
              f"chars/min (new process: models loaded in it) · stages {rep_md['stages']}")
        print(f"  PDF:      {rep_pdf['pages']} pages, {rep_pdf['figures']} figures, {rep_pdf['chunks']} chunks in "
              f"{wall_pdf:.1f} s → {rep_pdf['pages'] / wall_pdf * 60:,.0f} pages/min · stages {rep_pdf['stages']}")
        print(f"  clean load: {clean}", flush=True)
        kills = [("kill -9 at half the clean load's time", lambda sec, _g: sec >= wall_pdf / 2)]
        if a.mid_write:
            kills.append(("kill -9 after the first write transaction",
                          lambda _sec, gr: bool(gr.read("docs_document_status", ids=["bench-large-pdf"]))))
        for label, when in kills:
            left, after, wall = kill_and_rerun(pdf, "bench-large-pdf", env, g, when)
            same = {k: v for k, v in after.items() if k != "resumed"} == clean
            print(f"  {label}: left {left}; rerun {wall:.1f} s (clean load {wall_pdf:.1f} s) → {after} · "
                  f"equal to the clean load: {same}", flush=True)
        if not a.keep:
            t = time.perf_counter()
            p = subprocess.run([KGQA, "docs", "rm", "bench-large-pdf"], capture_output=True, text=True, env=env)
            print(f"  kgqa docs rm bench-large-pdf (heap {os.environ.get('KGQA_NEO4J_HEAP', '1g (default)')}): "
                  f"exit {p.returncode} in {time.perf_counter() - t:.1f} s · {(p.stdout + p.stderr).strip()}")
            remove_document(g, "bench-large-md")


if __name__ == "__main__":
    sys.exit(main())
