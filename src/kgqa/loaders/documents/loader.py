"""The ``DocumentLoader``: the pipeline of the package doc over a folder of documents, one document
at a time; an unchanged document (same content, same extractor) is skipped, one that is not complete (a
killed load) is written again.

A document's fingerprint is its content hash and its extractor: which one extracted it (the CPU rules, or
the chat backend and model) and that extractor's version, ``EXTRACTOR_VERSION`` plus a digest of the code
that turns a file into its graph (``extractor_code``): a changed extractor re-extracts every document it
meets (reported ``re-extracted``), and ``--force`` (``DocOptions.force``) re-extracts them on demand."""

from __future__ import annotations

import functools
import hashlib
import importlib
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from kgqa.loaders.documents.cpu_extract import (CPU_EXTRACTOR, LITERAL_TYPES, RelationCatalogue, cpu_text_graph,
                                                link_subject, match_stand_in_regions)
from kgqa.loaders.documents.discover import content_hash, discover
from kgqa.loaders.documents.embed import Resumed, document_rows
from kgqa.loaders.documents.embed_cache import EmbeddingCache, cache_root
from kgqa.loaders.documents.embed_cache import remove as remove_saved_vectors
from kgqa.loaders.documents.extract import match, text_graph, visual_graph
from kgqa.loaders.documents.kg import DocumentKG
from kgqa.loaders.documents.link import link_entities
from kgqa.loaders.documents.ocr import page_ocr
from kgqa.loaders.documents.options import EXTRACTOR_VERSION, STAND_IN, DocOptions, DocReport, DocResult
from kgqa.loaders.documents.parse import ParsedDocument
from kgqa.loaders.documents.pdf import page_ranges, save_figures
from kgqa.loaders.documents.segment import segment
from kgqa.loaders.documents.store import write_document
from kgqa.loaders.progress import DocumentProgress
from kgqa.loaders.rejects import Rejects
from kgqa.models.gguf import llm_token_counter
from kgqa.models.vector_space import record_space


#: The modules whose code makes a document's graph, by extractor: a change to any re-extracts.
EXTRACTOR_MODULES = {
    "cpu": ("kgqa.loaders.documents.parse", "kgqa.loaders.documents.pdf", "kgqa.loaders.documents.ocr",
            "kgqa.loaders.documents.segment", "kgqa.loaders.documents.kg",
            "kgqa.loaders.documents.cpu_extract", "kgqa.core.spans"),
    "llm": ("kgqa.loaders.documents.parse", "kgqa.loaders.documents.pdf", "kgqa.loaders.documents.ocr",
            "kgqa.loaders.documents.segment", "kgqa.loaders.documents.kg",
            "kgqa.loaders.documents.extract", "kgqa.loaders.extraction_prompts"),
}


@functools.lru_cache(maxsize=None)
def extractor_code(kind: str) -> str:
    """A short digest of the source of ``EXTRACTOR_MODULES[kind]``: the extractor's version as its code."""
    h = hashlib.sha256()
    for name in EXTRACTOR_MODULES[kind]:
        module = importlib.import_module(name)
        h.update(name.encode())
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()[:12]


def fingerprint(content: str, extractor: str) -> str:
    """What a stored document's ``content_hash`` holds: its content hash and its extractor, together."""
    return hashlib.sha256(f"{content}|{extractor}".encode()).hexdigest()


def gone(origin: str) -> bool:
    """Whether a stored document's origin is a local file that no longer exists (E-VQA origins are URLs)."""
    return Path(origin).is_absolute() and not Path(origin).exists()


def with_pdf_limits(options: DocOptions, settings) -> DocOptions:
    """``options`` with the PDF limits, the figures folder and the OCR it leaves unset taken from the Settings."""
    from dataclasses import replace

    ocr = settings.ocr if options.ocr is None else options.ocr
    return replace(options, ocr=ocr,
                   ocr_reader=options.ocr_reader or page_ocr(ocr, Path(settings.data_dir) / "ocr-cache"),
                   pdf_max_bytes=options.pdf_max_bytes or int(settings.pdf_max_mb * 1024 * 1024),
                   pdf_max_pages=options.pdf_max_pages or settings.pdf_max_pages,
                   max_figure_pixels=options.max_figure_pixels or settings.pdf_max_figure_pixels,
                   figures_dir=options.figures_dir or settings.figures_dir,
                   embed_cache_dir=options.embed_cache_dir or cache_root(settings.data_dir))


