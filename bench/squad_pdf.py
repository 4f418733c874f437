"""A public yardstick of PDFs as people hold them: SQuAD v1.1 dev articles (never trained on) typeset into
multi-topic PDF guides, against the same articles as Markdown (issue 59).

    python -m bench.squad_pdf build [--articles 12] [--per-pdf 3] [--limit 300] [--image-pages 0] [--figure]
    KGQA_TORCH_THREADS=1 python -m bench.squad_pdf run [--routes pdf,md] [--systems mkgrag,chunks-only] [--tag T]

* ``build`` writes, under ``.kgqa/squad/pdf-guides-N`` (N the article count):
  - ``pdf/``: the first N dev articles typeset with reportlab (DejaVu Sans, embedded) into guides of
    ``--per-pdf`` articles each: a title, each article a topic headed by its number and title ("3 Nikola Tesla",
    set larger and bold), its paragraphs; the odd guides (1st, 3rd, …) with an outline whose entries are the
    topics, the others without one (headings by size and numbering only). ``--image-pages K`` rasterises K pages
    of each guide without an outline to an image without a text layer (a scan), ``--figure`` sets one paragraph
    of each guide as a figure, its text drawn in the image: both left for OCR (another engineer's issue 59 parts);
  - ``md/``: the same articles as Markdown, one file per article (``bench.squad open``'s documents);
  - question files for ``kgqa eval``, ``--limit`` questions spread evenly over the articles: ``questions-pdf.jsonl``
    (``support``: the guide's id and the page, or pages, its answer's sentence is printed on, found in the PDF's
    text layer apart from the loader) and ``questions-md.jsonl`` (the same questions, ``support``: the article's
    document); a question whose answer's sentence is printed only in an image (a rasterised page, the figure)
    goes to ``questions-pdf-ocr.jsonl`` / ``questions-md-ocr.jsonl`` instead, reported apart (never dropped).
    The gold answer is SQuAD's first, its other answers the aliases.
* ``run``: per route, the other route's documents removed and the route's folder loaded (``kgqa load documents``,
  CPU extractor, graph-only: ``KGQA_CHAT_BACKEND=none``; ``--no-load``: what the graph holds), then ``kgqa eval`` of its questions with mKG-RAG and
  its chunks-only ablation, the learned reader (the default); prints EM, abstentions, document recall, evidence
  recall and the share of right answers cited on their page, and writes each report to ``reports/<tag>-…json``.
  Which kgqa runs is the one ``PYTHONPATH`` imports (a baseline: another checkout's ``src`` first).

Asserts nothing.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.squad import REPO, SQUAD, _slug, _spread, answer_sentence, write_articles

FONTS = Path("/usr/share/fonts/truetype/dejavu")
OCR_NOTE = "printed only in an image (OCR needed)"


def _fonts() -> tuple[str, str]:
    """DejaVu Sans and its bold registered with reportlab (every character SQuAD uses has a glyph)."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    pdfmetrics.registerFont(TTFont("DejaVu", str(FONTS / "DejaVuSans.ttf")))
    pdfmetrics.registerFont(TTFont("DejaVu-Bold", str(FONTS / "DejaVuSans-Bold.ttf")))
    return "DejaVu", "DejaVu-Bold"


