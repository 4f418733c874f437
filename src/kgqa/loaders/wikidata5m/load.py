"""A Wikidata5M load from top to bottom (see the package doc): the ``Loader`` runs validation,
the schema, the write phases, the embeddings and the final wait for the indexes, and reports."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

from kgqa.core.errors import InvalidInput
from kgqa.core.kg import label_keys
from kgqa.loaders.progress import Bars
from kgqa.loaders.rejects import Rejects
from kgqa.loaders.wikidata5m.embed import Embedding
from kgqa.loaders.wikidata5m.files import find_files
from kgqa.loaders.wikidata5m.options import LoadOptions, LoadReport
from kgqa.loaders.wikidata5m.validate import Validation
from kgqa.loaders.wikidata5m.write import Writer


class Loader(Validation, Writer, Embedding):
    """One load: its inputs, options, rejects and report, and the phases of the three steps."""

    def __init__(self, graph, path, images, encoder, options: LoadOptions):
        self.graph = graph
        self.opt = options
        self.files = find_files(path, tuple(options.splits))
        self.images_dir = Path(images) if images is not None else None
        self.encoder = encoder
        settings = graph.settings
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        rejects_path = options.rejects_path or Path(settings.data_dir) / "rejects" / f"wikidata5m-{stamp}.tsv"
        self.rejects = Rejects(options.strict, Path(rejects_path), why_limit=500)
        self.report = LoadReport(path=str(Path(path).resolve()), embeddings=options.embeddings,
                                 device=options.device, torch_threads=settings.torch_threads)
        if options.batch_size < 1:
            raise InvalidInput(f"--batch-size {options.batch_size}: must be at least 1")
        if options.embed_chunk < 1:
            raise InvalidInput(f"--embed-chunk {options.embed_chunk}: must be at least 1")
        if options.limit is not None and options.limit < 0:
            raise InvalidInput(f"--limit {options.limit}: must be 0 or more")
        self.init_validation()
        self.init_writer()

    def apply_schema(self) -> None:
        """The schema (constraints, indexes), timed as the phase 'schema'."""
        self.report.timed("schema", self.graph.apply_schema)

    def finish(self, bars) -> None:
        """The last phases of every load: embeddings, indexes ONLINE, checkpoints removed."""
        if self.opt.embeddings:
            self.embed(bars)
        st = self.report.phase("await indexes")
        t0 = time.perf_counter()
        self.graph.await_indexes()
        st.seconds = time.perf_counter() - t0
        # complete: the resume checkpoints have done their job (a rerun MERGEs, idempotent)
        for key in self.checkpoint_keys:
            self.graph.write("load_checkpoint_delete", key=key)

    def summarize(self) -> LoadReport:
        """The report with rejects and the graph's counts filled in (seconds are the caller's)."""
        r = self.report
        r.rejects, r.rejects_by_reason = self.rejects.count, dict(self.rejects.by_reason)
        r.rejects_path = str(self.rejects.path) if self.rejects.count else None
        r.counts = self.graph.read("graph_counts")[0]
        return r

    def run(self) -> LoadReport:
        t_start = time.perf_counter()
        try:
            with Bars(self.opt.progress) as bars:
                self.validate(bars)  # nothing is written before every file has been checked
                self.apply_schema()
                self.write_relations(bars)
                self.write_entities(bars)
                self.report.timed("label keys", lambda: backfill_label_keys(self.graph))
                self.write_descriptions(bars)
                self.write_facts(bars)
                self.write_images(bars)
                self.finish(bars)
        finally:
            self.rejects.close()
        r = self.summarize()
        r.seconds = time.perf_counter() - t_start
        return r


def backfill_label_keys(graph, page: int = 20_000) -> int:
    """Give every entity that lacks them its ``label_keys`` (a database loaded before they existed);
    returns how many were written. Entities written by this loader already have them, so on a current
    database this is one scan that finds nothing. Idempotent, and resumable page by page."""
    n, after = 0, ""
    while True:
        rows = graph.read("load_entities_lacking_label_keys", after=after, limit=page)
        if not rows:
            return n
        graph.write("load_label_keys", rows=[{"id": r["id"], "label_keys": label_keys(r["name"] or "", r["aliases"] or [])}
                                             for r in rows])
        n += len(rows)
        after = rows[-1]["id"]


def load_wikidata5m(graph, path: str | Path, *, images: str | Path | None = None, encoder=None,
                    options: LoadOptions | None = None) -> LoadReport:
    """Load a Wikidata5M folder (and optional images folder) into ``graph``; see the package doc.

    ``encoder`` defaults to ``kgqa.models.encoder.get_encoder`` (unless ``options.embeddings``
    is False). Raises InvalidInput ("file:line: why") in strict mode before writing anything.
    """
    return Loader(graph, path, images, encoder, options or LoadOptions()).run()
