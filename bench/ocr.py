"""OCR engines on pages whose text is known: real PDFs' pages rasterised, read back, scored against their text layer.

    OMP_THREAD_LIMIT=1 python -m bench.ocr [--pdf FILE ...] [--pages N] [--dpi 150,200] [--engines tesseract,rapidocr]

Each PDF's pages (``--pages`` of them, spread evenly) are rendered by PDFium (``pypdfium2``) at each ``--dpi``
to a greyscale image, read by each engine, and compared with the page's own text layer: character error rate
(CER: Levenshtein distance over the reference's length, whitespace runs as one space) and word error rate (WER:
the same over words). Speed is pages per minute, one thread per engine (tesseract: ``OMP_THREAD_LIMIT=1``, one
process at a time; RapidOCR: onnxruntime intra/inter-op threads 1), rendering not included.

Engines: ``tesseract`` (Debian's ``tesseract-ocr``, run as a separate process, as ``kgqa.loaders.documents.ocr``
does) and ``rapidocr`` (PyPI's ``rapidocr-onnxruntime``, PP-OCRv4 models in the wheel; measured only where it is
importable: the project does not depend on it). The default PDFs are the two Debian documentation PDFs of
``bench/technical.py``.
"""

from __future__ import annotations

import argparse
import io
import os
import time
from pathlib import Path

import numpy as np

DEFAULT_PDFS = ("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf", "/usr/share/doc/libtasn1-doc/libtasn1.pdf")


def levenshtein(a: list, b: list) -> int:
    """Edit distance of two sequences (one numpy row per item of ``a``; insertions by a running minimum)."""
    if not a or not b:
        return max(len(a), len(b))
    codes = {x: i for i, x in enumerate(dict.fromkeys([*a, *b]))}
    bb = np.array([codes[x] for x in b])
    row = np.arange(len(b) + 1)
    ramp = np.arange(len(b) + 1)
    for i, x in enumerate(a, 1):
        sub = row[:-1] + (bb != codes[x])
        new = np.empty_like(row)
        new[0] = i
        new[1:] = np.minimum(sub, row[1:] + 1)
        row = np.minimum.accumulate(new - ramp) + ramp
    return int(row[-1])


def rates(ref: str, hyp: str) -> tuple[int, int, int, int]:
    """(character errors, reference characters, word errors, reference words), whitespace runs as one space."""
    r, h = " ".join(ref.split()), " ".join(hyp.split())
    return levenshtein(list(r), list(h)), len(r), levenshtein(r.split(), h.split()), len(r.split())


def pages_of(pdf_path: str, n: int, dpi: int):
    """(page number, text layer, PNG bytes) of ``n`` pages spread evenly over the PDF, those with text only."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(pdf_path)
    total = len(pdf)
    picks = sorted({int(i * total / n) for i in range(n)})
    out = []
    for i in picks:
        page = pdf[i]
        tp = page.get_textpage()
        text = tp.get_text_range().replace("\r\n", "\n")
        tp.close()
        if len(text.split()) < 20:
            continue
        img = page.render(scale=dpi / 72, grayscale=True).to_pil()
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        out.append((i + 1, text, buf.getvalue()))
        page.close()
    pdf.close()
    return out


def tesseract_engine():
    from kgqa.loaders.documents.ocr import Tesseract

    eng = Tesseract.find(threads=1)
    return None if eng is None else eng.read


def rapidocr_engine():
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError:
        return None
    ocr = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)

    def read(png: bytes) -> str:
        result, _ = ocr(png)
        lines = []                                   # boxes top to bottom, a line's boxes left to right
        for box, text, _score in sorted(result or [], key=lambda r: (r[0][0][1], r[0][0][0])):
            top = box[0][1]
            if lines and abs(lines[-1][0] - top) < 0.5 * (box[2][1] - box[0][1]):
                lines[-1][1].append((box[0][0], text))
            else:
                lines.append([top, [(box[0][0], text)]])
        return "\n".join(" ".join(t for _, t in sorted(parts)) for _, parts in lines)
    return read


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pdf", nargs="*", default=list(DEFAULT_PDFS))
    ap.add_argument("--pages", type=int, default=4, help="pages per PDF, spread evenly (default 4)")
    ap.add_argument("--dpi", default="150,200")
    ap.add_argument("--engines", default="tesseract,rapidocr")
    args = ap.parse_args()
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    engines = {"tesseract": tesseract_engine, "rapidocr": rapidocr_engine}
    print(f"OCR on rasterised pages with a known text layer · 1 thread per engine · load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'engine':10} {'dpi':>4} {'pages':>5} {'CER %':>6} {'WER %':>6} {'pages/min':>9}")
    for dpi in [int(x) for x in args.dpi.split(",")]:
        pages = [p for f in args.pdf if Path(f).exists() for p in pages_of(f, args.pages, dpi)]
        for name in args.engines.split(","):
            read = engines[name]()
            if read is None:
                print(f"{name:10} {dpi:>4}  not installed")
                continue
            ce = cn = we = wn = 0
            t = time.perf_counter()
            for _no, ref, png in pages:
                c, n, w, m = rates(ref, read(png))
                ce, cn, we, wn = ce + c, cn + n, we + w, wn + m
            dt = time.perf_counter() - t
            print(f"{name:10} {dpi:>4} {len(pages):>5} {100 * ce / cn:>6.2f} {100 * we / wn:>6.2f} "
                  f"{60 * len(pages) / dt:>9.1f}")


if __name__ == "__main__":
    main()
