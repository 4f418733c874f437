"""Load the official Wikidata5M release (plus entity images) into Neo4j.

Input files (found in ``path`` or one folder below it, as the release archives unpack):

* ``wikidata5m_entity.txt``    ``QID<TAB>label<TAB>alias…`` (the first name is the label)
* ``wikidata5m_relation.txt``  ``PID<TAB>label<TAB>alias…``
* triples ``head<TAB>PID<TAB>tail``: ``wikidata5m_transductive_{train,valid,test}.txt``,
  else ``wikidata5m_inductive_{…}.txt``, else ``wikidata5m_all_triplet.txt``
* optional ``wikidata5m_text.txt``  ``QID<TAB>description``
* optional images: ``images=DIR`` of ``<QID>.<ext>`` and/or ``entity_images.tsv``
  (see ``kgqa.loaders.images``)

Graph model (docs/ARCHITECTURE.md): ``(:Entity {id, name, aliases, description, name_embedding})``,
``(:Relation {id, name, aliases, embedding})``, facts as relationships typed by the PID,
``(:Image)-[:DEPICTS]->(:Entity)``.

The load runs top to bottom:

1. **validate** every file completely (column count, id syntax, unknown relation,
   dangling entity, encoding, images) before anything is written. Strict mode raises
   ``InvalidInput("file:line: why")`` at the first bad line; lenient mode records the
   line in a rejects file and the write pass skips it.
2. **write** relations (MERGE), entities, descriptions, facts, images. Batches of
   ``batch_size`` rows, one transaction each; a fact batch is grouped by relation type and
   uses the dynamic type ``[:$(row.type)]`` (one query plan for all 822 types; each type
   checked by ``kgqa.core.graph.relation_type`` and against the catalogue). Into a graph that
   holds none of the input's entities (none of their facts) the loader CREATEs; otherwise
   it MERGEs. Repeated triples in the input are written once.
3. **embed** relation names and entity names that have no embedding yet (names
   deduplicated per chunk, encoded in batches), then wait for the vector indexes.

Idempotent and resumable: each entity / description / fact batch advances a
``(:LoadCheckpoint {key})`` (key: phase + input files' paths, sizes, mtimes) in the same
transaction, to the last input line it covers. A rerun of the same command continues after
that line in the same CREATE/MERGE mode, so a run killed at any point ends, when rerun, in
the state of one clean run: nothing written twice, nothing missing. A checkpoint whose last
written row has since left the graph is dropped and the phase starts over (in MERGE mode if
the graph still holds some of the rows). Relations and images are MERGEd on constraint-backed
ids; the embedding phase asks Neo4j which loaded entities still lack a vector.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from array import array
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from kgqa.core.errors import InvalidInput, cap, cap_repr
from kgqa.core.graph import relation_type
from kgqa.core.kg import label_keys
from kgqa.loaders import images as entity_images

ENTITY_FILE = "wikidata5m_entity.txt"
RELATION_FILE = "wikidata5m_relation.txt"
TEXT_FILE = "wikidata5m_text.txt"
ALL_TRIPLES_FILE = "wikidata5m_all_triplet.txt"
SPLITS = ("train", "valid", "test")

_QID = re.compile(r"^Q[1-9][0-9]*$")
_PID = re.compile(r"^P[0-9]+$")  # the same rule as kgqa.core.graph.relation_type

#: The longest id accepted (Wikidata's are under 12 characters); a longer one is a bad line.
MAX_ID_CHARS = 32
#: The longest label accepted, in UTF-8 bytes. Labels are indexed (``entity_name``) and ids are
#: constraint-backed; Neo4j refuses an index key over ~8 KB ("Property value is too large to
#: index") in the middle of a write, so validation rejects such a line first, with room to spare.
MAX_LABEL_BYTES = 4096
#: The most characters of a bad line copied into the rejects file.
REJECT_LINE_CHARS = 1000

#: ids per embedding chunk: Neo4j is asked which of them lack a vector; names are
#: deduplicated within a chunk before encoding.
EMBED_CHUNK = 20_000
EMBED_WRITE_BATCH = 2_000
#: A load that created at least this many entities writes their vectors with the entity name vector
#: index dropped and builds the index once at the end (README, Loading: "Embeddings"). Measured with
#: bench/scale_curve.py: at 250k entities vectors + one build took 834 s against 971 s inserted one by
#: one; at 60k 185 s against 173 s. The crossover lies between; 100k is a round value inside it.
VECTOR_INDEX_DEFER_MIN = 100_000
#: How long the end of a load waits for that build (the whole Wikidata5M takes a while on a CPU).
VECTOR_INDEX_BUILD_TIMEOUT_S = 6 * 3600


# --------------------------------------------------------------------------- options & report
@dataclass
class LoadOptions:
    splits: tuple[str, ...] = SPLITS
    limit: int | None = None          # load only the first N valid triples (and the entities they use)
    strict: bool = True               # False: skip bad lines, write them to a rejects file
    embeddings: bool = True           # False: structure only; a later run adds embeddings
    batch_size: int = 10_000          # rows per write transaction (facts: pairs of one type)
    embed_batch_size: int = 256       # texts per encoder forward pass
    embed_chunk: int = EMBED_CHUNK    # entities per resume step (asked for, encoded, written; a kill loses ≤ 1)
    device: str = "cpu"               # encoder device: cpu | cuda
    progress: bool = False            # rich progress bars on stderr
    rejects_path: Path | None = None  # default: <data_dir>/rejects/wikidata5m-<UTC time>.tsv


@dataclass
class PhaseStat:
    name: str
    rows: int = 0
    seconds: float = 0.0
    detail: dict[str, float] = field(default_factory=dict)

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict:
        return {"phase": self.name, "rows": self.rows, "seconds": round(self.seconds, 3),
                "rows_per_s": round(self.rows_per_s, 1),
                **{k: round(v, 3) for k, v in self.detail.items()}}


@dataclass
class LoadReport:
    path: str
    phases: list[PhaseStat] = field(default_factory=list)
    rejects: int = 0
    rejects_by_reason: dict[str, int] = field(default_factory=dict)
    rejects_path: str | None = None
    skipped: dict[str, int] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=dict)  # per phase: create | merge (, resumed after …)
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    embeddings: bool = True
    device: str = "cpu"
    torch_threads: int | None = None
    encoder: str | None = None      # backend and threads of the embedding phase, e.g. "onnx-int8 · 2 threads"
    warnings: list[str] = field(default_factory=list)  # e.g. an empty split: loaded, but said

    def phase(self, name: str) -> PhaseStat:
        for p in self.phases:
            if p.name == name:
                return p
        p = PhaseStat(name)
        self.phases.append(p)
        return p

    def as_dict(self) -> dict:
        return {"path": self.path, "seconds": round(self.seconds, 3),
                "phases": [p.as_dict() for p in self.phases],
                "rejects": self.rejects, "rejects_by_reason": dict(self.rejects_by_reason),
                "rejects_path": self.rejects_path, "skipped": dict(self.skipped),
                "modes": dict(self.modes), "counts": dict(self.counts), "embeddings": self.embeddings,
                "device": self.device, "torch_threads": self.torch_threads,
                "encoder": self.encoder, "warnings": list(self.warnings)}


# --------------------------------------------------------------------------- files
@dataclass
class Wikidata5mFiles:
    entity: Path
    relation: Path
    triples: list[Path]
    text: Path | None
    images_tsv: Path | None


def _find(root: Path, name: str) -> Path | None:
    direct = root / name
    if direct.is_file():
        return direct
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        if (sub / name).is_file():
            return sub / name
    return None


def find_files(path: str | Path, splits: tuple[str, ...] = SPLITS) -> Wikidata5mFiles:
    """Locate the release's files in ``path`` (or one folder below); InvalidInput names what is missing."""
    root = Path(path)
    if not root.is_dir():
        raise InvalidInput(f"{root}: Wikidata5M folder not found")
    bad = [s for s in splits if s not in SPLITS]
    if bad or not splits:
        raise InvalidInput(f"--splits {','.join(splits)!r}: each split must be one of {', '.join(SPLITS)}")
    entity, relation = _find(root, ENTITY_FILE), _find(root, RELATION_FILE)
    for name, found in ((ENTITY_FILE, entity), (RELATION_FILE, relation)):
        if found is None:
            raise InvalidInput(f"{root}: no {name} (from the wikidata5m_alias archive)")
    triples: list[Path] = []
    for setting in ("transductive", "inductive"):
        found = {s: _find(root, f"wikidata5m_{setting}_{s}.txt") for s in splits}
        if any(found.values()):
            missing = [f"wikidata5m_{setting}_{s}.txt" for s, p in found.items() if p is None]
            if missing:
                raise InvalidInput(f"{root}: no {', '.join(missing)} (asked for by --splits)")
            triples = [found[s] for s in splits]
            break
    if not triples:
        all_triples = _find(root, ALL_TRIPLES_FILE)
        if all_triples is None:
            raise InvalidInput(f"{root}: no triple files (wikidata5m_transductive_train.txt, "
                               f"wikidata5m_inductive_train.txt or {ALL_TRIPLES_FILE})")
        triples = [all_triples]
    return Wikidata5mFiles(entity=entity, relation=relation, triples=triples,
                           text=_find(root, TEXT_FILE), images_tsv=_find(root, entity_images.ENTITY_IMAGES_TSV))


