"""The bundled illustrated documents (data/docs/corpus: Markdown and one HTML page) as PDFs, for the PDF route
of ``kgqa load documents`` (its benchmark: ``bench/mkgrag_pdf.py``; its tests: tests/integration/test_pdf.py).

    .venv/bin/python data/docs/build_pdfs.py [--out build/docs-pdf] [--page-size a6]

Each document becomes ``<its name>.pdf``: the title (also the PDF's Title), each ``##`` heading with an
outline entry (bookmark) at its level, each image drawn at 90 % of the text width (at most half the page's height) with its alt text as
the caption line under it, paragraphs, list items and table rows as text. The default page is A6 so that a
document runs over several pages and a page citation has something to get wrong. Needs reportlab (BSD; the
``dev`` extra): a build and test dependency only, kgqa itself reads PDFs with pypdfium2.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def blocks_of_markdown(text: str) -> tuple[str, list[tuple[str, object]]]:
    """(title, [(kind, value)]): kinds heading (level, text), image (alt, path), para (text)."""
    title, out, para = "", [], []

    def flush():
        if para:
            out.append(("para", " ".join(para)))
            para.clear()

    for line in text.splitlines():
        m = _HEADING.match(line)
        if m:
            flush()
            if len(m.group(1)) == 1 and not title:
                title = m.group(2)
            else:
                out.append(("heading", (len(m.group(1)) - 2, m.group(2))))
            continue
        imgs = list(_IMAGE.finditer(line))
        if imgs:
            flush()
            for im in imgs:
                out.append(("image", (im.group(1), im.group(2))))
            rest = _IMAGE.sub("", line).strip()
            if rest:
                para.append(rest)
            continue
        if not line.strip():
            flush()
        elif line.lstrip().startswith(("|", "- ", "* ")) or re.match(r"^\s*\d+[.)]\s", line):
            flush()
            out.append(("para", line.strip()))     # a table row or list item: its own line
        else:
            para.append(line.strip())
    flush()
    return title, out


def blocks_of_html(text: str) -> tuple[str, list[tuple[str, object]]]:
    from kgqa.loaders.documents.parse import parse_html

    title, sections = parse_html(text)
    out: list[tuple[str, object]] = []
    for heading, body, imgs, _ in sections:
        if heading:
            out.append(("heading", (0, heading)))
        for im in imgs:
            out.append(("image", (im.alt, im.ref)))
        for p in body.split("\n\n"):
            out.append(("para", " ".join(p.split())))
    return title or "", out


def build(src: Path, out: Path, page_size) -> Path:
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.lib.units import mm
    from reportlab.platypus import Image, Paragraph, SimpleDocTemplate, Spacer

    styles = getSampleStyleSheet()
    text = src.read_text(encoding="utf-8")
    title, blocks = blocks_of_html(text) if src.suffix in (".html", ".htm") else blocks_of_markdown(text)
    title = title or src.stem.replace("_", " ")

    class Heading(Paragraph):
        """A heading that puts itself in the PDF's outline where it is drawn."""

        def __init__(self, text: str, level: int, key: str):
            super().__init__(html.escape(text), styles["Heading2" if level <= 0 else "Heading3"])
            self.outline = (text, max(0, level), key)

        def draw(self):
            super().draw()
            label, level, key = self.outline
            self.canv.bookmarkPage(key)
            self.canv.addOutlineEntry(label, key, level)

    target = out / f"{src.stem}.pdf"
    margin = 8 * mm
    doc = SimpleDocTemplate(str(target), pagesize=page_size, title=title, leftMargin=margin, rightMargin=margin,
                            topMargin=margin, bottomMargin=margin, invariant=1)
    story = [Paragraph(html.escape(title), styles["Title"])]
    for k, (kind, value) in enumerate(blocks):
        if kind == "heading":
            level, text_ = value
            story.append(Heading(text_, level, f"s{k}"))
        elif kind == "image":
            alt, ref = value
            from PIL import Image as PILImage

            path = (src.parent / ref).resolve()
            with PILImage.open(path) as im:
                w, h = im.size
            width = doc.width * 0.9
            height = width * h / w
            if height > doc.height * 0.5:
                height = doc.height * 0.5
                width = height * w / h
            story.append(Image(str(path), width=width, height=height))
            story.append(Paragraph(f"<i>{html.escape(alt)}</i>", styles["Italic"]))
            story.append(Spacer(1, 4))
        else:
            story.append(Paragraph(html.escape(value), styles["BodyText"]))
    doc.build(story)
    return target


def main(argv=None) -> int:
    from reportlab.lib import pagesizes

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE.parent.parent / "build" / "docs-pdf")
    ap.add_argument("--page-size", default="a6", choices=["a4", "a5", "a6", "letter"])
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    size = getattr(pagesizes, a.page_size.upper() if a.page_size != "letter" else "letter")
    files = sorted(p for p in a.corpus.iterdir() if p.suffix in (".md", ".html", ".htm"))
    for f in files:
        build(f, a.out, size)
    print(f"{len(files)} PDFs in {a.out} ({a.page_size.upper()} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
