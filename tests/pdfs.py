"""PDFs written for the tests: with reportlab (BSD, the dev extra) as a user's tools write them, or by hand
where a PDF must be bad in one precise way (a figure that is a decompression bomb)."""

from __future__ import annotations

import html
import zlib
from pathlib import Path

from tests.conftest import REPO

IMAGES = REPO / "data" / "docs" / "corpus" / "images"


def make_pdf(path: Path, title: str, sections: list[tuple], *, outline: bool = True, page_size=None,
             encrypt: str | None = None, page_break_before: set[str] = frozenset()) -> Path:
    """``sections``: (heading, [paragraph, …], [(image path, caption), …]) each; images drawn before the text,
    the caption the line under each. ``outline``: each heading also an outline entry (bookmark);
    ``page_break_before``: headings that start a new page."""
    from reportlab.lib.pagesizes import A6
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Image, PageBreak, Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()

    class Heading(Paragraph):
        def __init__(self, text, key):
            super().__init__(html.escape(text), styles["Heading2"])
            self.key, self.label = key, text

        def draw(self):
            super().draw()
            if outline:
                self.canv.bookmarkPage(self.key)
                self.canv.addOutlineEntry(self.label, self.key, 0)

    doc = SimpleDocTemplate(str(path), pagesize=page_size or A6, title=title, encrypt=encrypt, invariant=1,
                            leftMargin=20, rightMargin=20, topMargin=20, bottomMargin=20)
    story = [Paragraph(html.escape(title), styles["Title"])]
    for k, (heading, paras, images) in enumerate(sections):
        if heading in page_break_before:
            story.append(PageBreak())
        story.append(Heading(heading, f"h{k}"))
        for img, caption in images:
            story.append(Image(str(img), width=doc.width * 0.8, height=doc.width * 0.5))
            story.append(Paragraph(f"<i>{html.escape(caption)}</i>", styles["Italic"]))
        for p in paras:
            story.append(Paragraph(html.escape(p), styles["BodyText"]))
    doc.build(story)
    return path


def make_scanned_pdf(path: Path, text_pages: int, image_pages: int, image: Path = IMAGES / "moon_surface.jpg"):
    """``text_pages`` pages of text, then ``image_pages`` pages holding only an image (a scan: no text layer)."""
    from reportlab.lib.pagesizes import A6
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A6, invariant=1)
    c.setTitle("Scanned report")
    w, h = A6
    for i in range(text_pages):
        c.drawString(20, h - 40, f"Page {i + 1} of the report says the pump runs at 40 degrees.")
        c.showPage()
    for _ in range(image_pages):
        c.drawImage(str(image), 10, 10, width=w - 20, height=h - 20)
        c.showPage()
    c.save()
    return path


def rasterise_page(path: Path, page: int, dpi: int = 150) -> Path:
    """The PDF at ``path`` with its page ``page`` (1-based) replaced by a picture of it: an image-only page, as a
    scanner gives (no text layer). PDFium renders the page; reportlab draws the picture on a page of the same
    size; PDFium puts the pages back together (the outline is not kept)."""
    import io

    import pypdfium2 as pdfium
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    src = pdfium.PdfDocument(path.read_bytes())
    w, h = src[page - 1].get_size()
    png = io.BytesIO()
    src[page - 1].render(scale=dpi / 72, grayscale=True).to_pil().save(png, format="PNG")
    scan = io.BytesIO()
    c = canvas.Canvas(scan, pagesize=(w, h), invariant=1)
    c.drawImage(ImageReader(io.BytesIO(png.getvalue())), 0, 0, width=w, height=h)
    c.showPage()
    c.save()
    out = pdfium.PdfDocument.new()
    if page > 1:                                      # (an empty list would import every page)
        out.import_pages(src, list(range(page - 1)))
    out.import_pages(pdfium.PdfDocument(scan.getvalue()), [0])
    if page < len(src):
        out.import_pages(src, list(range(page, len(src))))
    buf = io.BytesIO()
    out.save(buf)
    path.write_bytes(buf.getvalue())
    return path