# --------------------------------------------------------------------------- line parsing
_BLOCK_BYTES = 1 << 22    # input lines are decoded about 4 MB at a time


def _lines(path: Path) -> Iterator[tuple[int, str | None, str, bytes]]:
    """(line number, text or None, why-not-text, raw) for every non-blank line.

    Lines are decoded a block at a time (about 4 MB); only a block that is not valid UTF-8 is
    decoded line by line, to name the bad line. ``raw`` is the undecoded line for a line that is
    not text, else empty."""
    lineno = 0
    with open(path, "rb") as fh:
        while True:
            block = fh.readlines(_BLOCK_BYTES)
            if not block:
                return
            try:
                texts = b"".join(block).decode("utf-8").split("\n")
            except UnicodeDecodeError:
                texts = None
            if texts is not None:
                if texts[-1] == "":     # the block's last line ended with a newline
                    texts.pop()
                for text in texts:
                    lineno += 1
                    text = text.rstrip("\r")
                    if text.strip():
                        yield lineno, text, "", b""
                continue
            for raw in block:
                lineno += 1
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    yield lineno, None, f"encoding: not valid UTF-8 (byte {e.start} of the line)", raw
                    continue
                text = text.rstrip("\r\n")
                if text.strip():
                    yield lineno, text, "", raw


