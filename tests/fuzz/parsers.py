"""Coverage-guided fuzzing (atheris, libFuzzer) of the parsers one at a time, where tests/fuzz/loaders.py
fuzzes whole input folders: each target gets the fuzzed bytes straight, so a run reaches far more inputs.
No input may end in anything but a result or the project's one-line error (``kgqa.core.errors.KgqaError``,
its message one line); anything else is a crash that libFuzzer reports with the input that caused it.

Targets (``--target NAME``):

* ``wd5m-line``  a Wikidata5M file's lines as ``read_lines`` yields them (UTF-8 checked per line), each
  through the entity and relation catalogue parsers, the triple parser and the description parser;
* ``image``      the image checks: ``kgqa.core.images.load_image`` (format, size, pixel limits, verify) and
  then ``kgqa serve``'s full decode of an upload, on mutated real PNG / JPEG / WebP / GIF files and on raw bytes;
* ``markdown``   ``parse_markdown`` and ``clean_text`` on text built from Markdown's own tokens and raw text;
* ``html``       ``parse_html`` on text built from HTML's tokens (tables, images, scripts, entities) and raw text;
* ``pdf``        ``parse_pdf`` (PDFium through pypdfium2: pages, outline, font headings, figures and captions) on
  mutated real PDFs written by reportlab (two pages, an outline, a figure with its caption; one without an
  outline), bytes overwritten, cut or spliced, and on raw bytes behind a ``%PDF-`` header.

Run: ``python -m tests.fuzz.parsers --target image -runs=2000 -seed=36`` (libFuzzer's options follow;
exit 0 when no input crashed). ``tests/unit/test_fuzz_parsers.py`` runs each on a fixed seed and budget
inside ``make test``; ``bench/fuzz.py`` runs each for minutes and prints the executions.
"""

from __future__ import annotations

import io
import shutil
import sys
from pathlib import Path

import atheris

from tests.fuzz.scratch import work_dir

with atheris.instrument_imports(include=["kgqa", "PIL", "html", "_markupbase"]):   # not all 400 modules
    from PIL import GifImagePlugin, Image, JpegImagePlugin, PngImagePlugin, WebPImagePlugin  # noqa: F401
    from kgqa.app.serve_input import _decode_fully
    from kgqa.core.errors import KgqaError
    from kgqa.core.ids import PID, QID
    from kgqa.core.images import load_image
    from kgqa.loaders.documents.options import DocOptions
    from kgqa.loaders.documents.parse import clean_text, parse_html, parse_markdown
    from kgqa.loaders.documents.pdf import parse_pdf
    from kgqa.loaders.rejects import Rejects
    from kgqa.loaders.wikidata5m.files import (parse_catalogue_line, parse_text_line, parse_triple_line,
                                               read_lines)

TARGETS = ("wd5m-line", "image", "markdown", "html", "pdf")
ROOT = work_dir()
FILE = ROOT / "input"


def _one_line(e: KgqaError) -> None:
    assert "\n" not in str(e), f"a {type(e).__name__} of more than one line: {str(e)[:300]!r}"


# --------------------------------------------------------------------------- Wikidata5M lines
RELATIONS = {"P1": "relation", "P19": "place of birth"}
ENTITIES = {"Q1", "Q2", "Q42"}


def wd5m_line(data: bytes) -> None:
    FILE.write_bytes(data)
    for _, text, why, _raw in read_lines(FILE):
        if text is None:
            assert why.startswith("encoding:"), why
            continue
        for result in (parse_catalogue_line(text, QID, "entity"), parse_catalogue_line(text, PID, "relation"),
                       parse_triple_line(text, RELATIONS, ENTITIES), parse_text_line(text)):
            row, why = result
            assert row is not None or why, (text[:200], result)
            assert "\n" not in why


# --------------------------------------------------------------------------- images
def _templates() -> list[bytes]:
    from PIL import Image

    out = []
    im = Image.new("RGB", (16, 12), (200, 30, 40))
    for fmt in ("PNG", "JPEG", "WEBP", "GIF"):
        buf = io.BytesIO()
        im.save(buf, fmt)
        out.append(buf.getvalue())
    return out


TEMPLATES = _templates()


def _mutated(fdp: atheris.FuzzedDataProvider, template: bytes, how: int, *, edits: int, splice: int,
             tail: bytes = b"") -> bytes:
    """A real file, mutated: up to ``edits`` bytes overwritten; then (how 2) cut, ``tail`` appended, or
    (how 3) up to ``splice`` fuzzed bytes spliced in."""
    blob = bytearray(template)
    for _ in range(fdp.ConsumeIntInRange(0, edits)):
        if not blob:
            break
        blob[fdp.ConsumeIntInRange(0, len(blob) - 1)] = fdp.ConsumeInt(1) & 0xFF
    if how == 2 and blob:
        blob = blob[:fdp.ConsumeIntInRange(0, len(blob))] + tail
    if how == 3:
        at = fdp.ConsumeIntInRange(0, len(blob))
        blob[at:at] = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, splice))
    return bytes(blob)


