"""The ``DocumentLoader``: the pipeline of the package doc over a folder of documents, one document
at a time; an unchanged document (same content hash) is skipped."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from kgqa.loaders.documents.discover import content_hash, discover
from kgqa.loaders.documents.embed import document_rows
from kgqa.loaders.documents.extract import match, text_graph, visual_graph
from kgqa.loaders.documents.kg import DocumentKG
from kgqa.loaders.documents.link import link_entities
from kgqa.loaders.documents.options import EXTRACTOR_VERSION, STAND_IN, DocOptions, DocReport, DocResult
from kgqa.loaders.documents.parse import ParsedDocument
from kgqa.loaders.documents.segment import segment
from kgqa.loaders.documents.store import write_document
from kgqa.loaders.progress import DocumentProgress
from kgqa.loaders.rejects import Rejects
from kgqa.models.gguf import llm_token_counter


class DocumentLoader:
    """Runs the pipeline of the package docstring over a folder of documents."""

    def __init__(self, graph, models, settings, options: DocOptions | None = None):
        self.graph = graph
        self.models = models
        self.settings = settings
        self.options = options or DocOptions()
        self._count_tokens: Callable[[str], int] | None = None

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
    def extractor(self) -> str:
        """What extracted a document's graph, stored on the document."""
        return (f"{EXTRACTOR_VERSION} · {self.settings.chat_backend}:{getattr(self.models.chat, 'name', '?')} · "
                f"{STAND_IN if self.stand_in else 'VisionModel'}")

    # ------------------------------------------------------------------ top level
    def load(self, path: Path) -> DocReport:
        t0 = time.perf_counter()
        report = DocReport(path=str(path), torch_threads=self.settings.torch_threads,
                           chat=f"{self.settings.chat_backend}:{getattr(self.models.chat, 'name', '?')}",
                           visual=STAND_IN if self.stand_in else f"VisionModel {getattr(self.models.vision, 'name', '?')}")
        reject = Rejects(self.options.strict, by_reason=report.skipped)
        t = time.perf_counter()
        docs = discover(Path(path), self.options, reject)           # validate everything first
        report.stage("parse", time.perf_counter() - t)
        self.graph.apply_schema()
        for d in docs:
            d.content_hash = content_hash(d, self.options)
        stored = {r["id"]: r for r in self.graph.read("docs_document_status", ids=[d.id for d in docs])}
        todo = []
        for d in docs:
            old = stored.get(d.id)
            if old and old.get("origin") and old["origin"] != d.origin:
                # the same id from another file (another folder's collins.md): never replaced silently
                reject(d.source, f"document id {d.id!r} is already loaded from another file "
                       f"({old.get('source')}); rename this file, or remove that document first "
                       f"(kgqa docs rm {d.id})", reason="id loaded from another file")
                report.documents.append(DocResult(d.id, d.source, "skipped", reason="id loaded from another file"))
            elif (old and old.get("status") == "complete" and old.get("content_hash") == d.content_hash
                  and old.get("extractor") == self.extractor):
                report.documents.append(DocResult(d.id, d.source, "unchanged"))
            else:
                todo.append((d, old is not None))
        with DocumentProgress(len(todo), enabled=self.options.progress is True,
                              log=self.options.progress == "log") as prog:
            for d, existed in todo:
                prog.doc(d.id)
                res = self.load_one(d, report, prog)
                res.status = "replaced" if existed else "written"
                report.documents.append(res)
                prog.advance()
        if todo:
            self.graph.await_indexes()
        report.seconds = time.perf_counter() - t0
        return report

    def load_one(self, doc: ParsedDocument, report: DocReport, prog=None) -> DocResult:
        prog = prog or DocumentProgress(0, enabled=False)
        t = time.perf_counter()
        chunks = segment(doc, self.count_tokens, self.options.chunk_tokens)
        report.stage("segment", time.perf_counter() - t)
        kg = DocumentKG()
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
        prog.stage("embeddings")
        t = time.perf_counter()
        rows = document_rows(self.models.encoder, doc, chunks, kg, self.extractor)
        report.stage("embed", time.perf_counter() - t)
        links: list[dict] = []
        if self.options.link and rows["entities"]:
            prog.stage("linking")
            t = time.perf_counter()
            links = link_entities(self.graph, self.models.encoder, rows["entities"], self.options)
            report.stage("link", time.perf_counter() - t)
        prog.stage("write")
        t = time.perf_counter()
        counts = {"entities": len(rows["entities"]), "relations": len(rows["relations"]),
                  "regions": len(rows["regions"]) + len(rows["rel_regions"]), "same_as": len(links)}
        write_document(self.graph, doc, rows, links, counts)
        report.stage("write", time.perf_counter() - t)
        return DocResult(doc.id, doc.source, "written", chunks=len(chunks), **counts)
