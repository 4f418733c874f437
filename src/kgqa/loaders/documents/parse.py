"""Markdown and HTML text into a title and sections (heading, text, image references), and the
shapes of a parsed document. Nothing is fetched and nothing in a page is ever executed."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from kgqa.core.spans import paragraphs_of


# --------------------------------------------------------------------------- parsed documents
@dataclass
class DocImage:
    path: Path
    alt: str
    sha256: str
    width: int
    height: int
    mime: str
    data: object = None                # kgqa.models.base.ImageInput (for the VisionModel)
    page: int | None = None            # PDF: the page the figure is on (1-based)


@dataclass
class Section:
    heading: str
    text: str
    images: list[DocImage] = field(default_factory=list)
    page: int | None = None            # PDF: the page this part of the section is on (1-based); a section
    #                                    that runs over several pages is one Section per page
    cont: bool = False                 # PDF: the section's continuation on a later page (its heading not repeated)
    path: tuple[str, ...] = ()         # the headings from the document's top level down to this section's own
    #                                    (a section under "Eiffel Tower" › "Design": both); () before any heading


@dataclass
class ParsedDocument:
    id: str
    title: str
    source: str
    format: str                        # markdown | html | evqa | pdf
    sections: list[Section]
    raw: bytes
    content_hash: str = ""
    link_key: str = ""                 # the link settings and the Wikidata KG it was linked against (loader)
    origin: str = ""                   # what the id stands for: the resolved file path, or the E-VQA url
    pages: int = 0                     # PDF: its page count
    no_text_pages: list[int] = field(default_factory=list)   # PDF: pages without text (scanned?), after OCR
    ocr: str = ""                      # PDF: the OCR engine that read some of its text (ocr.py), else empty

    @property
    def images(self) -> list[DocImage]:
        return [im for s in self.sections for im in s.images]



# --------------------------------------------------------------------------- heading paths
def heading_paths(headings: list[tuple[str, int]]) -> list[tuple[str, ...]]:
    """The path of each (heading, level) in document order: the headings open above it (each the last one
    seen at a higher level, a smaller number) and its own. An empty heading (text before any heading) has the
    path of what is open, or ()."""
    open_: list[tuple[int, str]] = []
    out = []
    for heading, level in headings:
        if heading:
            while open_ and open_[-1][0] >= level:
                open_.pop()
            open_.append((level, heading))
        out.append(tuple(h for _, h in open_))
    return out


# --------------------------------------------------------------------------- parsing
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


@dataclass
class RawImage:
    ref: str
    alt: str


def parse_markdown(text: str) -> tuple[str | None, list[tuple[str, str, list[RawImage], int]]]:
    """(title, [(heading, text, images, level)]): the first ``#`` is the title; every heading starts a section,
    its level the number of its ``#`` (0 for text before any heading)."""
    title = None
    sections: list[tuple[str, list[str], list[RawImage], int]] = []
    cur: tuple[str, list[str], list[RawImage], int] = ("", [], [], 0)
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m:
            level, heading = len(m.group(1)), m.group(2).strip()
            if level == 1 and title is None and not sections and not "".join(cur[1]).strip():
                title = heading
                continue
            if "".join(cur[1]).strip() or cur[2] or cur[0]:
                sections.append(cur)
            cur = (heading, [], [], level)
            continue
        imgs = [RawImage(m.group(2), m.group(1).strip()) for m in _MD_IMAGE.finditer(line)]
        cur[2].extend(imgs)
        rest = _MD_IMAGE.sub(lambda m: m.group(1), line) if imgs else line
        cur[1].append(rest)
    if "".join(cur[1]).strip() or cur[2] or cur[0]:
        sections.append(cur)
    return title, [(h, clean_text("\n".join(lines)), imgs, level) for h, lines, imgs, level in sections]


_STRUCTURED_LINE = re.compile(r"^\s*(?:\|.*\||[-*+]\s+\S.*|\d+[.)]\s+\S.*|[^\s:|][^:|]{0,40}:\s+\S.*)\s*$")


def clean_text(text: str) -> str:
    """Whitespace collapsed within a paragraph; table rows, list items and ``Key: value`` lines keep their own
    line (the CPU extractor reads them as structured facts)."""
    paras = []
    for p in paragraphs_of(text):
        lines, prose = [], []
        for ln in p.split("\n"):
            if _STRUCTURED_LINE.match(ln):
                if prose:
                    lines.append(" ".join(" ".join(prose).split()))
                    prose = []
                lines.append(" ".join(ln.split()))
            elif ln.strip():
                prose.append(ln)
        if prose:
            lines.append(" ".join(" ".join(prose).split()))
        paras.append("\n".join(x for x in lines if x))
    return "\n\n".join(p for p in paras if p)