def image(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    how = fdp.ConsumeIntInRange(0, 3)
    if how == 0:                                  # raw bytes
        blob = fdp.ConsumeBytes(fdp.remaining_bytes())
    else:                                         # a real file, mutated: bytes overwritten, cut, spliced
        blob = _mutated(fdp, TEMPLATES[fdp.ConsumeIntInRange(0, len(TEMPLATES) - 1)], how, edits=8, splice=64)
    FILE.write_bytes(blob)
    try:
        img = load_image(FILE, max_pixels=1_000_000)
        _decode_fully(img.data)
    except KgqaError as e:
        _one_line(e)


# --------------------------------------------------------------------------- documents
MD_TOKENS = ["# ", "## ", "### ", "\n", "\n\n", "![", "](", ")", "[", "]", "|", " | ", "---", "|---|", "```",
             "`", "*", "_", "- ", "1. ", "> ", "<img src=\"a.png\">", "<script>", "</script>", "Key: value",
             "http://x/", "file:///etc/passwd", "\t", "\\", "&amp;", "\u00a0", "\u200b", "é", "\ud7ff", "😀"]
HTML_TOKENS = ["<html>", "<body>", "<h1>", "</h1>", "<h2>", "<p>", "</p>", "<br>", "<br/>", "<table>", "</table>",
               "<tr>", "</tr>", "<td>", "</td>", "<th>", "<img src=\"a.png\" alt=\"x\">", "<img src=", "alt=",
               "<script>", "</script>", "<style>", "</style>", "<!--", "-->", "<![CDATA[", "]]>", "&amp;", "&#0;",
               "&#x110000;", "&#99999999;", "&nbsp;", "<", ">", "\"", "'", "=", "\n", " ", "<title>", "</title>",
               "<a href=\"javascript:x\">", "</a>", "<div>", "</div>", "<svg>", "<math>", "</", "<!DOCTYPE html>"]


def _soup(fdp: atheris.FuzzedDataProvider, tokens: list[str]) -> str:
    if fdp.ConsumeBool():
        return fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes())
    parts = []
    while fdp.remaining_bytes() > 0 and len(parts) < 400:
        if fdp.ConsumeIntInRange(0, 3) == 0:
            parts.append(fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 24)))
        else:
            parts.append(tokens[fdp.ConsumeIntInRange(0, len(tokens) - 1)])
    return "".join(parts)


def markdown(data: bytes) -> None:
    text = _soup(atheris.FuzzedDataProvider(data), MD_TOKENS)
    try:
        parse_markdown(text)
        clean_text(text)
    except KgqaError as e:
        _one_line(e)


def html(data: bytes) -> None:
    text = _soup(atheris.FuzzedDataProvider(data), HTML_TOKENS)
    try:
        parse_html(text)
    except KgqaError as e:
        _one_line(e)


# --------------------------------------------------------------------------- PDFs
def _pdf_templates() -> list[bytes]:
    from tests.pdfs import FALCON, make_pdf

    d = ROOT / "pdf-templates"
    d.mkdir(exist_ok=True)
    return [make_pdf(d / "a.pdf", "Falcon 9", FALCON, page_break_before={"Notable launches"}).read_bytes(),
            make_pdf(d / "b.pdf", "Falcon 9", FALCON[:2], outline=False).read_bytes()]


PDF_TEMPLATES: list[bytes] = []
PDF_FILE = ROOT / "input.pdf"
PDF_OPTIONS = DocOptions(figures_dir=ROOT / "figures")


def pdf(data: bytes) -> None:
    if not PDF_TEMPLATES:
        PDF_TEMPLATES.extend(_pdf_templates())
    fdp = atheris.FuzzedDataProvider(data)
    how = fdp.ConsumeIntInRange(0, 3)
    if how == 0:                                  # raw bytes behind a header (past the loader's first check)
        blob = b"%PDF-1.4\n" + fdp.ConsumeBytes(fdp.remaining_bytes()) + b"\n%%EOF\n"
    else:                                         # a real PDF, mutated: bytes overwritten, cut, spliced
        blob = _mutated(fdp, PDF_TEMPLATES[fdp.ConsumeIntInRange(0, len(PDF_TEMPLATES) - 1)], how, edits=16,
                        splice=256, tail=b"\n%%EOF\n")          # a cut PDF keeps an end, past the first check
    PDF_FILE.write_bytes(blob)
    try:
        parse_pdf(PDF_FILE, "fuzzed", PDF_OPTIONS, Rejects(True))
    except KgqaError as e:
        _one_line(e)


FUZZERS = {"wd5m-line": wd5m_line, "image": image, "markdown": markdown, "html": html, "pdf": pdf}


def main() -> None:
    args = list(sys.argv)
    target = None
    for a in list(args[1:]):
        if a.startswith("--target="):
            target = a.split("=", 1)[1]
            args.remove(a)
    if "--target" in args:
        i = args.index("--target")
        target = args[i + 1]
        del args[i:i + 2]
    if target not in FUZZERS:
        print(f"--target: one of {', '.join(TARGETS)}", file=sys.stderr)
        sys.exit(2)
    try:
        atheris.Setup(args, FUZZERS[target])
        atheris.Fuzz()
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