def _names(cols: list[str]) -> tuple[str, list[str]]:
    label = cols[1].strip()
    aliases: list[str] = []
    seen = {label}
    for a in cols[2:]:
        a = a.strip()
        if a and a not in seen:
            seen.add(a)
            aliases.append(a)
    return label, aliases


def parse_catalogue_line(text: str, id_rule: re.Pattern, kind: str, keys: bool = True) -> tuple[dict | None, str]:
    """``ID<TAB>label<TAB>alias…`` → ({id, name, aliases, label_keys}, "") or (None, why); ``label_keys``
    (kgqa.core.kg.label_keys) are what entity linking looks labels up by (left out with ``keys=False``:
    validation does not need them)."""
    cols = text.split("\t")
    if len(cols) < 2:
        return None, f"column count: expected {kind}<TAB>label[<TAB>alias…], got 1 column"
    ident = cols[0].strip()
    if len(ident) > MAX_ID_CHARS:
        return None, f"id syntax: {cap_repr(ident, 40)} is longer than {MAX_ID_CHARS} characters"
    if not id_rule.match(ident):
        return None, f"id syntax: {cap_repr(ident)} is not a Wikidata {kind}"
    label, aliases = _names(cols)
    if not label:
        return None, f"empty label for {ident}"
    size = len(label.encode("utf-8"))
    if size > MAX_LABEL_BYTES:
        return None, f"label too long: {size:,} bytes for {ident} (limit {MAX_LABEL_BYTES:,}, Neo4j indexes labels)"
    row = {"id": ident, "name": label, "aliases": aliases}
    if keys:
        row["label_keys"] = label_keys(label, aliases)
    return row, ""


def parse_triple_line(text: str, relations: set[str] | dict, entities: set[str]) -> tuple[tuple | None, str]:
    """``head<TAB>PID<TAB>tail`` → ((h, r, t), "") or (None, why)."""
    cols = text.split("\t")
    if len(cols) == 3 and cols[1] in relations and cols[0] in entities and cols[2] in entities:
        return (cols[0], cols[1], cols[2]), ""   # ids found in the catalogues passed their id rules there
    if len(cols) != 3:
        return None, f"column count: expected 3 (head<TAB>relation<TAB>tail), got {len(cols)}"
    h, r, t = (c.strip() for c in cols)
    for ident, rule, what in ((h, _QID, "head entity id"), (r, _PID, "relation id"), (t, _QID, "tail entity id")):
        if len(ident) > MAX_ID_CHARS:
            return None, f"id syntax: {what} {cap_repr(ident, 40)} is longer than {MAX_ID_CHARS} characters"
        if not rule.match(ident):
            return None, f"id syntax: {what} {cap_repr(ident)}"
    if r not in relations:
        return None, f"unknown relation: {r} is not in {RELATION_FILE}"
    for ident in (h, t):
        if ident not in entities:
            return None, f"dangling entity: {ident} is not in {ENTITY_FILE}"
    return (h, r, t), ""


