"""Step 2 of a Wikidata5M load: the Bolt writer phases (relations, entities, descriptions, facts,
images), each batch in one transaction that also advances the phase's resume checkpoint.

Relations are MERGEd. Entities and facts are CREATEd into a graph that holds none of the input's
entities (none of their facts), MERGEd otherwise. A fact batch is grouped by relation type and
uses the dynamic type ``[:$(row.type)]``; repeated triples are written once. Each entity /
description / fact batch moves a ``(:LoadCheckpoint {key})`` (key: phase + input files' paths,
sizes, mtimes) to the last input line it covers, so a rerun continues after it in the same mode.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Callable

from kgqa.core.ids import PID, QID
from kgqa.loaders import images as entity_images
from kgqa.loaders.progress import Bars
from kgqa.loaders.wikidata5m.files import parse_catalogue_line, parse_text_line, parse_triple_line, read_lines


class CheckpointedBatches:
    """Rows written a batch at a time by one named query; each batch is one transaction that also
    moves the phase's checkpoint ``key`` to (input file, line) and the batch's last row
    (``last_of``). ``group_by`` sorts a batch before it is written (facts: by relation type)."""

    def __init__(self, graph, query: str, key: str, mode: str, inputs: list[str], batch_size: int,
                 bars: Bars, task, last_of: Callable[[dict], list], group_by: Callable[[dict], str] | None = None):
        self.graph, self.query, self.key, self.mode, self.inputs = graph, query, key, mode, inputs
        self.batch_size, self.bars, self.task = batch_size, bars, task
        self.last_of, self.group_by = last_of, group_by
        self.batch: list[dict] = []
        self.rows = 0          # rows written
        self.neo4j_s = 0.0     # seconds spent in Neo4j

    def add(self, row: dict, file: int, line: int) -> None:
        """Queue ``row`` (read from input ``file`` up to ``line``); a full batch is written."""
        self.batch.append(row)
        if len(self.batch) >= self.batch_size:
            self.flush(file, line)

    def flush(self, file: int, line: int) -> None:
        """Write what is queued, if anything, with the checkpoint at (``file``, ``line``)."""
        batch = self.batch
        if not batch:
            return
        last = self.last_of(batch[-1])
        if self.group_by is not None:
            batch.sort(key=self.group_by)  # grouped by type within the transaction
        t = time.perf_counter()
        self.graph.write(self.query, rows=batch, key=self.key, mode=self.mode, file=file, line=line,
                         last=last, inputs=self.inputs)
        self.neo4j_s += time.perf_counter() - t
        self.rows += len(batch)
        self.bars.advance(self.task, len(batch))
        batch.clear()


class Writer:
    """The write phases of ``Loader`` (kgqa.loaders.wikidata5m.load), over what validation left
    (kgqa.loaders.wikidata5m.validate); ``checkpoint_keys`` are removed when the load completes."""

    def init_writer(self) -> None:
        self.checkpoint_keys: list[str] = []       # removed when the load completes
        self.created_entities = False              # this load CREATEd its entities (none had a vector)

    # checkpoints: one (:LoadCheckpoint {key}) per phase and input, advanced in the same
    # transaction as each batch, so a killed run resumes after its last committed batch.
    def _key(self, phase: str, paths: list[Path], **extra) -> str:
        ident = [phase, extra] + [[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns] for p in paths]
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()

    def _resume_point(self, key: str, still_there: Callable[[list[str]], bool], graph_has: Callable[[], bool],
                      phase: str) -> tuple[str, int, int]:
        """(mode, file index, line) to continue from: an earlier run's checkpoint when its last
        written row is still in the graph; else CREATE when the graph holds none of this input's
        entities (entities phase) or none of their facts (facts phase), MERGE otherwise."""
        self.checkpoint_keys.append(key)
        rows = self.graph.read("load_checkpoint", key=key)
        if rows and still_there(rows[0]["last"] or []):
            cp = rows[0]
            self.report.modes[phase] = f"{cp['mode']}, resumed after input {cp['file']} line {cp['line']}"
            return cp["mode"], int(cp["file"]), int(cp["line"])
        if rows:  # stale: what it recorded was deleted since
            self.graph.write("load_checkpoint_delete", key=key)
        mode = "merge" if graph_has() else "create"
        self.report.modes[phase] = mode
        return mode, 0, 0

    def _any(self, query: str, ids: list[str], chunk: int = 50_000, count: str = "entities") -> bool:
        """Whether ``query`` finds something for any id, asked chunk by chunk (stops at the first).

        A graph with no entities (relationships) at all answers no at once, from the count store."""
        if self.graph.read("load_graph_counts_fast")[0][count] == 0:
            return False
        for i in range(0, len(ids), chunk):
            if self.graph.read(query, ids=ids[i:i + chunk])[0]["found"]:
                return True
        return False

    def write_relations(self, bars) -> None:
        """The catalogue (822 rows): always MERGE."""
        path = self.files.relation
        st = self.report.phase("relations")
        t0 = time.perf_counter()
        task = bars.add("relations", self.line_counts.get(path))
        rows = []
        for lineno, text, _, _ in read_lines(path):
            if text is None or self.skip_line(path, lineno):
                continue
            row, _why = parse_catalogue_line(text, PID, "property id")
            if row is not None:
                rows.append(row)
        for i in range(0, len(rows), self.opt.batch_size):
            self.graph.write("load_relations", rows=rows[i:i + self.opt.batch_size])
            bars.advance(task, len(rows[i:i + self.opt.batch_size]))
        st.rows, st.seconds = len(rows), time.perf_counter() - t0
        bars.finish(task, len(rows))

    def write_entities(self, bars) -> None:
        path = self.files.entity
        st = self.report.phase("entities")
        t0 = time.perf_counter()
        keep = self.used_entities  # None: every entity; else only those the --limit triples use
        key = self._key("entities", [path], limit=self.opt.limit)
        mode, _, start = self._resume_point(
            key, lambda last: bool(last) and self.graph.read("load_entity_exists", id=last[0])[0]["found"],
            lambda: self._any("load_entities_exist", sorted(self.loaded_ids())), "entities")
        query = "load_entities_create" if mode == "create" else "load_entities"
        self.created_entities = mode == "create"
        task = bars.add("entities", len(keep) if keep is not None else self.line_counts.get(path))
        batches = CheckpointedBatches(self.graph, query, key, mode, [str(path.resolve())], self.opt.batch_size,
                                      bars, task, last_of=lambda row: [row["id"]])
        lineno = 0
        for lineno, text, _, _ in read_lines(path):
            if lineno <= start:
                continue
            if text is None or self.skip_line(path, lineno):
                continue
            row, _why = parse_catalogue_line(text, QID, "entity id")
            if row is None or (keep is not None and row["id"] not in keep):
                continue
            batches.add(row, 0, lineno)
        batches.flush(0, lineno)
        st.rows, st.seconds = batches.rows, time.perf_counter() - t0
        st.detail["neo4j_s"] = batches.neo4j_s
        bars.finish(task, batches.rows)

    def write_descriptions(self, bars) -> None:
        path = self.files.text
        if path is None:
            return
        st = self.report.phase("descriptions")
        t0 = time.perf_counter()
        loaded = self.loaded_ids()
        key = self._key("descriptions", [path], limit=self.opt.limit)
        _, _, start = self._resume_point(
            key, lambda last: bool(last) and self.graph.read("load_entity_exists", id=last[0])[0]["found"],
            lambda: True, "descriptions")  # SET is idempotent: the checkpoint only saves time
        task = bars.add("descriptions", None)
        batches = CheckpointedBatches(self.graph, "load_descriptions", key, "merge", [str(path.resolve())],
                                      self.opt.batch_size, bars, task, last_of=lambda row: [row["id"]])
        skipped = 0
        lineno = 0
        for lineno, text, _, _ in read_lines(path):
            if text is None or self.rejects.skip(path, lineno):
                continue
            row, _why = parse_text_line(text)
            if row is None:
                continue
            if row["id"] not in loaded:  # the text file covers more entities than are loaded
                skipped += 1
                continue
            if lineno <= start:
                continue
            batches.add(row, 0, lineno)
        batches.flush(0, lineno)
        if skipped:
            self.report.skipped["descriptions of entities not loaded"] = skipped
        st.rows, st.seconds = batches.rows, time.perf_counter() - t0
        st.detail["neo4j_s"] = batches.neo4j_s
        bars.finish(task, batches.rows)

    def write_facts(self, bars) -> None:
        """Facts in file order, ``batch_size`` per transaction, each batch grouped by relation type.

        CREATE into a graph without facts (the input is deduplicated exactly: triples whose
        64-bit hash repeats are compared as strings), MERGE into one that has facts; either
        way the checkpoint moves in the same transaction as the batch.
        """
        st = self.report.phase("facts")
        t0 = time.perf_counter()
        paths = self.files.triples
        key = self._key("facts", paths)
        t_check = time.perf_counter()
        mode, start_file, start_line = self._resume_point(
            key, lambda last: len(last) == 3 and self.graph.read(
                "load_fact_exists", h=last[0], type=last[1], t=last[2])[0]["found"],
            lambda: self._any("load_facts_exist_from", sorted(self.loaded_ids()), count="relationships"), "facts")
        check_s = time.perf_counter() - t_check
        query = "load_facts_create" if mode == "create" else "load_facts"
        limit = self.opt.limit
        total = sum(self.line_counts.get(p, 0) for p in paths)
        task = bars.add("facts", min(total, limit) if limit is not None else total)
        batches = CheckpointedBatches(self.graph, query, key, mode, [str(p.resolve()) for p in paths],
                                      self.opt.batch_size, bars, task,
                                      last_of=lambda row: [row["h"], row["type"], row["t"]],
                                      group_by=lambda row: row["type"])
        repeated, seen = self.repeated_hashes, set()
        duplicates = 0

        for fi, path in enumerate(paths):
            last_line = self.triple_lines.get(path, 0)
            done = 0  # the last line of this file looked at
            for lineno, text, _, _ in read_lines(path):
                if lineno > last_line:
                    break
                done = lineno
                if text is None or self.rejects.skip(path, lineno):
                    continue
                triple, _why = parse_triple_line(text, self.relations, self.entity_ids)
                if triple is None:
                    continue
                if repeated and hash(triple) in repeated:
                    if triple in seen:
                        duplicates += 1
                        continue
                    seen.add(triple)
                if fi < start_file or (fi == start_file and lineno <= start_line):
                    continue  # committed by an earlier run
                batches.add({"h": triple[0], "type": triple[1], "t": triple[2]}, fi, done)
            batches.flush(fi, done)
        if duplicates:
            self.report.skipped["repeated triples"] = duplicates
        st.rows, st.seconds = batches.rows, time.perf_counter() - t0
        st.detail["neo4j_s"] = batches.neo4j_s
        st.detail["resume_check_s"] = check_s
        st.detail["parse_s"] = st.seconds - batches.neo4j_s - check_s
        bars.finish(task, batches.rows)

    def write_images(self, bars) -> None:
        if not self.images:
            return
        st = self.report.phase("images")
        t0 = time.perf_counter()
        task = bars.add("images", len(self.images))
        n = entity_images.write(self.graph, self.images, batch_size=min(self.opt.batch_size, 1000))
        st.rows, st.seconds = n, time.perf_counter() - t0
        bars.finish(task, n)
