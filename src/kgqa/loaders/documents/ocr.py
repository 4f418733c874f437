"""OCR for a PDF's pages without a text layer (scans) and for the text inside its figures.

The engine is Tesseract (Debian's ``tesseract-ocr``, Apache-2.0), run as a separate process on a PNG given on
its standard input; nothing is imported from it. ``bench/ocr.py`` chose it over RapidOCR (PP-OCRv4 on
onnxruntime) on real pages rasterised from their known text (docs/benchmarks.md): fewer character and word
errors on English technical text (RapidOCR's recogniser drops spaces between words) at a similar speed on one
thread.

* **a page without text**: PDFium renders it at ``OCR_DPI`` in grey and Tesseract reads it; its words (TSV
  output, with a confidence each) become the page's text, a blank line between Tesseract's paragraphs, so the
  page is segmented and cited as any other page (the OCR'd text is that page's).
* **a figure's text**: on a page that has a text layer, each figure is read too; its words of confidence at
  least ``FIGURE_MIN_CONF`` become a paragraph of that page, when at least ``FIGURE_MIN_WORDS`` such words
  have 3 letters or digits (a photograph's noise is no paragraph).
* **without the engine** (not installed, or switched off: ``KGQA_OCR=false``, ``kgqa load documents
  --no-ocr``) nothing is read and the loader says so in one line; the rest of the document loads.

Tesseract runs with ``OMP_THREAD_LIMIT`` = ``threads`` (1 by default: the pages of a load are read one after
another). Each result is kept under ``cache_dir`` by the SHA-256 of the engine's version and the image, so
reloading a scanned PDF (an unchanged document is parsed again to be compared) reads nothing twice.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

OCR_DPI = 200                 # pages are rendered at this resolution for the engine
FIGURE_MIN_CONF = 70          # a figure's word below this confidence (0–100) is left out
FIGURE_MIN_WORDS = 2          # a figure with fewer words of 3 letters or digits gives no paragraph
FIGURE_MIN_WIDTH = 1000       # a narrower figure is scaled up (at most 4×) before it is read
TIMEOUT_S = 120               # one image, one process


@dataclass
class Tesseract:
    """The ``tesseract`` command: ``read(png)`` → (words with their confidence, one list per paragraph line)."""

    binary: str
    version: str
    threads: int = 1

    @classmethod
    def find(cls, threads: int = 1, binary: str | None = None) -> "Tesseract | None":
        """The engine on PATH (or ``binary``), None when it is not installed or does not run."""
        path = shutil.which(binary or "tesseract")
        if path is None:
            return None
        try:
            out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        first = (out.stdout or out.stderr).strip().split("\n")[0]
        return cls(path, first or "tesseract", threads) if out.returncode == 0 else None

    def lines(self, png: bytes, psm: int = 3) -> list[list[tuple[str, float]]]:
        """The image's text lines, each a list of (word, confidence); an empty list marks a paragraph's end."""
        env = {**os.environ, "OMP_THREAD_LIMIT": str(self.threads)}
        out = subprocess.run([self.binary, "stdin", "stdout", "-l", "eng", "--psm", str(psm), "tsv"], input=png,
                             capture_output=True, env=env, timeout=TIMEOUT_S)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.decode(errors="replace").strip().split("\n")[-1] or "tesseract failed")
        lines: list[list[tuple[str, float]]] = []
        key = par = None
        for row in out.stdout.decode("utf-8", errors="replace").split("\n")[1:]:
            f = row.split("\t")
            if len(f) < 12 or f[0] != "5" or not f[11].strip():
                continue
            if (f[2], f[3]) != par and lines:
                lines.append([])                    # a new block or paragraph: a blank line
            par = (f[2], f[3])
            if (f[2], f[3], f[4]) != key:
                lines.append([])
                key = (f[2], f[3], f[4])
            lines[-1].append((f[11], float(f[10])))
        return lines

    def read(self, png: bytes) -> str:
        """The image's text, lines as read, a blank line between paragraphs."""
        return as_text(self.lines(png))


def as_text(lines: list[list[tuple[str, float]]], min_conf: float = -1) -> str:
    out: list[str] = []
    for ln in lines:
        words = [w for w, c in ln if c >= min_conf]
        if ln and words:
            out.append(" ".join(words))
        elif not ln and out and out[-1]:
            out.append("")
    return "\n".join(out).strip()