def parse_text_line(text: str) -> tuple[dict | None, str]:
    """``QID<TAB>description`` → ({id, description}, "") or (None, why)."""
    cols = text.split("\t", 1)
    if len(cols) != 2:
        return None, "column count: expected 2 (QID<TAB>description), got 1"
    ident = cols[0].strip()
    if len(ident) > MAX_ID_CHARS or not _QID.match(ident):
        return None, f"id syntax: {cap_repr(ident)} is not a Wikidata entity id"
    return {"id": ident, "description": cols[1].strip()}, ""


# --------------------------------------------------------------------------- rejects
class _Rejects:
    """Strict: raise at the first bad line. Lenient: append ``where<TAB>why<TAB>raw`` to a file."""

    def __init__(self, strict: bool, path: Path):
        self.strict = strict
        self.path = path
        self.count = 0
        self.by_reason: dict[str, int] = {}
        self.lines: dict[Path, set[int]] = {}  # bad line numbers per file, skipped by the write pass
        self._fh = None

    def __call__(self, where: str, why: str, raw: str | bytes = "") -> None:
        why = cap(why, 500)  # what is echoed is capped: a 10 MB id is not a 10 MB message
        if self.strict:
            raise InvalidInput(f"{where}: {why}")
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        raw = cap(raw.rstrip("\r\n").replace("\t", "\\t"), REJECT_LINE_CHARS)
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(self.path, "w", encoding="utf-8")
            self._fh.write("where\twhy\tline\n")
        self._fh.write(f"{where}\t{why}\t{raw}\n")
        self.count += 1
        reason = why.split(":", 1)[0]
        self.by_reason[reason] = self.by_reason.get(reason, 0) + 1

    def line(self, path: Path, lineno: int, why: str, raw) -> None:
        self(f"{path}:{lineno}", why, raw)
        self.lines.setdefault(path, set()).add(lineno)

    def skip(self, path: Path, lineno: int) -> bool:
        s = self.lines.get(path)
        return bool(s) and lineno in s

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


# --------------------------------------------------------------------------- progress
class _LogProgress:
    """Progress for a log (stderr not a terminal: CI, nohup, a service): a line when a phase starts
    and ends, and every ``interval`` seconds a line with rows, rate and ETA. Written to stdout, so
    that stderr keeps the one-line error contract and ``kgqa load … > load.log`` keeps the progress."""

    def __init__(self, interval: float = 30.0, out=None):
        self.interval = interval
        self.out = out or sys.stdout
        self.tasks: dict[int, dict] = {}

    def _say(self, text: str) -> None:
        print(f"kgqa load: {text}", file=self.out, flush=True)

    def add(self, name: str, total: int | None) -> int:
        tid = len(self.tasks)
        now = time.monotonic()
        self.tasks[tid] = {"name": name, "total": total, "done": 0, "t0": now, "last": now}
        self._say(f"{name}: started" + (f" ({total:,} rows)" if total else ""))
        return tid

    def advance(self, tid: int, n: int) -> None:
        t = self.tasks[tid]
        t["done"] += n
        now = time.monotonic()
        if now - t["last"] >= self.interval:
            t["last"] = now
            rate = t["done"] / max(now - t["t0"], 1e-9)
            eta = (f" · ETA {(t['total'] - t['done']) / rate:,.0f} s" if t["total"] and rate > 0
                   and t["total"] > t["done"] else "")
            of = f"/{t['total']:,}" if t["total"] else ""
            self._say(f"{t['name']}: {t['done']:,}{of} rows · {rate:,.0f} rows/s{eta}")

    def finish(self, tid: int, rows: int) -> None:
        t = self.tasks[tid]
        el = time.monotonic() - t["t0"]
        self._say(f"{t['name']}: done, {rows:,} rows in {el:,.1f} s ({rows / el if el > 0 else 0:,.0f} rows/s)")