def make_bomb_pdf(path: Path, width: int = 20000, height: int = 20000) -> Path:
    """One page showing one 1-bit image declared ``width`` x ``height`` (400 megapixels by default), its data
    all zeros and Flate-compressed to a few kilobytes: a decompression bomb."""
    data = zlib.compress(bytes((width + 7) // 8 * height), 9)
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Resources << /XObject << /Im1 4 0 R >> "
        b"/Font << /F1 6 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 1 "
        b"/Filter /FlateDecode /Length %d >>\nstream\n" % (width, height, len(data)) + data + b"\nendstream",
    ]
    content = b"q 200 0 0 200 50 150 cm /Im1 Do Q BT /F1 12 Tf 50 100 Td (A harmless looking page) Tj ET"
    objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    path.write_bytes(bytes(out))
    return path


FALCON = [("Overview", ["Falcon 9 is a two-stage rocket designed and manufactured by SpaceX. Its first stage "
                        "is powered by nine Merlin engines."], [(IMAGES / "falcon9_dscovr_launch.jpg",
                                                                "Figure 1: A Falcon 9 rocket lifting off")]),
          ("History", ["Falcon 9 first flew on 4 June 2010."]),
          ("Notable launches", ["On 11 February 2015 a Falcon 9 launched the Deep Space Climate Observatory."], [])]
FALCON = [(h, p, *(rest or [[]])) for h, p, *rest in FALCON]


def make_guide_pdf(path: Path, title: str, topics: list[tuple[str, list[tuple[str, list[str]]]]], *,
                   outline: bool = True, numbered: bool = False) -> Path:
    """A multi-topic guide as people typeset one: ``topics`` are (topic, [(section, [paragraph, …]), …]); the
    title, each topic (Heading1) and each section (Heading2) set by size, ``numbered`` as "2" and "2.1";
    ``outline``: each topic an outline entry at the top level and its sections one level under it. A topic starts
    on the page where the previous one ends (no page break), as in a printed guide."""
    from reportlab.lib.pagesizes import A5
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()

    class Heading(Paragraph):
        def __init__(self, text, level, key):
            super().__init__(html.escape(text), styles["Heading1" if level == 0 else "Heading2"])
            self.entry = (text, key, level)

        def draw(self):
            super().draw()
            if outline:
                text, key, level = self.entry
                self.canv.bookmarkPage(key)
                self.canv.addOutlineEntry(text, key, level)

    doc = SimpleDocTemplate(str(path), pagesize=A5, title=title, invariant=1)
    story = [Paragraph(html.escape(title), styles["Title"])]
    for t, (topic, sections) in enumerate(topics, 1):
        story.append(Heading(f"{t} {topic}" if numbered else topic, 0, f"t{t}"))
        for s, (section, paras) in enumerate(sections, 1):
            story.append(Heading(f"{t}.{s} {section}" if numbered else section, 1, f"t{t}s{s}"))
            story += [Paragraph(html.escape(p), styles["BodyText"]) for p in paras]
    doc.build(story)
    return path


TOWERS = [("Eiffel Tower", [("Overview", ["The Eiffel Tower is a wrought-iron lattice tower in Paris."]),
                            ("Design and construction", ["The tower was designed by the engineers Maurice Koechlin "
                                                         "and Emile Nouguier.", "The tower was completed in 1889."])]),
          ("Tokyo Tower", [("Overview", ["Tokyo Tower is a communications tower in the Shiba-koen district."]),
                           ("Design and construction", ["The tower was designed by Tachu Naito and completed in "
                                                        "1958."])])]


#: a pump manual of three pages, each section on a page of its own (``rasterise_page`` makes page 2 a scan)
ORCA = [("Installation", ["The Orca pump is mounted on a level concrete base."], []),
        ("Pressure relief", ["The relief valve of the Orca pump opens at 12 bar and closes again at 9 bar."], []),
        ("Service", ["Replace the seals of the Orca pump every 2,000 hours."], [])]


def make_orca_scan(path: Path) -> Path:
    """The Orca pump manual with its page 2 (the relief valve's pressures) an image-only page."""
    make_pdf(path, "Orca pump manual", ORCA, page_break_before={"Pressure relief", "Service"})
    return rasterise_page(path, 2)


def text_figure(path: Path, lines: list[str]) -> Path:
    """A PNG figure whose only content is ``lines`` of dark text on white (a diagram's labels)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype("DejaVuSans.ttf", 28)
    img = Image.new("RGB", (640, 60 + 50 * len(lines)), "white")
    draw = ImageDraw.Draw(img)
    for k, line in enumerate(lines):
        draw.text((30, 30 + 50 * k), line, fill=(20, 20, 20), font=font)
    img.save(path)
    return path
