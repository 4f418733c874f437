"""A first bulk load of Wikidata5M through ``neo4j-admin database import full``.

``kgqa load wikidata5m --bulk`` is for an EMPTY database (it refuses one that holds any node):

1. validate every input file exactly as the incremental loader does (``--strict`` stops at the
   first bad line with ``file:line: why``, nothing written; ``--lenient`` skips and counts);
2. stream the validated rows into the importer's CSV format (entities, relations, facts —
   rejected and duplicate lines left out, repeated triples written once, ``--limit`` honoured);
3. stop the local server (``kgqa neo4j``), run ``neo4j-admin database import full`` from the
   same Maven release (``org.neo4j.cli.AdminTool``), start the server again;
4. apply the schema, then load descriptions, images and embeddings over Bolt with the
   incremental loader's own phases (resumable, checkpointed).

Against a Neo4j that is not the local server (Docker, a remote host), steps 3–4 cannot run
from here: the CSVs are written and the report carries the exact ``neo4j-admin`` command to
run where the database lives, followed by an incremental ``kgqa load wikidata5m`` for
descriptions, images and embeddings.

The importer writes store files offline and builds no indexes: it is the physical floor for
structure loading (``bench/load.py`` compares it with the Bolt loader).
"""

from __future__ import annotations

import csv
import os
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

from kgqa.errors import InvalidInput, LocalServerError
from kgqa.loaders.wikidata5m import (_PID, _QID, LoadOptions, LoadReport, _Bars, _Loader, _lines,
                                     parse_catalogue_line, parse_triple_line)

#: Array delimiter for aliases in the importer's CSV (a control character no label contains).
ARRAY_DELIMITER = "\x1f"


def is_local_server(settings) -> bool:
    """Whether NEO4J_URI points at the ``kgqa neo4j`` server of these settings (same host and port)."""
    u = urlparse(settings.neo4j_uri)
    return u.hostname in ("127.0.0.1", "localhost") and (u.port or 7687) == settings.neo4j_bolt_port


