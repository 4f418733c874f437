"""The options of ``kgqa load documents`` and the report it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: bump when segmentation, prompts or the stored shape change: every document is re-extracted
EXTRACTOR_VERSION = "mkgrag-docs-2"
DOC_SUFFIXES = (".md", ".markdown", ".html", ".htm")
PDF_SUFFIXES = (".pdf",)
EVQA_SUFFIXES = (".jsonl",)
MAX_DOC_BYTES = 5 * 1024 * 1024      # a single document file over 5 MB is refused (or skipped)
STAND_IN = "whole-image stand-in"


@dataclass
class DocOptions:
    chunk_tokens: int = 300            # the fixed chunk size for sections without images (3.1)
    paragraphs: bool = False           # a long section split at paragraph ends (whole paragraphs per chunk)
    strict: bool = True
    link: bool = True                  # SAME_AS links to Wikidata entities
    link_threshold: float = 0.8
    link_candidates: int = 5
    max_bytes: int = MAX_DOC_BYTES
    extract_max_tokens: int = 200
    progress: bool | str = False       # True: a bar (terminal); "log": lines with rate and ETA; False: none
    images: Path | None = None         # E-VQA: folder holding the images named by their URL's file name
    only: tuple[str, ...] = ()         # load only these document ids (tests, benchmarks)
    write_batch: int = 500             # rows per write transaction (a larger document: several, resumable)
    force: bool = False                # re-extract every document, unchanged ones too (--force)
    # PDFs (loaders/documents/pdf.py); the loader sets them from the Settings (KGQA_PDF_*) when left None
    pdf_max_bytes: int | None = None
    pdf_max_pages: int | None = None
    max_figure_pixels: int | None = None
    figures_dir: Path | None = None    # where figures taken out of PDFs are saved (<data dir>/figures)
    ocr: bool | None = None            # OCR of scanned pages and figures' text (None: the Settings' KGQA_OCR)
    ocr_reader: object = None          # the load's ocr.PageOCR (the loader sets it)
    # a document's vectors saved as they are computed, so a killed load resumes (embed_cache.py); the loader
    # sets it to <data dir>/doc-embeddings when left None
    embed_cache_dir: Path | None = None


@dataclass
class DocResult:
    id: str
    source: str
    status: str                        # written | replaced | re-extracted | unchanged | skipped | failed
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    regions: int = 0
    same_as: int = 0
    reason: str = ""
    pages: int = 0                     # PDF: pages read
    figures: int = 0                   # images (a PDF's figures, a Markdown document's images)
    resumed_vectors: int = 0           # vectors a killed load had saved, reused instead of computed again
    resumed: str = ""                  # the line that says so ("resumed after page 247 of 500: …")


@dataclass
class DocReport:
    path: str
    documents: list[DocResult] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)       # seconds per stage
    fallbacks: dict[str, int] = field(default_factory=dict)      # "text_graph:schema" -> n
    skipped: dict[str, int] = field(default_factory=dict)        # reason -> n (lenient)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (file, why) of each skip (lenient)
    rejects_file: str | None = None                                # where they are all written (lenient)
    dropped_ungrounded: int = 0
    visual: str = ""
    seconds: float = 0.0
    torch_threads: int | None = None
    chat: str = ""
    warnings: list[str] = field(default_factory=list)           # one line each (a PDF's pages without text)
    no_text_pages: int = 0             # PDF pages left without text (after OCR)
    ocr_pages: int = 0                 # PDF pages without a text layer read by OCR
    ocr_figures: int = 0               # figures whose text OCR read
    ocr_seconds: float = 0.0           # the engine's seconds (pages read before come from the OCR cache)
    ocr_engine_pages: int = 0          # pages the engine read this time (the rate's pages)
    ocr_skipped: str = ""              # why OCR read nothing (engine absent, switched off)
    ocr_unread: list[str] = field(default_factory=list)        # "file: pages 3–7" left without text by that

    def stage(self, name: str, seconds: float) -> None:
        self.stages[name] = self.stages.get(name, 0.0) + seconds

    def count(self, status: str) -> int:
        return sum(1 for d in self.documents if d.status == status)

    def as_dict(self) -> dict:
        done = [d for d in self.documents if d.status in ("written", "replaced", "re-extracted", "relinked")]
        minutes = self.seconds / 60 if self.seconds > 0 else 0
        return {
            "path": self.path, "seconds": round(self.seconds, 2), "torch_threads": self.torch_threads,
            "chat": self.chat, "visual": self.visual,
            "documents": [d.__dict__ for d in self.documents],
            "written": self.count("written"), "replaced": self.count("replaced"),
            "re_extracted": self.count("re-extracted"), "relinked": self.count("relinked"),
            "unchanged": self.count("unchanged"), "skipped_documents": self.count("skipped"),
            "chunks": sum(d.chunks for d in done), "entities": sum(d.entities for d in done),
            "relations": sum(d.relations for d in done), "regions": sum(d.regions for d in done),
            "same_as": sum(d.same_as for d in done),
            "documents_per_min": round(len(done) / minutes, 2) if minutes else None,
            "chunks_per_min": round(sum(d.chunks for d in done) / minutes, 2) if minutes else None,
            "stages": {k: round(v, 2) for k, v in self.stages.items()},
            "fallbacks": dict(self.fallbacks), "skipped": dict(self.skipped),
            "rejected": [{"file": w, "why": y} for w, y in self.rejected], "rejects_file": self.rejects_file,
            "dropped_ungrounded": self.dropped_ungrounded,
            "pages": sum(d.pages for d in done), "figures": sum(d.figures for d in done),
            "resumed_vectors": sum(d.resumed_vectors for d in self.documents),
            "resumed": [f"{d.id}: {d.resumed}" for d in self.documents if d.resumed],
            "no_text_pages": self.no_text_pages, "warnings": list(self.warnings),
            "ocr_pages": self.ocr_pages, "ocr_figures": self.ocr_figures, "ocr_seconds": round(self.ocr_seconds, 2),
            "ocr_pages_per_min": (round(60 * self.ocr_engine_pages / self.ocr_seconds, 1)
                                  if self.ocr_engine_pages and self.ocr_seconds else None),
            "ocr_skipped": self.ocr_skipped, "ocr_unread": list(self.ocr_unread),
        }