def _text_image(text: str, path: Path, width: int = 1000) -> Path:
    """A paragraph drawn as pixels (a figure with text in it: readable by OCR only)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONTS / "DejaVuSans.ttf"), 26)
    lines, cur = [], ""
    for w in text.split():
        if cur and font.getlength(cur + " " + w) > width - 40:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}".strip()
    lines.append(cur)
    img = Image.new("RGB", (width, 40 + 34 * len(lines)), "white")
    draw = ImageDraw.Draw(img)
    for k, line in enumerate(lines):
        draw.text((20, 20 + 34 * k), line, fill="black", font=font)
    img.save(path)
    return path


def typeset(path: Path, title: str, topics: list[tuple[str, list[str]]], *, outline: bool,
            figure: int | None = None) -> Path:
    """One guide: ``topics`` (title, paragraphs) numbered and set by size; ``outline``: each topic an outline entry;
    ``figure``: the index (over the guide's paragraphs) of one set as an image of its text."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import Image, Paragraph, SimpleDocTemplate

    regular, bold = _fonts()
    body = ParagraphStyle("body", fontName=regular, fontSize=10, leading=13, spaceAfter=6)
    head = ParagraphStyle("topic", fontName=bold, fontSize=15, leading=19, spaceBefore=12, spaceAfter=6)
    top = ParagraphStyle("title", fontName=bold, fontSize=20, leading=25, spaceAfter=12)

    class Topic(Paragraph):
        def __init__(self, text, key):
            super().__init__(html.escape(text), head)
            self.entry = (text, key)

        def draw(self):
            super().draw()
            if outline:
                self.canv.bookmarkPage(self.entry[1])
                self.canv.addOutlineEntry(self.entry[0], self.entry[1], 0)

    doc = SimpleDocTemplate(str(path), pagesize=A4, title=title, invariant=1)
    story, k = [Paragraph(html.escape(title), top)], 0
    for t, (name, paras) in enumerate(topics, 1):
        story.append(Topic(f"{t} {name}", f"t{t}"))
        for p in paras:
            if k == figure:
                img = _text_image(p, path.with_suffix(f".figure{k}.png"))
                from PIL import Image as PILImage

                with PILImage.open(img) as im:
                    w, h = im.size
                story.append(Image(str(img), width=doc.width, height=doc.width * h / w))
                story.append(Paragraph(f"Figure {t}: an excerpt of the article", body))
            else:
                story.append(Paragraph(html.escape(p), body))
            k += 1
    doc.build(story)
    return path


def page_texts(path: Path) -> list[str]:
    """Each page's text layer, whitespace collapsed (read with pypdfium2, apart from the loader)."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    try:
        out = []
        for i in range(len(pdf)):
            tp = pdf[i].get_textpage()
            out.append(" ".join(tp.get_text_range().replace("\x02", "").replace("\xad", "").split()))
            tp.close()
        return out
    finally:
        pdf.close()


def find_pages(pages: list[str], sentence: str) -> tuple[int, int] | None:
    """The first and last page (1-based) the sentence is printed on, or None when the text layer lacks it."""
    starts, joined = [], ""
    for t in pages:
        starts.append(len(joined))
        joined += t + " "
    at = joined.find(sentence)
    if at < 0:
        return None

    def page(off: int) -> int:
        return max(k for k, s in enumerate(starts) if s <= off) + 1

    return page(at), page(at + len(sentence) - 1)


def rasterise(path: Path, pages: list[int]) -> None:
    """Replace ``pages`` (0-based) of the PDF by an image of each without a text layer (a scan)."""
    import pypdfium2 as pdfium
    from reportlab.pdfgen import canvas

    src = pdfium.PdfDocument(str(path))
    scan = path.with_suffix(".scan.pdf")
    c = canvas.Canvas(str(scan), invariant=1)
    for i in pages:
        w, h = src[i].get_size()
        c.setPageSize((w, h))
        c.drawInlineImage(src[i].render(scale=2).to_pil(), 0, 0, width=w, height=h)
        c.showPage()
    c.save()
    scanned = pdfium.PdfDocument(str(scan))
    for k, i in enumerate(pages):
        src.del_page(i)
        src.import_pages(scanned, [k], index=i)
    out = path.with_suffix(".tmp.pdf")
    src.save(str(out))
    src.close()
    scanned.close()
    os.replace(out, path)
    scan.unlink()


def bench_build(args) -> None:
    from kgqa.training.squad import load_squad, paragraphs_by_article

    all_qas = load_squad(Path(args.squad) / "dev-v1.1.json.gz")
    articles = list(dict.fromkeys(q.article for q in all_qas))[:args.articles]
    qas = [q for q in all_qas if q.article in set(articles)]
    out = REPO / ".kgqa" / "squad" / f"pdf-guides-{args.articles}"
    (out / "pdf").mkdir(parents=True, exist_ok=True)
    stems = write_articles(qas, out / "md")
    paras = paragraphs_by_article(qas)
    guides = [articles[i:i + args.per_pdf] for i in range(0, len(articles), args.per_pdf)]
    where: dict[str, tuple[str, int, bool]] = {}        # article → (guide id, its first paragraph's index, outline)
    figure_paras: set[str] = set()
    scanned: dict[str, set[int]] = {}
    texts: dict[str, list[str]] = {}
    for g, arts in enumerate(guides, 1):
        gid = f"squad_guide_{g:02d}"
        outline = g % 2 == 1
        k = 0
        for a in arts:
            where[a] = (gid, k, outline)
            k += len(paras[a])
        figure = len(paras[arts[0]]) if args.figure and len(arts) > 1 else None     # the 2nd topic's first paragraph
        if figure is not None:
            figure_paras.add(paras[arts[1]][0])
        path = typeset(out / "pdf" / f"{gid}.pdf", f"SQuAD reading guide {g}",
                       [(a.replace("_", " "), paras[a]) for a in arts], outline=outline, figure=figure)
        texts[gid] = page_texts(path)
        if args.image_pages and not outline:
            n = len(texts[gid])
            pick = sorted({min(n - 1, max(1, n * (j + 1) // (args.image_pages + 1))) for j in range(args.image_pages)})
            rasterise(path, pick)
            scanned[gid] = {p + 1 for p in pick}
        for f in (out / "pdf").glob(f"{gid}.figure*.png"):
            f.unlink()
    asked = _spread(qas, args.limit)
    files = {name: [] for name in ("pdf", "md", "pdf-ocr", "md-ocr")}
    no_page = 0
    for q in asked:
        gid = where[q.article][0]
        sent = answer_sentence(q)
        span = find_pages(texts[gid], sent)
        ocr = q.context in figure_paras or (span is not None and bool(scanned.get(gid, set()) &
                                                                      set(range(span[0], span[1] + 1))))
        golds = list(dict.fromkeys(a for a, _ in q.answers))
        base = {"id": q.qid, "question": q.question, "answer": golds[0], "aliases": golds[1:]}
        sup = {"document": gid}
        if span is None and not ocr:
            no_page += 1
        elif span is not None:
            sup.update({"page": span[0]} if span[0] == span[1] else {"pages": list(span)})
        suffix = "-ocr" if ocr else ""
        files["pdf" + suffix].append({**base, "support": sup, **({"note": OCR_NOTE} if ocr else {})})
        files["md" + suffix].append({**base, "support": {"document": stems[q.article]}})
    for name, rows in files.items():
        (out / f"questions-{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{out}: {len(articles)} articles in {len(guides)} guides ({sum(g % 2 == 1 for g in range(1, len(guides) + 1))}"
          f" with an outline), {sum(len(t) for t in texts.values())} pages; {len(asked)} questions: "
          f"{len(files['pdf'])} with their page ({no_page} whose sentence the text layer lacks: no page), "
          f"{len(files['pdf-ocr'])} {OCR_NOTE}; rasterised pages: "
          + (", ".join(f"{g} p. {sorted(p)}" for g, p in scanned.items()) or "none"))


# ----------------------------------------------------------------------------------------------------- run
def _kgqa(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgqa.app.cli", *argv], check=True, env={
        **os.environ, "KGQA_CHAT_BACKEND": "none"})


def _route_ids(folder: Path) -> list[str]:
    from kgqa.loaders.documents.discover import document_id

    return [document_id(p.name) for p in sorted(folder.iterdir()) if p.suffix in (".md", ".pdf")]


def bench_run(args) -> None:
    import kgqa
    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.store import remove_document

    base = REPO / ".kgqa" / "squad" / f"pdf-guides-{args.articles}"
    reports = base / "reports"
    reports.mkdir(exist_ok=True)
    routes = args.routes.split(",")
    print(f"kgqa from {Path(kgqa.__file__).parent} · torch threads {os.environ.get('KGQA_TORCH_THREADS')} · "
          f"OMP threads {os.environ.get('OMP_NUM_THREADS')} · load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    rows = []
    for route in routes:
        if not args.no_load:
            with Graph(Settings()) as g:
                for other in (r for r in ("pdf", "md") if r != route):
                    for i in _route_ids(base / other):
                        remove_document(g, i)
            t = time.perf_counter()
            _kgqa("load", "documents", str(base / route))
            print(f"{route}: loaded in {time.perf_counter() - t:.0f} s")
        for system in args.systems.split(","):
            for part in ("", "-ocr"):
                qfile = base / f"questions-{route}{part}.jsonl"
                if not qfile.read_text(encoding="utf-8").strip():
                    continue
                out = reports / f"{args.tag}-{route}{part}-{system}.json"
                t = time.perf_counter()
                _kgqa("eval", str(qfile), "--method", "mkgrag", "--out", str(out),
                      *(["--ablate", "chunks_only"] if system == "chunks-only" else []), *args.extra)
                m = json.loads(out.read_text(encoding="utf-8"))["overall"]
                rows.append((route + part, system, m, time.perf_counter() - t))
    print(f"  {'route':<9} {'system':<12} {'n':>4} {'EM':>6} {'abst.':>6} {'doc R':>6} {'evid. R':>8} "
          f"{'cited page right':>18} {'s':>6}")

    def pct(x):
        return "-" if not x["n"] else f"{100 * x['accuracy']:.1f}"

    for route, system, m, secs in rows:
        cp = m.get("cited_page") or {"n": 0}     # main's code before issue 59 reports no cited page
        cited = f"{pct(cp)} ({cp['correct']}/{cp['n']})" if cp["n"] else "-"
        print(f"  {route:<9} {system:<12} {m['n']:>4} {pct(m['exact_match']):>6} {m['abstained']:>6} "
              f"{pct(m['doc_recall']):>6} {pct(m['evidence_recall']):>8} {cited:>18} {secs:6.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--squad", default=str(SQUAD), help="the folder of dev-v1.1.json.gz")
    b.add_argument("--articles", type=int, default=12, help="the first N dev articles")
    b.add_argument("--per-pdf", type=int, default=3, help="articles (topics) per guide")
    b.add_argument("--limit", type=int, default=300, help="questions, spread evenly over the articles")
    b.add_argument("--image-pages", type=int, default=0, help="pages of each guide without an outline rasterised "
                   "to an image without text (OCR's questions)")
    b.add_argument("--figure", action="store_true", help="one paragraph of each guide set as an image of its text")
    r = sub.add_parser("run")
    r.add_argument("--articles", type=int, default=12, help="which build (its article count)")
    r.add_argument("--routes", default="pdf,md")
    r.add_argument("--systems", default="mkgrag,chunks-only")
    r.add_argument("--tag", default="run", help="the reports' file name prefix (e.g. before, after)")
    r.add_argument("--no-load", action="store_true", help="evaluate the documents the graph holds (one route's, "
                   "loaded by an earlier run: a Markdown article is chunked alike before and after issue 59)")
    r.add_argument("extra", nargs="*", help="further kgqa eval arguments (after --)")
    args = ap.parse_args()
    {"build": bench_build, "run": bench_run}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