def resume_line(r: Resumed, chunks: int, pages: int | None) -> str:
    """What a rerun took from the killed load's saved vectors, in one line."""
    where = (f"after page {r.page} of {pages}" if r.page and pages else
             f"after chunk {r.chunks} of {chunks}" if r.chunks else "")
    return (f"resumed {where + ': ' if where else ''}{r.vectors:,} of {r.texts:,} vectors saved by an "
            f"interrupted load reused ({r.chunks:,} of {chunks:,} chunks whole)")


class DocumentLoader:
    """Runs the pipeline of the package docstring over a folder of documents."""

    def __init__(self, graph, models, settings, options: DocOptions | None = None):
        self.graph = graph
        self.models = models
        self.settings = settings
        self.options = with_pdf_limits(options or DocOptions(), settings)
        self._count_tokens: Callable[[str], int] | None = None
        self._catalogue = None
        self._link_vectors: dict = {}          # description → embedding, shared by a load's documents
        self._space_recorded = False

    @property
    def count_tokens(self) -> Callable[[str], int]:
        if self._count_tokens is None:
            self._count_tokens = llm_token_counter(self.settings)
        return self._count_tokens

    @property
    def stand_in(self) -> bool:
        """No scene-graph model on this machine: the whole image is the one region."""
        return self.settings.vision_backend == "local"

    @property
    def extractor_kind(self) -> str:
        """cpu | llm: ``settings.doc_extractor``; auto is llm when a chat server is configured, else cpu."""
        kind = self.settings.doc_extractor
        if kind == "auto":
            kind = "llm" if self.settings.chat_backend in ("openai", "vllm") else "cpu"
        return kind

    @property
    def extractor(self) -> str:
        """What extracted a document's graph, stored on the document (a different one re-extracts it):
        ``version+code · identity · visual graph``."""
        kind = self.extractor_kind
        version = f"{EXTRACTOR_VERSION}+{extractor_code(kind)}"
        visual = STAND_IN if self.stand_in else "VisionModel"
        if kind == "cpu":
            return f"{version} · {CPU_EXTRACTOR} · {visual}"
        return f"{version} · {self.settings.chat_backend}:{getattr(self.models.chat, 'name', '?')} · {visual}"

    def link_key(self) -> str:
        """What a document's SAME_AS links were made with: the link settings and the Wikidata KG's size (its
        entity count, from the count store): a reload with other settings, or after a KG was loaded, links the
        unchanged documents again instead of calling them unchanged."""
        if not self.options.link:
            return "no-link"
        rows = self.graph.read("load_graph_counts_fast")
        n = rows[0]["entities"] if rows else 0
        return f"link>={self.options.link_threshold:g} · {n} entities"

    # ------------------------------------------------------------------ top level
    def load(self, path: Path, progress: DocumentProgress | None = None) -> DocReport:
        """Load the documents of ``path``; ``progress``: where to report (default: as ``options.progress`` says)."""
        t0 = time.perf_counter()
        report = DocReport(path=str(path), torch_threads=self.settings.torch_threads,
                           chat=(CPU_EXTRACTOR + " (no LLM)" if self.extractor_kind == "cpu" else
                                 f"{self.settings.chat_backend}:{getattr(self.models.chat, 'name', '?')}"),
                           visual=STAND_IN if self.stand_in else f"VisionModel {getattr(self.models.vision, 'name', '?')}")
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
        reject = Rejects(self.options.strict, Path(self.settings.data_dir) / "rejects" / f"documents-{stamp}.tsv",
                         by_reason=report.skipped)
        report.rejected = reject.named                # every skipped file named, with why (lenient)
        t = time.perf_counter()
        try:
            docs = discover(Path(path), self.options, reject)       # validate everything first
        finally:
            reject.close()
        report.rejects_file = str(reject.path) if reject.count else None
        report.stage("parse", time.perf_counter() - t)
        ocr = self.options.ocr_reader
        report.ocr_pages, report.ocr_figures, report.ocr_seconds = ocr.pages, ocr.figures, ocr.seconds
        report.ocr_engine_pages = ocr.engine_pages
        if any(d.format == "pdf" for d in docs):
            report.ocr_skipped = "; ".join(ocr.skipped)
        base = Path(path) if Path(path).is_dir() else Path(path).parent
        for d in docs:
            if d.no_text_pages:
                report.no_text_pages += len(d.no_text_pages)
                shown = _under(d.source, base)      # as the user named it: the path under the loaded folder
                if ocr.skipped:                     # said once, in the OCR line
                    report.ocr_unread.append(f"{shown} {page_ranges(d.no_text_pages)}")
                else:
                    report.warnings.append(f"{shown}: {page_ranges(d.no_text_pages)} "
                                           f"{'have' if len(d.no_text_pages) > 1 else 'has'} no text "
                                           "(scanned?) and OCR read none")
        self.graph.apply_schema()
        extractor = self.extractor
        content = {}
        for d in docs:
            # the extractor is part of the hash: a re-run with another extractor re-extracts the document
            content[d.id] = content_hash(d, self.options)
            d.content_hash = fingerprint(content[d.id], extractor)
        linking = self.link_key()
        for d in docs:
            d.link_key = linking
        stored = {r["id"]: r for r in self.graph.read("docs_document_status", ids=[d.id for d in docs])}
        todo = []
        for d in docs:
            old = stored.get(d.id)
            # linked with other settings, or against another Wikidata KG (documents loaded before it): linked
            # again; a document an earlier version stored without the key is taken as linked as it is
            relink = old is not None and old.get("link_key") is not None and old["link_key"] != linking
            same = (old is not None and old.get("status") == "complete" and old.get("content_hash") == d.content_hash
                    and old.get("extractor") == extractor and not relink)
            if old and old.get("origin") and old["origin"] != d.origin and not same and not gone(old["origin"]):
                # the same id from another file, still there, with other content (another folder's collins.md):
                # never replaced silently; a file that no longer exists (a deleted or moved checkout) has no
                # claim left, and this one replaces its document
                reject(d.source, f"document id {d.id!r} is already loaded from another file "
                       f"({old['origin']}); rename this file, or remove that document first "
                       f"(kgqa docs rm {d.id})", reason="id loaded from another file")
                report.documents.append(DocResult(d.id, d.source, "skipped", reason="id loaded from another file"))
            elif same and not self.options.force:
                if old.get("origin") != d.origin:   # the same content from a moved or copied file: it is this one now
                    self.graph.write("docs_move_origin", id=d.id, origin=d.origin, source=d.source)
                report.documents.append(DocResult(d.id, d.source, "unchanged"))
                if self.options.embed_cache_dir:       # vectors an interrupted load of another version left
                    remove_saved_vectors(self.options.embed_cache_dir, d.id)
            else:
                todo.append((d, old))
        if progress is None:
            progress = DocumentProgress(len(todo), enabled=self.options.progress is True,
                                        log=self.options.progress == "log")
        with progress as prog:
            for d, old in todo:
                prog.doc(d.id)
                res = self.load_one(d, report, prog, old)
                # a document left half-written by a killed load was never there: written, not replaced; the
                # same content under another extractor (or --force) is re-extracted
                if old and old.get("status") == "complete":
                    res.status = ("relinked" if old.get("content_hash") == d.content_hash
                                  and old.get("extractor") == extractor and old.get("link_key") is not None
                                  and old["link_key"] != linking else
                                  "re-extracted" if fingerprint(content[d.id], old.get("extractor") or "")
                                  == old.get("content_hash") else "replaced")
                else:
                    res.status = "written"
                report.documents.append(res)
                prog.advance()
        if todo:
            self.graph.await_indexes()
        reject.close()
        report.rejects_file = str(reject.path) if reject.count else None
        report.seconds = time.perf_counter() - t0
        return report

    def load_one(self, doc: ParsedDocument, report: DocReport, prog=None, old: dict | None = None) -> DocResult:
        """Steps 2-9 for one document; ``old``: its stored status row (``docs_document_status``), if any."""
        prog = prog or DocumentProgress(0, enabled=False)
        t = time.perf_counter()
        chunks = segment(doc, self.count_tokens, self.options.chunk_tokens, self.options.paragraphs)
        report.stage("segment", time.perf_counter() - t)
        prog.note(f"{len(doc.raw) / 1024 / 1024:,.1f} MB in {len(chunks):,} chunks "
                  f"(segmented in {time.perf_counter() - t:,.1f} s)", len(chunks))
        kg = DocumentKG()
        links: list[dict] = []
        if self.extractor_kind == "cpu":
            links = self._cpu_graph(doc, chunks, kg, report, prog)
        else:
            self._llm_graph(doc, chunks, kg, report, prog)
        prog.stage("embeddings")
        t = time.perf_counter()
        # the vectors are saved as they are computed (most of a large document's time): a rerun after a
        # kill computes only the rest; the folder goes once the document is written complete
        identity = getattr(self.models.encoder, "identity", None)
        cache = (EmbeddingCache(self.options.embed_cache_dir, doc.id, identity)
                 if identity and self.options.embed_cache_dir else None)
        resumed = Resumed()

        def on_resume(r: Resumed) -> None:
            nonlocal resumed
            resumed = r
            prog.say(f"{doc.id}: {resume_line(r, len(chunks), doc.pages)}")

        rows = document_rows(self.models.encoder, doc, chunks, kg, self.extractor,
                             on_progress=lambda done, total: prog.chunks("embeddings", done, total, unit="texts"),
                             threads=self.settings.embed_threads, cache=cache, on_resume=on_resume)
        report.stage("embed", time.perf_counter() - t)
        if self.options.link and rows["entities"]:
            prog.stage("linking")
            t = time.perf_counter()
            done = {x["docentity_id"] for x in links}       # the CPU extractor's subject, linked by label key
            named = [e for e in rows["entities"] if e["type"] not in LITERAL_TYPES and e["id"] not in done]
            links += (link_entities(self.graph, self.models.encoder, named, self.options, self._link_vectors)
                      if named else [])
            report.stage("link", time.perf_counter() - t)
        prog.stage("write")
        t = time.perf_counter()
        counts = {"entities": len(rows["entities"]), "relations": len(rows["relations"]),
                  "regions": len(rows["regions"]) + len(rows["rel_regions"]), "same_as": len(links)}
        if doc.format == "pdf":
            save_figures(doc)                  # before the graph names them; content-addressed, written whole
        if not self._space_recorded:          # the graph's vectors are this encoder's (kgqa.models.vector_space)
            record_space(self.graph, self.models.encoder)
            self._space_recorded = True
        write_document(self.graph, doc, rows, links, counts, batch=self.options.write_batch, old=old,
                       on_batch=lambda done, total: prog.chunks("write", done, total, unit="rows"))
        report.stage("write", time.perf_counter() - t)
        if cache is not None:
            cache.drop()
        return DocResult(doc.id, doc.source, "written", chunks=len(chunks), pages=doc.pages,
                         figures=len(doc.images), resumed_vectors=resumed.vectors,
                         resumed=resume_line(resumed, len(chunks), doc.pages) if resumed.vectors else "", **counts)

    def _llm_graph(self, doc, chunks, kg, report, prog) -> None:
        """Steps 3–5 by the models (Sections 3.1.1–3.1.3)."""
        for i, ch in enumerate(chunks):
            prog.chunks("text graph", i + 1, len(chunks))
            t = time.perf_counter()
            text_graph(self.models.chat, doc, ch, kg, report, self.options.extract_max_tokens)
            report.stage("text_graph", time.perf_counter() - t)
        for i, ch in enumerate(c for c in chunks if c.images):
            for im in ch.images:
                prog.stage(f"visual graph + matching {i + 1}")
                t = time.perf_counter()
                objects, vrels = visual_graph(self.models.vision, im, report, self.stand_in)
                report.stage("visual_graph", time.perf_counter() - t)
                t = time.perf_counter()
                match(self.models.vision, ch, im, objects, vrels, kg, report, self.stand_in)
                report.stage("matching", time.perf_counter() - t)

    def _cpu_graph(self, doc, chunks, kg, report, prog) -> list[dict]:
        """Steps 3–5 without a large model (``cpu_extract``); returns the subject's SAME_AS link, if any."""
        prog.stage("cpu graph")
        t = time.perf_counter()
        subject = cpu_text_graph(doc, chunks, kg)
        match_stand_in_regions(doc, chunks, kg, subject, self.stand_in)
        report.stage("text_graph", time.perf_counter() - t)
        t = time.perf_counter()
        if self._catalogue is None:
            self._catalogue = RelationCatalogue(self.graph, self.models.encoder)
        self._catalogue.assign(list(kg.relations.values()))
        report.stage("relation_phrases", time.perf_counter() - t)
        if not (self.options.link and subject is not None):
            return []
        link = link_subject(self.graph, subject)
        return [link] if link else []


def _under(source: str, base: Path) -> str:
    """``source`` relative to the folder a load was given (a file's name there), else as it is."""
    try:
        return str(Path(source).relative_to(base))
    except ValueError:
        return source
