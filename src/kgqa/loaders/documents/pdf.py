"""PDF files into a ``ParsedDocument`` (``kgqa load documents`` reads ``.pdf`` beside ``.md`` and ``.html``).

PDFium, through ``pypdfium2`` (Apache-2.0 / BSD-3; the PDF engine of Chromium, prebuilt wheels, no model
and no network), reads the text of each page, the outline (bookmarks) and the embedded images:

* **pages**: the text layer of every page, line breaks as PDFium gives them (``clean_text`` joins wrapped
  prose lines). A section that runs over several pages becomes one ``Section`` per page (``page``, and
  ``cont`` on the later parts so that its heading is not repeated): segmentation then knows on which page
  every piece of a chunk lies, and each chunk stores its page span.
* **sections**: the outline's entries, in document order and at every level, each starting where its
  title is printed on its page (the line holding it; the top of the page when the title is not printed),
  each keeping its level: a section's ``path`` is the entries above it and its own ("Eiffel Tower" ›
  "Design and construction"). Without an outline, lines set in a font clearly larger than the page's body
  text, or wholly bold (``font_headings``), and their levels learnt from this document's typesetting
  (``heading_levels``: each distinct heading size a level, the largest first, a numbering such as "2.3" one
  level below "2"); a largest heading printed once, first, is the document's title, not a section.
* **figures**: every image object of a page (inside form XObjects too) whose declared size is within
  ``max_figure_pixels`` (checked before anything is decoded: a decompression bomb is one line naming the
  file and page); JPEG data kept as it is, anything else re-encoded as PNG; decorations under 32 pixels a
  side are left out. A figure's caption is the line under it (a leading "Figure 3:" dropped), its alt text
  as for a Markdown image; it stays in the page's text too, as a Markdown image's alt text does. Figures are
  saved under ``figures_dir`` by sha256 when the document is written (``save_figures``).
* **refused**, one line naming the file (``reject``: strict raises, lenient skips): over the size or page
  limit, no ``%PDF`` header, no ``%%EOF`` at the end (truncated), encrypted (a password is needed), damaged
  (PDFium cannot open it), a page PDFium cannot read.
* **OCR** (``ocr.py``, the loader's ``options.ocr_reader``): a page without a text layer (scanned) is read by
  the OCR engine, and its text is that page's; the scan's image is then the page, not a figure (a section with
  a figure is one chunk however long, and a page's worth of text in one chunk lies mostly beyond the encoder's
  window: issue 59's OCR'd pages were rarely retrieved). The text inside a page's figures becomes a paragraph
  of the page. Pages still without text (no engine, OCR off, nothing read) are reported, and the document loads
  with its other pages and its figures.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from kgqa.core.errors import InvalidInput
from kgqa.loaders.documents.parse import DocImage, ParsedDocument, Section, clean_text, heading_paths
from kgqa.loaders.rejects import Rejects

PDF_MAX_BYTES = 200 * 1024 * 1024    # the defaults of KGQA_PDF_MAX_MB, KGQA_PDF_MAX_PAGES, KGQA_PDF_MAX_FIGURE_PIXELS
PDF_MAX_PAGES = 2000
MAX_FIGURE_PIXELS = 64_000_000
MIN_FIGURE_SIDE = 32            # pixels: smaller image objects are rules, bullets, logos, not figures
CAPTION_GAP = 40.0              # points under a figure searched for its caption
_FIGURE_PREFIX = re.compile(r"^\s*(?:fig(?:ure)?\.?)\s*\d+[a-z]?\s*[.:\-\u2013\u2014]\s*", re.I)


def page_ranges(pages: list[int]) -> str:
    """``[3, 4, 5, 9]`` → ``pages 3–5, 9`` (``page 3`` for one)."""
    runs: list[list[int]] = []
    for p in sorted(pages):
        if runs and p == runs[-1][1] + 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    body = ", ".join(f"{a}\u2013{b}" if b > a else str(a) for a, b in runs)
    return f"page{'s' if len(pages) > 1 else ''} {body}"


def _page_text(textpage) -> str:
    """A page's text: PDFium's CRLF line ends as newlines, its soft-hyphen marks and control characters out."""
    t = textpage.get_text_range()
    t = t.replace("\r\n", "\n").replace("\r", "\n")
    t = re.sub("[\x02\xad]\n", "", t)                          # a word hyphenated over a line end
    return "".join(c for c in t if c in "\n\t" or (ord(c) >= 32 and c not in "\ufffe\uffff"))


def _outline(pdf) -> list[tuple[int, str, int]]:
    """(page index, title, level: 0 at the top) of every outline entry with a destination, in document order."""
    out = []
    try:
        for item in pdf.get_toc():
            dest = item.get_dest()
            idx = dest.get_index() if dest is not None else None
            title = " ".join((item.get_title() or "").split())
            if idx is not None and title and 0 <= idx < len(pdf):
                out.append((idx, title, int(item.level)))
    except Exception:                                           # a damaged outline is no outline
        return []
    return out


def _find_heading(text: str, title: str, start: int) -> tuple[int, int] | None:
    """Where the line printing ``title`` begins and ends in ``text`` at or after ``start``, or None."""
    words = [re.escape(w) for w in title.split()]
    if not words:
        return None
    m = re.compile(r"(?m)^[ \t]*" + r"\s+".join(words) + r"[ \t]*$").search(text, start)
    if m is None:       # the title as the start of a line (a numbered heading, a run-in one)
        m = re.compile(r"(?m)^[ \t]*" + r"\s+".join(words) + r"[^\n]*$").search(text, start)
    return (m.start(), m.end()) if m else None


_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)\.?\s+\S")
BOLD_WEIGHT = 600               # PDFium's font weight from which a line counts as bold


def font_headings(textpage, text: str) -> list[tuple[int, int, str, tuple]]:
    """Lines set clearly larger (≥ 1.2×) than the page's body text, or wholly bold, short and not ending a
    sentence: (start, end, heading, style) in ``text`` (``_page_text`` of the same page); ``style`` is what
    ``heading_levels`` orders them by: (size to the half point, bold, depth of a numbering like "2.3", 0 if none)."""
    from pypdfium2 import raw

    n = textpage.count_chars()
    if n == 0:
        return []
    raw_text = textpage.get_text_range()
    if len(raw_text) != n:                       # offsets would not map to characters: no guess
        return []
    sizes = [raw.FPDFText_GetFontSize(textpage, i) for i in range(n)]
    lines, s = [], 0
    for i, ch in enumerate(raw_text + "\n"):
        if ch == "\n" or i == n:
            line = raw_text[s:i].strip("\r\n ")
            if line:
                lines.append((line, max(sizes[s:i] or [0.0]), s, i))
            s = i + 1
    by_size: dict[float, int] = {}
    for line, size, _, _ in lines:
        by_size[round(size, 1)] = by_size.get(round(size, 1), 0) + len(line)
    body = max(by_size, key=by_size.get) if by_size else 0.0
    out, at = [], 0
    for line, size, a, b in lines:
        if not body or len(line) > 120 or line.endswith((".", ",", ";", ":")):
            continue
        bold = _bold(textpage, raw_text, a, b)
        if size >= 1.2 * body or (bold and size >= body and len(line) <= 80):
            hit = _find_heading(text, line, at)
            if hit:
                num = _NUMBERED.match(line)
                style = (round(size * 2) / 2, bold, num.group(1).count(".") + 1 if num else 0)
                out.append((hit[0], hit[1], " ".join(line.split()), style))
                at = hit[1]
    return out


def _bold(textpage, raw_text: str, start: int, end: int) -> bool:
    """Whether every letter of ``raw_text[start:end]`` is set in a bold weight."""
    from pypdfium2 import raw

    letters = [i for i in range(start, end) if raw_text[i].isalnum()]
    return bool(letters) and all(raw.FPDFText_GetFontWeight(textpage, i) >= BOLD_WEIGHT for i in letters)


def heading_levels(styles: list[tuple]) -> dict[tuple, int]:
    """Each heading style of one document (``font_headings``) → its level, 1 at the top: the distinct sizes
    largest first (the document's own distribution, no fixed sizes), at one size bold before regular, and a
    numbered heading one level per number below ("2" above "2.3"; an unnumbered heading as "2")."""
    order = sorted(set(styles), key=lambda st: (-st[0], not st[1], max(st[2], 1)))
    keys = list(dict.fromkeys((st[0], st[1], max(st[2], 1)) for st in order))
    return {st: 1 + keys.index((st[0], st[1], max(st[2], 1))) for st in styles}


def _caption(textpage, bounds) -> str:
    """The caption under a figure: the first text line within ``CAPTION_GAP`` points under it (overlapping it
    horizontally) and the lines that follow it at the same line spacing (at most 3; a larger gap is the next
    paragraph), a leading "Figure N:" dropped; empty when there is none."""
    left, bottom, right, _top = bounds
    rects = []
    for i in range(textpage.count_rects()):
        l, b, r, t = textpage.get_rect(i)
        if t <= bottom + 2 and r > left and l < right:
            rects.append((l, b, r, t))
    lines: list[list[float]] = []                      # [left, bottom, right, top] per text line, top down
    for l, b, r, t in sorted(rects, key=lambda x: -x[3]):
        if lines and abs(lines[-1][3] - t) < 0.5 * (t - b):
            ln = lines[-1]
            lines[-1] = [min(ln[0], l), min(ln[1], b), max(ln[2], r), max(ln[3], t)]
        else:
            lines.append([l, b, r, t])
    if not lines or lines[0][3] < bottom - CAPTION_GAP:
        return ""
    keep = [lines[0]]
    for ln in lines[1:3]:
        prev = keep[-1]
        height = prev[3] - prev[1]
        if prev[1] - ln[3] > 0.6 * height:            # more than the line spacing: the next paragraph
            break
        keep.append(ln)
    text = " ".join(" ".join(textpage.get_text_bounded(left=ln[0] - 1, bottom=ln[1], right=ln[2] + 1,
                                                       top=ln[3]).split()) for ln in keep)
    return text


def _own_paragraph(text: str, caption: str) -> str:
    """The page's text with the caption's lines set apart as a paragraph of their own (as a Markdown image's
    alt text is): a caption without a full stop is not read as the start of the sentence under it."""
    words = caption.split()
    if not words:
        return text
    m = re.search(r"[ \t]*" + r"\s+".join(re.escape(w) for w in words) + r"[ \t]*\n?", text)
    if m is None:
        return text
    return f"{text[:m.start()].rstrip()}\n\n{m.group(0).strip()}\n\n{text[m.end():].lstrip()}".strip("\n") + \
        ("\n" if text.endswith("\n") else "")


def _figures(page, textpage, where: str, options, reject: Rejects, pdf_path: Path,
             page_no: int) -> list[tuple[DocImage, float, str]]:
    """The page's figures (validated, not yet saved), each with its top (PDF points, for its section) and its
    caption's line(s) as printed."""
    import pypdfium2 as pdfium

    from kgqa.core.images import image_from_bytes

    out = []
    k = 0
    for obj in page.get_objects(filter=[pdfium.raw.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        try:
            w, h = obj.get_px_size()
        except Exception:
            continue
        if min(w, h) < MIN_FIGURE_SIDE:
            continue
        k += 1
        limit = options.max_figure_pixels or MAX_FIGURE_PIXELS
        if w * h > limit:
            reject(where, f"figure {k} is {w}x{h} pixels, over the {limit:,}-pixel limit "
                   "(a decompression bomb?); not decoded", reason="figure over the pixel limit")
            continue
        buf = io.BytesIO()
        try:
            obj.extract(buf, fb_format="png")
            img = image_from_bytes(buf.getvalue(), Path(f"figure-{k}.png"), max_pixels=limit)
        except InvalidInput as e:
            reject(where, f"figure {k}: {str(e).split(': ', 1)[-1]}", reason="bad figure")
            continue
        except Exception as e:                       # PDFium could not decode the image's data
            reject(where, f"figure {k} cannot be decoded ({type(e).__name__}: {e})", reason="bad figure")
            continue
        ext = ".jpg" if img.mime == "image/jpeg" else ".png"
        path = (Path(options.figures_dir) / f"{img.sha256}{ext}" if options.figures_dir
                else pdf_path.with_name(f"{pdf_path.name}.p{page_no}-figure{k}{ext}"))   # (not saved: no folder)
        img = type(img)(path=Path(path), sha256=img.sha256, data=img.data, mime=img.mime, width=img.width,
                        height=img.height)
        try:
            bounds = obj.get_bounds()
        except Exception:
            bounds = None
        line = _caption(textpage, bounds) if bounds else ""
        im = DocImage(path=img.path, alt=_FIGURE_PREFIX.sub("", line).strip(), sha256=img.sha256, width=img.width,
                      height=img.height, mime=img.mime, data=img, page=None)
        out.append((im, bounds[3] if bounds else float("inf"), line))
    return out


def _open(path: Path, options, reject: Rejects):
    """The PDF's bytes and PDFium document, or None when refused."""
    import pypdfium2 as pdfium

    try:
        size = path.stat().st_size
    except OSError as e:
        reject(str(path), f"cannot read the PDF ({e.strerror})", reason="unreadable")
        return None
    max_bytes = options.pdf_max_bytes or PDF_MAX_BYTES
    if size > max_bytes:
        reject(str(path), f"PDF is {size / 2**20:,.2f} MB, over the {max_bytes / 2**20:,.2f} MB limit "
               "(KGQA_PDF_MAX_MB)", reason="too large")
        return None
    try:
        raw = path.read_bytes()
    except OSError as e:
        reject(str(path), f"cannot read the PDF ({e.strerror})", reason="unreadable")
        return None
    if b"%PDF-" not in raw[:1024]:
        reject(str(path), "not a PDF (no %PDF- header)", reason="not a PDF")
        return None
    if b"%%EOF" not in raw[-2048:]:
        reject(str(path), "truncated PDF (no %%EOF at its end: an incomplete download or copy?)",
               reason="truncated PDF")
        return None
    try:
        pdf = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as e:
        if "password" in str(e).lower():
            reject(str(path), "encrypted PDF: it needs a password, and kgqa reads unencrypted PDFs only "
                   "(decrypt it first, e.g. qpdf --decrypt)", reason="encrypted PDF")
        else:
            reject(str(path), f"damaged PDF: PDFium cannot open it ({e})", reason="damaged PDF")
        return None
    if len(pdf) > (options.pdf_max_pages or PDF_MAX_PAGES):
        n = len(pdf)
        pdf.close()
        reject(str(path), f"PDF has {n:,} pages, over the {options.pdf_max_pages or PDF_MAX_PAGES:,}-page limit "
               "(KGQA_PDF_MAX_PAGES)", reason="too many pages")
        return None
    return raw, pdf


def parse_pdf(path: Path, doc_id: str, options, reject: Rejects) -> ParsedDocument | None:
    """One PDF as a ParsedDocument (module docstring), or None when refused (lenient)."""
    opened = _open(path, options, reject)
    if opened is None:
        return None
    raw, pdf = opened
    try:
        return _parse(pdf, raw, path, doc_id, options, reject)
    finally:
        pdf.close()


def _parse(pdf, raw: bytes, path: Path, doc_id: str, options, reject: Rejects) -> ParsedDocument | None:
    outline = _outline(pdf)
    by_page: dict[int, list[tuple[str, int]]] = {}
    for idx, title, level in outline:
        by_page.setdefault(idx, []).append((title, level))
    meta_title = ""
    try:
        meta_title = " ".join((pdf.get_metadata_value("Title") or "").split())
    except Exception:
        pass
    sections: list[Section] = []
    styles: list = []                            # per section: its heading's style (outline: level), None: continued
    heading = ""                                 # the section open at the top of the next page
    no_text: list[int] = []
    used_ocr = False
    first_line = ""
    for i in range(len(pdf)):
        where = f"{path} p. {i + 1}"
        try:
            page = pdf[i]
            textpage = page.get_textpage()
        except Exception as e:
            reject(where, f"PDFium cannot read this page ({e})", reason="damaged PDF")
            return None
        try:
            text = _page_text(textpage)
            figures = _figures(page, textpage, where, options, reject, path, i + 1)
            for im, _top, line in figures:
                text = _own_paragraph(text, line)
                im.page = i + 1
            if options.ocr_reader is not None:          # ocr.py: a scanned page, the text inside figures
                read = options.ocr_reader.page_text(page, text, [im for im, _, _ in figures])
                if read.strip() and not text.strip():
                    figures = []                        # a scan read whole: its image is the page, not a figure
                used_ocr, text = used_ocr or read != text, read
            if not text.strip():
                no_text.append(i + 1)
            first_line = first_line or next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
            if outline:
                cuts, at = [], 0
                for title, level in by_page.get(i, []):
                    hit = _find_heading(text, title, at)
                    cuts.append((hit[0], hit[1], title, level) if hit else (at, at, title, level))
                    at = hit[1] if hit else at
            else:
                cuts = font_headings(textpage, text)
            # the parts of the page: before the first cut (the open section continued), then one per cut
            parts = [(heading, True, 0, cuts[0][0] if cuts else len(text), None, None)]
            for k, (s, e, title, style) in enumerate(cuts):
                y = _char_top(textpage, s) if s < len(text) else None
                parts.append((title, False, e, cuts[k + 1][0] if k + 1 < len(cuts) else len(text), y, style))
            placed = _place(parts, figures)
            for (title, cont, s, e, _y, style), ims in zip(parts, placed):
                body = clean_text(text[s:e])
                if body or ims or not cont:
                    sections.append(Section(title, body, ims, page=i + 1, cont=cont and bool(sections)))
                    styles.append(None if cont else style)
            if cuts:
                heading = cuts[-1][2]
        finally:
            textpage.close()
            page.close()
    _set_paths(sections, styles, bool(outline))
    title = meta_title if meta_title and meta_title.lower() not in ("untitled", "(untitled)") else ""
    if title:
        _drop_title_line(sections, title)      # the title printed on page 1 (a title from the text stays text)
    title = title or first_line[:200] or path.stem.replace("_", " ")
    kept = []
    for k, s in enumerate(sections):
        if s.text or s.images:
            kept.append(s)
        elif not s.cont and k + 1 < len(sections) and sections[k + 1].cont and sections[k + 1].heading == s.heading:
            sections[k + 1].cont = False        # a heading at the foot of a page: printed with its text
    if not kept:
        pages = page_ranges(no_text) if no_text else "the pages"
        ocr = options.ocr_reader
        why = ("OCR read none" if ocr is not None and ocr.engine else
               f"OCR skipped ({ocr.skipped[0]})" if ocr is not None and ocr.skipped else "no OCR asked")
        reject(str(path), f"no text and no figures: {pages} have no text (scanned?); {why}", reason="empty")
        return None
    return ParsedDocument(id=doc_id, title=title, source=str(path), format="pdf", origin=str(path.resolve()),
                          sections=kept, raw=raw,
                          pages=len(pdf), no_text_pages=no_text,
                          ocr=options.ocr_reader.identity if used_ocr else "")


def _set_paths(sections: list[Section], styles: list, outline: bool) -> None:
    """Each section's heading path from its heading's level (``styles``, one per section, None for a section
    continued from an earlier page): the outline's level, else ``heading_levels`` of this document's heading
    styles. Without an outline, a heading at the top level printed once, first, on page 1 (the title, set
    largest) is the document's title and heads no path."""
    found = [st for st in styles if st is not None]
    levels = {st: st for st in found} if outline else heading_levels(found)
    title_at = None
    firsts = [k for k, st in enumerate(styles) if st is not None]
    if (not outline and firsts and sections[firsts[0]].page == 1 and levels[styles[firsts[0]]] == 1
            and sum(levels[styles[k]] == 1 for k in firsts) == 1 and len(set(levels.values())) > 1):
        title_at = firsts[0]
    pairs = [("" if st is None or k == title_at else s.heading, levels.get(st, 0))
             for k, (s, st) in enumerate(zip(sections, styles))]
    for s, p in zip(sections, heading_paths(pairs)):
        s.path = p


def _char_top(textpage, index: int) -> float | None:
    try:
        return textpage.get_charbox(index)[3]
    except Exception:
        return None


def _place(parts, figures) -> list[list[DocImage]]:
    """Each figure to the part of the page whose heading is the last one printed above the figure's top."""
    placed: list[list[DocImage]] = [[] for _ in parts]
    for im, top, _line in figures:
        k = 0
        for j, part in enumerate(parts[1:], 1):
            y = part[4]
            if y is not None and y >= top - 1:
                k = j
        placed[k].append(im)
    return placed


def _drop_title_line(sections: list[Section], title: str) -> None:
    """The title printed at the top of page 1 is the document's title, not text (a Markdown ``#`` line)."""
    if not sections or sections[0].heading:
        return
    first = sections[0]
    lines = first.text.split("\n")
    if lines and " ".join(lines[0].split()).casefold() == title.casefold():
        first.text = "\n".join(lines[1:]).strip()
    elif first.text.casefold().startswith(title.casefold() + " "):
        first.text = first.text[len(title):].strip()


def save_figures(doc: ParsedDocument) -> None:
    """Write the document's figures to their paths (content-addressed: an existing file is the same figure),
    each through a temporary file renamed into place, so a killed load never leaves half a figure."""
    import os

    for im in doc.images:
        p = Path(im.path)
        if p.exists() or im.data is None:
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
        tmp.write_bytes(im.data.data)
        os.replace(tmp, p)