class _BulkLoader(_Loader):
    """The incremental loader's validation and Bolt phases around ``neo4j-admin database import``."""

    def write_csv(self, folder: Path, bars) -> dict[str, int]:
        folder.mkdir(parents=True, exist_ok=True)
        st = self.report.phase("write import CSV")
        t0 = time.perf_counter()
        keep = self._loaded_ids()
        counts = {"entities": 0, "relations": 0, "facts": 0}
        keys_col = {"entities": ["label_keys:string[]"], "relations": []}     # entity linking's label lookup
        for kind, path, rule, label, name in (("relations", self.files.relation, _PID, "Relation", "relations.csv"),
                                              ("entities", self.files.entity, _QID, "Entity", "entities.csv")):
            task = bars.add(f"csv {kind}", self.line_counts.get(path))
            with open(folder / name, "w", newline="", encoding="utf-8") as fh:
                w = csv.writer(fh)
                w.writerow([f"id:ID({label})", "name", "aliases:string[]", *keys_col[kind], ":LABEL"])
                for lineno, text, _, _ in _lines(path):
                    if text is None or self._skip(path, lineno):
                        continue
                    row, _why = parse_catalogue_line(text, rule, kind)
                    if row is None or (kind == "entities" and row["id"] not in keep):
                        continue
                    aliases = [a.replace(ARRAY_DELIMITER, " ") for a in row["aliases"]]
                    keys = [ARRAY_DELIMITER.join(row["label_keys"])] if kind == "entities" else []
                    w.writerow([row["id"], row["name"], ARRAY_DELIMITER.join(aliases), *keys, label])
                    counts[kind] += 1
            bars.finish(task, counts[kind])
        task = bars.add("csv facts", sum(self.line_counts.get(p, 0) for p in self.files.triples))
        seen_repeated: set[tuple] = set()
        with open(folder / "facts.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow([":START_ID(Entity)", ":TYPE", ":END_ID(Entity)"])
            for path in self.files.triples:
                last = self.triple_lines.get(path, 0)
                for lineno, text, _, _ in _lines(path):
                    if lineno > last:
                        break
                    if text is None or self._skip(path, lineno):
                        continue
                    triple, _why = parse_triple_line(text, self.relations, self.entity_ids)
                    if triple is None:
                        continue
                    if hash(triple) in self.repeated_hashes:       # a fact given twice is written once
                        if triple in seen_repeated:
                            continue
                        seen_repeated.add(triple)
                    w.writerow([triple[0], triple[1], triple[2]])
                    counts["facts"] += 1
        bars.finish(task, counts["facts"])
        st.rows, st.seconds = sum(counts.values()), time.perf_counter() - t0
        st.detail.update(counts)
        return counts

    def import_command(self, folder: Path, java: str, jars: Path) -> list[str]:
        return [java, "-cp", f"{jars}/*", "org.neo4j.cli.AdminTool", "database", "import", "full",
                f"--nodes={folder / 'relations.csv'}", f"--nodes={folder / 'entities.csv'}",
                f"--relationships={folder / 'facts.csv'}", "--array-delimiter=U+001F",
                "--overwrite-destination=true", f"--report-file={folder / 'import.report'}", "neo4j"]


def bulk_load_wikidata5m(graph, path: str | Path, *, images: str | Path | None = None, encoder=None,
                         options: LoadOptions | None = None) -> tuple[LoadReport, list[str]]:
    """First load into an empty database through the importer; see the module doc.

    ``graph`` must point at an empty database. Returns (report, next steps): the next steps
    are empty when the load is complete, else the commands to run where the database lives."""
    from kgqa.graph import Graph
    from kgqa.neo4j_local import LocalNeo4j

    opts = options or LoadOptions()
    settings = graph.settings
    t_start = time.perf_counter()
    n = graph.read("bulk_node_count")[0]["nodes"]
    if n:
        raise InvalidInput(f"--bulk is for a first load into an empty database, and {settings.neo4j_uri} holds "
                           f"{n:,} node(s): load without --bulk (the incremental loader MERGEs), or empty the "
                           "database first")
    loader = _BulkLoader(graph, path, images, encoder, opts)
    folder = Path(settings.data_dir) / "import" / f"wikidata5m-{time.strftime('%Y%m%dT%H%M%S')}"
    local = is_local_server(settings)
    try:
        with _Bars(opts.progress) as bars:
            loader.validate(bars)                       # nothing is written before every file is checked
            loader.write_csv(folder, bars)
            server = LocalNeo4j(settings)
            cmd = loader.import_command(folder, settings.java, settings.neo4j_jars)
            if not local or not server.status().running:
                steps = [
                    "the database is not the local kgqa server: run the importer where it lives, with the "
                    "database stopped (files under " + str(folder) + "):",
                    "neo4j-admin database import full " + " ".join(c for c in cmd[7:]),
                    f"then: kgqa load wikidata5m --path {path} (adds descriptions, images and embeddings)"]
                loader.report.seconds = time.perf_counter() - t_start
                return loader.report, steps
            st = loader.report.phase("neo4j-admin import")
            t0 = time.perf_counter()
            graph.close()
            server.stop()
            env = {**os.environ, "NEO4J_HOME": str(server.home), "NEO4J_CONF": str(server.conf_dir)}
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            started = None
            try:
                server.start()
                started = True
            finally:
                if proc.returncode != 0:
                    lines = [ln for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
                    raise LocalServerError(f"neo4j-admin database import failed: {lines[-1] if lines else proc.returncode}"
                                           f" (report: {folder / 'import.report'})"
                                           + ("" if started else "; the server did not start again"))
            st.seconds = time.perf_counter() - t0
            st.rows = sum(loader.report.phase("write import CSV").detail.get(k, 0)
                          for k in ("entities", "relations", "facts"))
            loader.graph = Graph(settings)
            loader.graph.verify()
            st = loader.report.phase("schema")
            t0 = time.perf_counter()
            st.rows = loader.graph.apply_schema()
            st.seconds = time.perf_counter() - t0
            loader.write_descriptions(bars)
            loader.write_images(bars)
            loader.finish(bars)
    finally:
        loader.rejects.close()
    r = loader.summarize()
    r.modes = {"structure": "neo4j-admin import"}
    loader.graph.close()
    r.seconds = time.perf_counter() - t_start
    return r, []