@dataclass
class PageOCR:
    """The OCR of one load's PDFs: what is read and what it cost (``kgqa load documents`` reports it)."""

    engine: Tesseract | None
    cache_dir: Path | None = None
    pages: int = 0                       # pages without text read
    figures: int = 0                     # figures that gave a paragraph
    seconds: float = 0.0                 # the engine's time, on the pages it read (not those from the cache)
    engine_pages: int = 0                # pages the engine read (not from the cache): the rate is over these
    skipped: list[str] = field(default_factory=list)   # why nothing was read (engine absent or off), once

    @property
    def identity(self) -> str:
        """What a document's OCR'd text depends on (part of its content hash)."""
        return f"ocr:{self.engine.version}:{OCR_DPI}:{FIGURE_MIN_CONF}" if self.engine else ""

    def page_text(self, page, text: str, figures: list) -> str:
        """``text`` (the page's text layer) with what OCR reads: the whole page when it has no text, else each
        figure's words as a paragraph of their own after its caption's paragraph (after the page's text when the
        figure has no caption printed there), so that a chunk of the page holds the figure's words with its caption
        (``figures``: its ``DocImage``s)."""
        if self.engine is None:
            return text
        if not text.strip():
            read = self._cached(_render(page), self._page_text)
            if read.strip():
                self.pages += 1
            return read + "\n" if read.strip() else text
        out, read_any = text.rstrip("\n"), False
        for im in figures:
            if im.data is None:
                continue
            read = self._cached(_scaled(im.data.data), self._figure_text)
            if read:
                self.figures += 1
                out, read_any = after_caption(out, im.alt, read), True
        return out + "\n" if read_any else text

    def _page_text(self, png: bytes) -> str:
        self.engine_pages += 1
        return self.engine.read(png)

    def _figure_text(self, png: bytes) -> str:
        text = as_text(self.engine.lines(png, psm=11), FIGURE_MIN_CONF)
        words = [w for w in text.split() if sum(ch.isalnum() for ch in w) >= 3]
        return text if len(words) >= FIGURE_MIN_WORDS else ""

    def _cached(self, png: bytes, read) -> str:
        key = hashlib.sha256(self.identity.encode() + b"\0" + png).hexdigest()
        path = self.cache_dir / key[:2] / f"{key}.txt" if self.cache_dir else None
        if path is not None and path.exists():
            return path.read_text(encoding="utf-8")
        t = time.perf_counter()
        text = read(png)
        self.seconds += time.perf_counter() - t          # (a figure's time too: the rate is a lower bound)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        return text


def page_ocr(enabled: bool, cache_dir: Path | None, threads: int = 1) -> PageOCR:
    """The load's OCR: Tesseract when ``enabled`` and installed, else one that reads nothing and says why."""
    if not enabled:
        return PageOCR(None, skipped=["off: KGQA_OCR=false or --no-ocr"])
    engine = Tesseract.find(threads=threads)
    if engine is None:
        return PageOCR(None, skipped=["tesseract is not installed: apt-get install tesseract-ocr"])
    return PageOCR(engine, cache_dir)


def _render(page) -> bytes:
    img = page.render(scale=OCR_DPI / 72, grayscale=True).to_pil()
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _scaled(data: bytes) -> bytes:
    """A figure's image as a grey PNG at least ``FIGURE_MIN_WIDTH`` wide (scaled at most 4×)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        g = im.convert("L")
        if g.width < FIGURE_MIN_WIDTH:
            k = min(4.0, FIGURE_MIN_WIDTH / max(1, g.width))
            g = g.resize((round(g.width * k), round(g.height * k)), Image.LANCZOS)
        buf = io.BytesIO()
        g.save(buf, format="PNG")
        return buf.getvalue()


def after_caption(text: str, caption: str, read: str) -> str:
    """``read`` (a figure's words) as a paragraph of ``text`` after the paragraph holding ``caption`` (its words in
    order, whatever the spacing), or at its end when the caption is not found."""
    words = caption.split()
    m = re.search(r"\s+".join(re.escape(w) for w in words), text) if words else None
    if m is None:
        return f"{text}\n\n{read}"
    end = text.find("\n\n", m.end())
    end = len(text) if end < 0 else end
    return f"{text[:end]}\n\n{read}{text[end:]}"
