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


#: What a Wikidata5M load over Bolt adds to Neo4j's store (stores, indexes, transaction logs) per byte of
#: input, and per float of an entity's vector: bench/store_growth.py, 3,000 synthetic entities and 6,000 facts
#: (2026-12-05: 3.3 MB for 190 KB of input without embeddings, 5.3 KB more per 384-float vector).
STORE_BYTES_PER_INPUT_BYTE = 17.3
STORE_BYTES_PER_VECTOR_FLOAT = 13.9
#: the shipped encoder's vector (all-MiniLM-L6-v2), when the encoder is not loaded yet
DEFAULT_VECTOR_FLOATS = 384


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
        f = self.files                           # in the order they are validated (kgqa.loaders.wikidata5m.validate)
        self.rejects = Rejects(options.strict, Path(rejects_path), why_limit=500,
                               inputs=[f.relation, f.entity, *f.triples, f.text])
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

    def store_need(self, structure: bool = True) -> tuple[int, str] | None:
        """(bytes, how estimated) this load adds to Neo4j's store, once validated: its input files times
        ``STORE_BYTES_PER_INPUT_BYTE`` (``structure``: with the relation, entity and triple files; the
        descriptions always) and, with embeddings, a vector per entity and relation times
        ``STORE_BYTES_PER_VECTOR_FLOAT`` per float. Both measured by bench/store_growth.py."""
        f = self.files
        try:
            size = sum(p.stat().st_size for p in ([f.relation, f.entity, *f.triples] if structure else []) + [f.text]
                       if p is not None)
        except OSError:
            return None
        vectors = (len(self.entity_ids) + len(self.relations)) if self.opt.embeddings else 0
        dim = getattr(self.encoder, "dim", None) or DEFAULT_VECTOR_FLOATS
        need = int(size * STORE_BYTES_PER_INPUT_BYTE + vectors * dim * STORE_BYTES_PER_VECTOR_FLOAT)
        how = (f"{size / 1e6:,.1f} MB of input" + (f" and {vectors:,} vectors" if vectors else "")
               + " at what a measured load took in the store; what is in stays")
        return need, how

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
                self.check_encoder()
                self.validate(bars)  # nothing is written before every file has been checked
                self.graph.store_need = self.store_need()
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