class _Bars:
    """Rich progress bars (one per phase, with rows/s) on a terminal, log lines otherwise, or nothing."""

    def __init__(self, enabled: bool):
        self._progress = None
        self._log = None
        if enabled and not sys.stderr.isatty():
            self._log = _LogProgress()
            enabled = False
        if enabled:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn,
                                       TextColumn, TimeElapsedColumn)
            from rich.text import Text

            class RateColumn(ProgressColumn):
                def render(self, task):
                    el = task.elapsed or 0
                    return Text(f"{task.completed / el:,.0f} rows/s" if el > 0 else "", style="cyan")

            self._progress = Progress(TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(),
                                      RateColumn(), TimeElapsedColumn(),
                                      console=Console(stderr=True), transient=False, refresh_per_second=4)

    def __enter__(self):
        if self._progress:
            self._progress.start()
        return self

    def __exit__(self, *exc):
        if self._progress:
            self._progress.stop()

    def add(self, name: str, total: int | None) -> Any:
        if self._log:
            return self._log.add(name, total)
        return self._progress.add_task(name, total=total) if self._progress else None

    def advance(self, task, n: int) -> None:
        if self._log and task is not None:
            self._log.advance(task, n)
        if self._progress and task is not None:
            self._progress.advance(task, n)

    def finish(self, task, rows: int) -> None:
        if self._log and task is not None:
            self._log.finish(task, rows)
        if self._progress and task is not None:
            self._progress.update(task, total=rows, completed=rows)
            self._progress.stop_task(task)


