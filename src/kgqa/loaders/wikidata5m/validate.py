"""Step 1 of a Wikidata5M load: every input file validated completely before anything is written.

Column count, id syntax, unknown relation, dangling entity, encoding, label size, the byte limits
of aliases and descriptions (kgqa.loaders.wikidata5m.files) and images are checked; a bad line raises (``--strict``) or is rejected and skipped by the write pass
(``--lenient``, kgqa.loaders.rejects). A repeated id keeps its first line. ``--limit`` keeps the
first N valid triples and the entities they use. ``--bulk`` passes sinks that receive each
accepted row as it is read (kgqa.loaders.wikidata5m.bulk writes them as the importer's CSV).
"""

from __future__ import annotations

import time
from array import array
from pathlib import Path
from typing import Callable

from kgqa.core.errors import InvalidInput
from kgqa.core.graph import relation_type
from kgqa.core.ids import PID, QID
from kgqa.loaders import images as entity_images
from kgqa.loaders.progress import Bars
from kgqa.loaders.rejects import Rejects
from kgqa.loaders.wikidata5m.files import (Wikidata5mFiles, parse_catalogue_line, parse_text_line,
                                           parse_triple_line, read_lines)
from kgqa.loaders.wikidata5m.options import LoadOptions, LoadReport


class Validation:
    """The validation phase of ``Loader`` (kgqa.loaders.wikidata5m.load): reads its files, options,
    rejects and report, and fills the state below, which the write and embedding phases read."""

    files: Wikidata5mFiles
    opt: LoadOptions
    images_dir: Path | None
    rejects: Rejects
    report: LoadReport

    def init_validation(self) -> None:
        """The state validation fills, empty."""
        self.relations: set[str] = set()
        self.entity_ids: set[str] = set()
        self.duplicate_lines: dict[Path, set[int]] = {}
        self.triple_lines: dict[Path, int] = {}   # last line to read per triple file (--limit)
        self.used_entities: set[str] | None = None
        self.images: list[entity_images.EntityImage] = []
        self.line_counts: dict[Path, int] = {}
        self.repeated_hashes: set[int] = set()     # hashes of triples that may occur twice (checked exactly)
        self.valid_triples: dict[Path, int] = {}   # valid triple lines per file (an empty split is said)

    def validate(self, bars: Bars, sinks: dict[str, Callable] | None = None) -> None:
        """Check every input file; ``sinks`` (``--bulk``): relations/entities/triples/text → a callable
        given each accepted row as validation accepts it (text: only the descriptions of loaded entities)."""
        sinks = sinks or {}
        st = self.report.phase("validate")
        t0 = time.perf_counter()
        rows = 0
        rows += self._validate_catalogue(self.files.relation, PID, "property id", self.relations, bars,
                                         sinks.get("relations"))
        for pid in self.relations:
            relation_type(pid)  # the one rule for relationship types (kgqa.core.graph)
        rows += self._validate_catalogue(self.files.entity, QID, "entity id", self.entity_ids, bars,
                                         sinks.get("entities"))
        rows += self._validate_triples(bars, sinks.get("triples"))
        if self.files.text is not None:
            rows += self._validate_text(bars, sinks.get("text"))
        rows += self._validate_images(bars)
        st.rows, st.seconds = rows, time.perf_counter() - t0
        self._check_not_empty()

    def _check_not_empty(self) -> None:
        """Nothing to load is an error (exit 2, nothing written); an empty split is a warning."""
        f = self.files
        if not self.entity_ids:
            why = "is empty" if not self.line_counts.get(f.entity) else "has no valid line"
            raise InvalidInput(f"{f.entity}: {why}: no entities to load (nothing written)")
        if not self.relations:
            why = "is empty" if not self.line_counts.get(f.relation) else "has no valid line"
            raise InvalidInput(f"{f.relation}: {why}: no relations to load (nothing written)")
        if self.opt.limit == 0:
            return
        limit_reached = False
        for path in f.triples:
            if limit_reached:
                break
            if not self.valid_triples.get(path):
                why = "is empty" if not self.line_counts.get(path) else "has no valid triple"
                self.report.warnings.append(f"{path}: {why}: no facts loaded from it")
            limit_reached = self.opt.limit is not None and sum(self.valid_triples.values()) >= self.opt.limit
        if not sum(self.valid_triples.values()):
            self.report.warnings.append(f"no facts at all: only entities and relations are loaded from {f.entity.parent}")

    def _validate_catalogue(self, path: Path, rule, kind: str, seen: set[str], bars, sink=None) -> int:
        task = bars.add(f"validate {path.name.removeprefix('wikidata5m_')}", None)
        lines = _Lines(path, bars, task, self.rejects)
        dups = self.duplicate_lines.setdefault(path, set())
        for lineno, text in lines:
            row, why = parse_catalogue_line(text, rule, kind, keys=False)
            if row is None:
                self.rejects.line(path, lineno, why, text)
                continue
            if why:     # usable without its over-long aliases: strict refuses, lenient counts
                self._over_limit(path, lineno, why, text, f"lines with aliases left out in {path.name}")
            if row["id"] in seen:  # first line wins; later ones are skipped and counted
                dups.add(lineno)
                self.report.skipped[f"duplicate ids in {path.name}"] = \
                    self.report.skipped.get(f"duplicate ids in {path.name}", 0) + 1
                continue
            seen.add(row["id"])
            if sink is not None:
                sink(row)
        self.line_counts[path] = lines.n
        bars.finish(task, lines.n)
        return lines.n

    def _over_limit(self, path: Path, lineno: int, why: str, text: str, counted_as: str) -> None:
        """A line over a byte limit that the loader can still use once cut: ``--strict`` refuses it
        (``file:line: why``), ``--lenient`` counts it in the report and loads the cut row."""
        if self.rejects.strict:
            self.rejects.line(path, lineno, why, text)      # raises InvalidInput("file:line: why")
        self.report.skipped[counted_as] = self.report.skipped.get(counted_as, 0) + 1

    def _validate_triples(self, bars, sink=None) -> int:
        limit = self.opt.limit
        used: set[str] | None = set() if limit is not None else None
        good = 0
        total = 0
        hashes = array("q")  # one 64-bit hash per valid triple: repeated facts are found without a set of strings
        for path in self.files.triples:
            task = bars.add(f"validate {path.name.removeprefix('wikidata5m_')}", None)
            n = 0
            last = 0
            for lineno, text, why, raw in read_lines(path):
                if limit is not None and good >= limit:
                    break
                n += 1
                last = lineno
                if n % 50_000 == 0:
                    bars.advance(task, 50_000)
                if text is None:
                    self.rejects.line(path, lineno, why, raw)
                    continue
                triple, why = parse_triple_line(text, self.relations, self.entity_ids)
                if triple is None:
                    self.rejects.line(path, lineno, why, text)
                    continue
                good += 1
                hashes.append(hash(triple))
                if sink is not None:
                    sink(triple)
                if used is not None:
                    used.add(triple[0])
                    used.add(triple[2])
            self.triple_lines[path] = last
            self.line_counts[path] = n
            self.valid_triples[path] = good - sum(self.valid_triples.values())
            total += n
            bars.finish(task, n)
        self.used_entities = used
        if len(hashes) > 1:
            import numpy as np

            h = np.sort(np.frombuffer(hashes, dtype=np.int64))
            self.repeated_hashes = set(h[1:][h[1:] == h[:-1]].tolist())
        return total

    def _validate_text(self, bars, sink=None) -> int:
        path = self.files.text
        task = bars.add("validate text.txt", None)
        lines = _Lines(path, bars, task, self.rejects)
        for lineno, text in lines:
            row, why = parse_text_line(text)
            if row is None:
                self.rejects.line(path, lineno, why, text)
            elif why:   # loaded cut (lenient) or refused (strict)
                self._over_limit(path, lineno, why, text, "descriptions cut to the byte limit")
            if row is not None and sink is not None and row["id"] in self.loaded_ids():
                sink(row)
        self.line_counts[path] = lines.n
        bars.finish(task, lines.n)
        return lines.n

    def _validate_images(self, bars) -> int:
        if self.images_dir is None and self.files.images_tsv is None:
            return 0
        task = bars.add("validate images", None)
        refs = entity_images.discover(self.images_dir, self.files.images_tsv, self.rejects)
        loaded = self.loaded_ids()
        self.images, skipped = entity_images.validate(
            refs, known=lambda q: q in loaded, reject=self.rejects,
            skip_unknown=self.used_entities is not None)
        if skipped:
            self.report.skipped["images of entities outside --limit"] = skipped
        bars.finish(task, len(refs))
        return len(refs)

    def loaded_ids(self) -> set[str]:
        return self.used_entities if self.used_entities is not None else self.entity_ids

    def skip_line(self, path: Path, lineno: int) -> bool:
        """Whether the write pass leaves this line out: rejected, or a repeated id."""
        return self.rejects.skip(path, lineno) or lineno in self.duplicate_lines.get(path, ())


class _Lines:
    """(line number, text) of each line of ``path`` that decodes; a line that does not is rejected
    (``file:line: why``); ``n`` counts every line read, the progress bar advanced every 50,000."""

    def __init__(self, path: Path, bars, task, rejects):
        self.path, self.bars, self.task, self.rejects, self.n = path, bars, task, rejects, 0

    def __iter__(self):
        for lineno, text, why, raw in read_lines(self.path):
            self.n += 1
            if self.n % 50_000 == 0:
                self.bars.advance(self.task, 50_000)
            if text is None:
                self.rejects.line(self.path, lineno, why, raw)
                continue
            yield lineno, text