class _HTMLSections(HTMLParser):
    """Text, headings, tables and images of an HTML page. Never executes anything: ``<script>``,
    ``<style>``, ``<template>`` and ``<noscript>`` content is skipped as data. A ``<table>`` becomes
    Markdown pipe rows (one line per ``<tr>``, its first row the header), so a table reads the same
    from HTML as from Markdown; a table inside a cell is flattened into that cell."""

    SKIP = {"script", "style", "template", "noscript", "iframe", "object"}
    BLOCK = {"p", "div", "br", "li", "tr", "section", "article", "blockquote", "pre", "table", "ul", "ol"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title: str | None = None          # the first <h1>, else <title>
        self.page_title: str | None = None
        self.sections: list[tuple[str, list[str], list[RawImage], int]] = []
        self._cur: tuple[str, list[str], list[RawImage], int] = ("", [], [], 0)
        self._skip = 0
        self._in_title = False
        self._heading: list[str] | None = None
        self._heading_level = 0
        self._table = 0                        # <table> depth
        self._row: list[str] | None = None     # the cells of the open <tr>
        self._rows: list[list[str]] = []       # the rows of the open outermost table

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self._skip += 1
            return
        if self._skip:
            return
        a = dict(attrs)
        if tag == "title":
            self._in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self._heading, self._heading_level = [], int(tag[1])
        elif tag == "img" and a.get("src"):
            self._cur[2].append(RawImage(a["src"], (a.get("alt") or "").strip()))
        elif tag == "table":
            self._table += 1
            if self._table == 1:
                self._rows = []
        elif self._table == 1 and tag == "tr":
            self._row = []
        elif self._table == 1 and tag in ("td", "th"):
            if self._row is None:
                self._row = []
            self._row.append("")
        elif self._table:
            return
        elif tag in self.BLOCK:
            self._cur[1].append("\n\n")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag in self.SKIP:
            self._skip -= 1

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if self._skip:
            return
        if tag == "title":
            self._in_title = False
        elif tag == "table" and self._table:
            self._table -= 1
            if self._table == 0:
                self._end_row()
                lines = [f"| {' | '.join(r)} |" for r in self._rows if any(r)]
                self._cur[1].append("\n\n" + "\n".join(lines) + "\n\n" if lines else "\n\n")
                self._rows = []
        elif self._table == 1 and tag == "tr":
            self._end_row()
        elif self._table:
            return
        elif re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            heading = " ".join("".join(self._heading).split())
            self._heading = None
            if self._heading_level == 1 and self.title is None:
                self.title = heading
                return
            if "".join(self._cur[1]).strip() or self._cur[2] or self._cur[0]:
                self.sections.append(self._cur)
            self._cur = (heading, [], [], self._heading_level)
        elif tag in self.BLOCK:
            self._cur[1].append("\n\n")

    def handle_data(self, data):
        if self._skip:
            return
        if self._in_title:
            self.page_title = self.page_title or " ".join(data.split())
        elif self._heading is not None:
            self._heading.append(data)
        elif self._table:
            if self._row:
                self._row[-1] += data
        else:
            self._cur[1].append(data)

    def _end_row(self) -> None:
        if self._row is not None:
            self._rows.append([" ".join(c.replace("|", "/").split()) for c in self._row])
            self._row = None

    def parse_marked_section(self, i, report=1):
        """``<![…`` : CDATA and the known keywords as the standard parser reads them; anything else (``<![x``,
        ``<![`` with no name), where Python's parser raises AssertionError (fuzzing found it), is skipped up
        to its ``>`` as a browser skips a bogus comment; unterminated, it is left to the parser's end of data."""
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            j = self.rawdata.find(">", i + 3)
            return -1 if j < 0 else j + 1

    def result(self):
        if "".join(self._cur[1]).strip() or self._cur[2] or self._cur[0]:
            self.sections.append(self._cur)
        return self.title or self.page_title, [(h, clean_text("".join(parts)), imgs, level)
                                               for h, parts, imgs, level in self.sections]


def parse_html(text: str):
    p = _HTMLSections()
    p.feed(text)
    p.close()
    return p.result()