# --------------------------------------------------------------------------- the load
class _Loader:
    def __init__(self, graph, path, images, encoder, options: LoadOptions):
        self.graph = graph
        self.opt = options
        self.files = find_files(path, tuple(options.splits))
        self.images_dir = Path(images) if images is not None else None
        self.encoder = encoder
        settings = graph.settings
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        rejects_path = options.rejects_path or Path(settings.data_dir) / "rejects" / f"wikidata5m-{stamp}.tsv"
        self.rejects = _Rejects(options.strict, Path(rejects_path))
        self.report = LoadReport(path=str(Path(path).resolve()), embeddings=options.embeddings,
                                 device=options.device, torch_threads=settings.torch_threads)
        if options.batch_size < 1:
            raise InvalidInput(f"--batch-size {options.batch_size}: must be at least 1")
        if options.embed_chunk < 1:
            raise InvalidInput(f"--embed-chunk {options.embed_chunk}: must be at least 1")
        if options.limit is not None and options.limit < 0:
            raise InvalidInput(f"--limit {options.limit}: must be 0 or more")
        # filled by validation
        self.relations: set[str] = set()
        self.entity_ids: set[str] = set()
        self.duplicate_lines: dict[Path, set[int]] = {}
        self.triple_lines: dict[Path, int] = {}   # last line to read per triple file (--limit)
        self.used_entities: set[str] | None = None
        self.images: list[entity_images.EntityImage] = []
        self.line_counts: dict[Path, int] = {}
        self.repeated_hashes: set[int] = set()     # hashes of triples that may occur twice (checked exactly)
        self.valid_triples: dict[Path, int] = {}   # valid triple lines per file (an empty split is said)
        self.checkpoint_keys: list[str] = []       # removed when the load completes
        self.created_entities = False              # this load CREATEd its entities (none had a vector)

    # ---------------------------------------------------------------- 1. validate
    def validate(self, bars: _Bars, sinks: dict[str, Callable] | None = None) -> None:
        """Check every input file; ``sinks`` (``--bulk``): relations/entities/triples → a callable
        given each accepted row as validation accepts it."""
        sinks = sinks or {}
        st = self.report.phase("validate")
        t0 = time.perf_counter()
        rows = 0
        rows += self._validate_catalogue(self.files.relation, _PID, "property id", self.relations, bars,
                                         sinks.get("relations"))
        for pid in self.relations:
            relation_type(pid)  # the one rule for relationship types (kgqa.core.graph)
        rows += self._validate_catalogue(self.files.entity, _QID, "entity id", self.entity_ids, bars,
                                         sinks.get("entities"))
        rows += self._validate_triples(bars, sinks.get("triples"))
        if self.files.text is not None:
            rows += self._validate_text(bars)
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
        n = 0
        dups = self.duplicate_lines.setdefault(path, set())
        for lineno, text, why, raw in _lines(path):
            n += 1
            if n % 50_000 == 0:
                bars.advance(task, 50_000)
            if text is None:
                self.rejects.line(path, lineno, why, raw)
                continue
            row, why = parse_catalogue_line(text, rule, kind, keys=False)
            if row is None:
                self.rejects.line(path, lineno, why, text)
                continue
            if row["id"] in seen:  # first line wins; later ones are skipped and counted
                dups.add(lineno)
                self.report.skipped[f"duplicate ids in {path.name}"] = \
                    self.report.skipped.get(f"duplicate ids in {path.name}", 0) + 1
                continue
            seen.add(row["id"])
            if sink is not None:
                sink(row)
        self.line_counts[path] = n
        bars.finish(task, n)
        return n

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
            for lineno, text, why, raw in _lines(path):
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

    def _validate_text(self, bars) -> int:
        path = self.files.text
        task = bars.add("validate text.txt", None)
        n = 0
        for lineno, text, why, raw in _lines(path):
            n += 1
            if n % 50_000 == 0:
                bars.advance(task, 50_000)
            if text is None:
                self.rejects.line(path, lineno, why, raw)
                continue
            row, why = parse_text_line(text)
            if row is None:
                self.rejects.line(path, lineno, why, text)
        self.line_counts[path] = n
        bars.finish(task, n)
        return n

    def _validate_images(self, bars) -> int:
        if self.images_dir is None and self.files.images_tsv is None:
            return 0
        task = bars.add("validate images", None)
        refs = entity_images.discover(self.images_dir, self.files.images_tsv, self.rejects)
        loaded = self._loaded_ids()
        self.images, skipped = entity_images.validate(
            refs, known=lambda q: q in loaded, reject=self.rejects,
            skip_unknown=self.used_entities is not None)
        if skipped:
            self.report.skipped["images of entities outside --limit"] = skipped
        bars.finish(task, len(refs))
        return len(refs)

    def _loaded_ids(self) -> set[str]:
        return self.used_entities if self.used_entities is not None else self.entity_ids

    # ---------------------------------------------------------------- 2. write
    def _skip(self, path: Path, lineno: int) -> bool:
        return self.rejects.skip(path, lineno) or lineno in self.duplicate_lines.get(path, ())

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
        for lineno, text, _, _ in _lines(path):
            if text is None or self._skip(path, lineno):
                continue
            row, _why = parse_catalogue_line(text, _PID, "property id")
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
        neo = 0.0
        keep = self.used_entities  # None: every entity; else only those the --limit triples use
        key = self._key("entities", [path], limit=self.opt.limit)
        mode, _, start = self._resume_point(
            key, lambda last: bool(last) and self.graph.read("load_entity_exists", id=last[0])[0]["found"],
            lambda: self._any("load_entities_exist", sorted(self._loaded_ids())), "entities")
        query = "load_entities_create" if mode == "create" else "load_entities"
        self.created_entities = mode == "create"
        task = bars.add("entities", len(keep) if keep is not None else self.line_counts.get(path))
        batch: list[dict] = []
        n = 0
        inputs = [str(path.resolve())]

        def flush(lineno: int):
            nonlocal neo, n
            t = time.perf_counter()
            self.graph.write(query, rows=batch, key=key, mode=mode, file=0, line=lineno,
                             last=[batch[-1]["id"]], inputs=inputs)
            neo += time.perf_counter() - t
            n += len(batch)
            bars.advance(task, len(batch))
            batch.clear()

        lineno = 0
        for lineno, text, _, _ in _lines(path):
            if lineno <= start:
                continue
            if text is None or self._skip(path, lineno):
                continue
            row, _why = parse_catalogue_line(text, _QID, "entity id")
            if row is None or (keep is not None and row["id"] not in keep):
                continue
            batch.append(row)
            if len(batch) >= self.opt.batch_size:
                flush(lineno)
        if batch:
            flush(lineno)
        st.rows, st.seconds = n, time.perf_counter() - t0
        st.detail["neo4j_s"] = neo
        bars.finish(task, n)

    def write_descriptions(self, bars) -> None:
        path = self.files.text
        if path is None:
            return
        st = self.report.phase("descriptions")
        t0 = time.perf_counter()
        neo = 0.0
        loaded = self._loaded_ids()
        key = self._key("descriptions", [path], limit=self.opt.limit)
        _, _, start = self._resume_point(
            key, lambda last: bool(last) and self.graph.read("load_entity_exists", id=last[0])[0]["found"],
            lambda: True, "descriptions")  # SET is idempotent: the checkpoint only saves time
        task = bars.add("descriptions", None)
        batch: list[dict] = []
        n = skipped = 0
        inputs = [str(path.resolve())]

        def flush(lineno: int):
            nonlocal neo, n
            t = time.perf_counter()
            self.graph.write("load_descriptions", rows=batch, key=key, mode="merge", file=0, line=lineno,
                             last=[batch[-1]["id"]], inputs=inputs)
            neo += time.perf_counter() - t
            n += len(batch)
            bars.advance(task, len(batch))
            batch.clear()

        lineno = 0
        for lineno, text, _, _ in _lines(path):
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
            batch.append(row)
            if len(batch) >= self.opt.batch_size:
                flush(lineno)
        if batch:
            flush(lineno)
        if skipped:
            self.report.skipped["descriptions of entities not loaded"] = skipped
        st.rows, st.seconds = n, time.perf_counter() - t0
        st.detail["neo4j_s"] = neo
        bars.finish(task, n)

    def write_facts(self, bars) -> None:
        """Facts in file order, ``batch_size`` per transaction, each batch grouped by relation type.

        CREATE into a graph without facts (the input is deduplicated exactly: triples whose
        64-bit hash repeats are compared as strings), MERGE into one that has facts; either
        way the checkpoint moves in the same transaction as the batch.
        """
        st = self.report.phase("facts")
        t0 = time.perf_counter()
        neo = 0.0
        paths = self.files.triples
        key = self._key("facts", paths)
        t_check = time.perf_counter()
        mode, start_file, start_line = self._resume_point(
            key, lambda last: len(last) == 3 and self.graph.read(
                "load_fact_exists", h=last[0], type=last[1], t=last[2])[0]["found"],
            lambda: self._any("load_facts_exist_from", sorted(self._loaded_ids()), count="relationships"), "facts")
        check_s = time.perf_counter() - t_check
        query = "load_facts_create" if mode == "create" else "load_facts"
        limit = self.opt.limit
        total = sum(self.line_counts.get(p, 0) for p in paths)
        task = bars.add("facts", min(total, limit) if limit is not None else total)
        inputs = [str(p.resolve()) for p in paths]
        repeated, seen = self.repeated_hashes, set()
        batch: list[dict] = []
        n = duplicates = 0

        def flush(fi: int, lineno: int):
            nonlocal neo, n
            last = batch[-1]
            batch.sort(key=lambda r: r["type"])  # grouped by type within the transaction
            t = time.perf_counter()
            self.graph.write(query, rows=batch, key=key, mode=mode, file=fi, line=lineno,
                             last=[last["h"], last["type"], last["t"]], inputs=inputs)
            neo += time.perf_counter() - t
            n += len(batch)
            bars.advance(task, len(batch))
            batch.clear()

        for fi, path in enumerate(paths):
            last_line = self.triple_lines.get(path, 0)
            done = 0  # the last line of this file looked at
            for lineno, text, _, _ in _lines(path):
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
                batch.append({"h": triple[0], "type": triple[1], "t": triple[2]})
                if len(batch) >= self.opt.batch_size:
                    flush(fi, done)
            if batch:
                flush(fi, done)
        if duplicates:
            self.report.skipped["repeated triples"] = duplicates
        st.rows, st.seconds = n, time.perf_counter() - t0
        st.detail["neo4j_s"] = neo
        st.detail["resume_check_s"] = check_s
        st.detail["parse_s"] = st.seconds - neo - check_s
        bars.finish(task, n)

    def write_images(self, bars) -> None:
        if not self.images:
            return
        st = self.report.phase("images")
        t0 = time.perf_counter()
        task = bars.add("images", len(self.images))
        n = entity_images.write(self.graph, self.images, batch_size=min(self.opt.batch_size, 1000))
        st.rows, st.seconds = n, time.perf_counter() - t0
        bars.finish(task, n)

    # ---------------------------------------------------------------- 3. embed
    def _get_encoder(self):
        """The encoder, loaded (and timed as its own phase) on first need only."""
        if getattr(self, "_encoder_ready", False):
            return self.encoder
        if self.encoder is None:
            from kgqa.models.encoder import encoder_for

            self.encoder = encoder_for(self.graph.settings, device=self.opt.device)
        st = self.report.phase("load encoder")  # model load + one warm-up pass, kept out of the rates
        t0 = time.perf_counter()
        self._embed_threads = getattr(self.graph.settings, "embed_threads", None) or 1  # every core unless KGQA_LOAD_THREADS
        self.encoder.encode(["warm-up"], **self._threads_kw())
        st.seconds = time.perf_counter() - t0
        backend = getattr(self.encoder, "backend", None)
        if backend:
            self.report.encoder = f"{backend} · {self._embed_threads} threads"
        self._encoder_ready = True
        return self.encoder

    def _threads_kw(self) -> dict:
        """``threads=`` for encoders that take it (SentenceEncoder); a test double may not."""
        import inspect

        try:
            takes = "threads" in inspect.signature(self.encoder.encode).parameters
        except (TypeError, ValueError):
            takes = False
        return {"threads": self._embed_threads} if takes else {}

    def embed(self, bars) -> None:
        # relations: ~822, one pass
        st = self.report.phase("embed relations")
        t0 = time.perf_counter()
        todo = self.graph.read("load_relations_lacking_embedding")
        if todo:
            t_load = time.perf_counter()
            encoder = self._get_encoder()
            t0 += time.perf_counter() - t_load  # the model load is its own phase
            enc_s, neo_s = self._embed_rows(encoder, todo, "load_relation_embeddings")
            st.detail.update(encode_s=enc_s, neo4j_s=neo_s)
        st.rows, st.seconds = len(todo), time.perf_counter() - t0

        st = self.report.phase("embed entities")
        t0 = time.perf_counter()
        ids = sorted(self._loaded_ids())
        deferred = self._defer_vector_index(len(ids))
        task = bars.add("embed entities", len(ids))
        n = unique = 0
        enc_total = neo_total = read_s = 0.0
        step = max(1, self.opt.embed_chunk)
        for i in range(0, len(ids), step):
            chunk = ids[i:i + step]
            t = time.perf_counter()
            todo = self.graph.read("load_entities_lacking_embedding", ids=chunk)
            read_s += time.perf_counter() - t
            if todo:
                t_load = time.perf_counter()
                encoder = self._get_encoder()
                t0 += time.perf_counter() - t_load
                enc_s, neo_s, u = self._embed_rows(encoder, todo, "load_entity_embeddings", count_unique=True)
                enc_total += enc_s
                neo_total += neo_s
                unique += u
                n += len(todo)
            bars.advance(task, len(chunk))
        st.rows, st.seconds = n, time.perf_counter() - t0
        st.detail.update(unique_names=unique, encode_s=enc_total, neo4j_write_s=neo_total, neo4j_read_s=read_s)
        bars.finish(task, len(ids))
        if deferred:
            st = self.report.phase("build vector index")
            t0 = time.perf_counter()
            task = bars.add("build vector index", None)
            self.graph.apply_schema()             # creates entity_name_embedding again, over every vector
            self.graph.await_indexes(timeout_s=VECTOR_INDEX_BUILD_TIMEOUT_S)
            st.seconds = time.perf_counter() - t0
            bars.finish(task, 0)

    def _defer_vector_index(self, n_ids: int) -> bool:
        """Whether to write this load's entity vectors with the entity name vector index dropped and
        build it once at the end: when the load created ``VECTOR_INDEX_DEFER_MIN`` or more entities
        (one HNSW build over the finished vectors costs less than inserting each into a growing
        index: bench/scale_curve.py), or when the index is already missing (an earlier such load was
        killed before its build; this run finishes it). Queries need the index, so it is said."""
        names = {r["name"] for r in self.graph.read("schema_indexes")}
        if "entity_name_embedding" not in names:
            self.report.modes["vector index"] = "built after the vectors (it was missing)"
            return True
        if not (self.created_entities and n_ids >= VECTOR_INDEX_DEFER_MIN):
            return False
        self.graph.write("load_drop_entity_vector_index")
        self.report.modes["vector index"] = (f"dropped for {n_ids:,} new entities, built after their vectors "
                                             "(entity linking waits for the build)")
        return True

    def _embed_rows(self, encoder, todo: list[dict], query: str, count_unique: bool = False):
        names = list(dict.fromkeys(r["name"] for r in todo))  # deduplicated, order kept
        t = time.perf_counter()
        vecs = encoder.encode(names, batch_size=self.opt.embed_batch_size, **self._threads_kw())
        enc_s = time.perf_counter() - t
        index = {name: k for k, name in enumerate(names)}
        t = time.perf_counter()
        for j in range(0, len(todo), EMBED_WRITE_BATCH):
            rows = [{"id": r["id"], "vector": vecs[index[r["name"]]].tolist()}
                    for r in todo[j:j + EMBED_WRITE_BATCH]]
            self.graph.write(query, rows=rows)
        neo_s = time.perf_counter() - t
        return (enc_s, neo_s, len(names)) if count_unique else (enc_s, neo_s)

    # ---------------------------------------------------------------- run
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
            with _Bars(self.opt.progress) as bars:
                self.validate(bars)  # nothing is written before every file has been checked
                st = self.report.phase("schema")
                t0 = time.perf_counter()
                st.rows = self.graph.apply_schema()
                st.seconds = time.perf_counter() - t0
                self.write_relations(bars)
                self.write_entities(bars)
                st = self.report.phase("label keys")
                t0 = time.perf_counter()
                st.rows = backfill_label_keys(self.graph)
                st.seconds = time.perf_counter() - t0
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
    """Load a Wikidata5M folder (and optional images folder) into ``graph``; see the module doc.

    ``encoder`` defaults to ``kgqa.models.encoder.get_encoder`` (unless ``options.embeddings``
    is False). Raises InvalidInput ("file:line: why") in strict mode before writing anything.
    """
    return _Loader(graph, path, images, encoder, options or LoadOptions()).run()
