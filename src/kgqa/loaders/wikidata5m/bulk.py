"""A first bulk load of Wikidata5M through ``neo4j-admin database import full``.

``kgqa load wikidata5m --bulk`` is for an EMPTY database (it refuses one that holds any node):

1. validate every input file exactly as the incremental loader does (``--strict`` stops at the
   first bad line with ``file:line: why``, nothing loaded and the partial CSVs removed;
   ``--lenient`` skips and counts) and, in the same read of each file, stream the accepted rows
   into the importer's CSV format (entities, relations, facts — rejected and duplicate lines
   left out, repeated triples written once, ``--limit`` honoured); the descriptions are kept aside
   and the entity file read once more for ``entities.csv``, each row with its description and name
   vector (kgqa.loaders.wikidata5m.bulk_csv: encoded in batches in this process, memory bounded);
3. stop the local server (``kgqa neo4j``), run ``neo4j-admin database import full`` from the
   same Maven release (``org.neo4j.cli.AdminTool``), start the server again, delete the CSVs;
4. apply the schema (its entity name vector index is built once, over the imported vectors: the
   phase "build vector index" waits for it), then load images and the relations' vectors over Bolt with
   the incremental loader's own phases (resumable, checkpointed). Without embeddings, or for a folder
   without descriptions, nothing changes for the rest: what the CSV did not carry goes over Bolt.

Interrupted (Ctrl-C, SIGTERM) while the server is stopped, the load stops the importer, starts the
server again and removes the CSVs before it exits (130). Killed outright (kill -9), it leaves a
state file (``<data_dir>/import/bulk-state.json``: its pid, the CSV folder, the importer's pid);
the next ``--bulk`` finds it, stops a still-running importer (on Linux the importer dies with kgqa: a
parent-death signal, ``spawn_child``), starts the server, removes the CSVs,
and loads again over what the interrupted importer left (the database was empty before it). Killed
after the import (the state file then says so, and which entity columns the import carried), the same
command validates again and loads only the rest over Bolt (schema, images, relation vectors, the index awaited). Neo4j itself killed meanwhile is the same, once it
is started again (``tests/faults/test_kill_neo4j_bulk.py``).

Against a Neo4j that is not the local server (Docker, a remote host), steps 3–4 cannot run
from here: the CSVs are written and the report carries the exact ``neo4j-admin`` command to
run where the database lives; the state file remembers them (``handed_out``), and the same
``--bulk`` command, run again once that database holds the CSVs' entities, removes the CSVs and
loads only the rest over Bolt, as after a local import (before the import: one line saying so).

The importer writes store files offline and builds no indexes (Neo4j 5.26's ``--schema`` option
works only for the Enterprise block format: "Record format batch import does not support schema
changes"), so the schema is applied after it. It is the physical floor for structure loading
(``bench/load.py`` compares it with the Bolt loader).
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

from kgqa.core.errors import InvalidInput, LocalServerError, no_space
from kgqa.core.ids import QID
from kgqa.core.kg import label_keys
from kgqa.loaders.progress import Bars
from kgqa.loaders.wikidata5m.bulk_csv import ENTITY_BATCH, ENTITY_HEADER, VECTOR_HEADER, Descriptions, write_entity_rows
from kgqa.loaders.wikidata5m.bulk_state import (HANDED_OUT, IMPORTED, SERVER_START_WAIT_S,  # noqa: F401
                                                 STATE_FILE, BulkState, _pid_alive, _stop_process)
from kgqa.loaders.wikidata5m.files import parse_catalogue_line, read_lines
from kgqa.loaders.wikidata5m.load import Loader
from kgqa.loaders.wikidata5m.options import LoadOptions, LoadReport

#: Array delimiter for aliases in the importer's CSV (a control character no label contains).
ARRAY_DELIMITER = "\x1f"


def is_local_server(settings) -> bool:
    """Whether NEO4J_URI points at the ``kgqa neo4j`` server of these settings (same host and port)."""
    u = urlparse(settings.neo4j_uri)
    return u.hostname in ("127.0.0.1", "localhost") and (u.port or 7687) == settings.neo4j_bolt_port


class BulkLoader(Loader):
    """The incremental loader's validation and Bolt phases around ``neo4j-admin database import``."""

    #: what the entity CSV carried (set by ``write_entity_csv``, or read back from the state file on a resume)
    csv_descriptions = False
    csv_vectors = False

    def imported_columns(self) -> list[str]:
        return [c for c, on in (("description", self.csv_descriptions), ("name_embedding", self.csv_vectors)) if on]

    def validate_to_csv(self, folder: Path, bars) -> dict[str, int]:
        """Validation (the incremental loader's rules and messages) and the importer's CSV: relations and
        facts written in the same read of each file as validation accepts them, descriptions kept aside
        (``bulk_csv.Descriptions``); then the entity file is read again, for ``entities.csv`` with each
        entity's description and name vector (``write_entity_csv``). A rejected line or a repeated id never
        reaches the CSV.

        When some fact is given more than once (known only after the last triple file), ``facts.csv``
        itself is read again, to keep each fact once."""
        folder.mkdir(parents=True, exist_ok=True)
        t0, cpu0 = time.perf_counter(), time.process_time()
        counts = {"entities": 0, "relations": 0, "facts": 0}
        d = ARRAY_DELIMITER
        descriptions = Descriptions(folder / "descriptions.sqlite") if self.files.text is not None else None
        try:
            with open(folder / "relations.csv", "w", newline="", encoding="utf-8") as rf, \
                    open(folder / "facts.csv", "w", encoding="utf-8") as ff:
                rw = csv.writer(rf)
                rw.writerow(["id:ID(Relation)", "name", "aliases:string[]", ":LABEL"])
                ff.write(":START_ID(Entity),:TYPE,:END_ID(Entity)\n")
                facts: list[str] = []

                def relation(row: dict) -> None:
                    rw.writerow([row["id"], row["name"], d.join(a.replace(d, " ") for a in row["aliases"]),
                                 "Relation"])
                    counts["relations"] += 1

                def triple(t: tuple) -> None:       # validated ids: no comma, quote or newline to escape
                    facts.append(f"{t[0]},{t[1]},{t[2]}\n")
                    if len(facts) >= 65_536:
                        ff.writelines(facts)
                        facts.clear()
                    counts["facts"] += 1

                sinks = {"relations": relation, "triples": triple}
                if descriptions is not None:
                    sinks["text"] = descriptions.add
                self.validate(bars, sinks)
                ff.writelines(facts)
            if self.repeated_hashes:
                counts["facts"] -= self._drop_repeated_facts(folder / "facts.csv")
            st = self.report.phase("validate")
            st.name, st.seconds = "validate + import CSV", time.perf_counter() - t0
            st.detail["cpu_s"] = round(time.process_time() - cpu0, 1)      # of this process: the wall on a busy machine
            counts["entities"] = self.write_entity_csv(folder / "entities.csv", bars, descriptions)
        finally:
            if descriptions is not None:
                descriptions.close()
        st.detail.update(counts)
        return counts

    def write_entity_csv(self, path: Path, bars, descriptions) -> int:
        """``entities.csv``: the accepted entities (with ``--limit`` only those its triples use), their
        descriptions and, when the load embeds, their name vectors; the phase "entity CSV", one progress
        line with its ETA. Returns the rows written."""
        st = self.report.phase("entity CSV")
        embed = self.opt.embeddings
        encode = None
        if embed:
            encoder = self._get_encoder()          # timed as its own phase, "load encoder"
            kw = self._threads_kw()
            encode = lambda names: encoder.encode(names, batch_size=self.opt.embed_batch_size, **kw)  # noqa: E731
            self.csv_vectors = True
        self.csv_descriptions = descriptions is not None
        t0, cpu0 = time.perf_counter(), time.process_time()
        d = ARRAY_DELIMITER
        keep = self.loaded_ids() if self.opt.limit is not None else None
        src = self.files.entity
        task = bars.add("entity CSV" + (" + name vectors" if embed else ""), len(self.loaded_ids()))
        totals: dict[str, float] = {}
        n = 0
        batch: list[tuple] = []

        def flush() -> None:
            for k, v in write_entity_rows(out, batch, descriptions, encode, d).items():
                totals[k] = totals.get(k, 0) + v
            bars.advance(task, len(batch))
            batch.clear()

        with open(path, "wb") as out:
            out.write((",".join(ENTITY_HEADER + ([VECTOR_HEADER] if embed else [])) + "\n").encode("utf-8"))
            for lineno, text, _, _ in read_lines(src):
                if text is None or self.skip_line(src, lineno):
                    continue
                row, _why = parse_catalogue_line(text, QID, "entity id", keys=False)
                if row is None or (keep is not None and row["id"] not in keep):
                    continue
                aliases = [a.replace(d, " ") for a in row["aliases"]]
                batch.append((row["id"], row["name"], d.join(aliases), d.join(label_keys(row["name"], aliases))))
                n += 1
                if len(batch) >= ENTITY_BATCH:
                    flush()
            if batch:
                flush()
        st.rows, st.seconds = n, time.perf_counter() - t0
        st.detail.update({k: round(v, 1) for k, v in totals.items()}, cpu_s=round(time.process_time() - cpu0, 1))
        if descriptions is not None:
            st.detail["descriptions"] = descriptions.count
        bars.finish(task, n)
        return n

    def _drop_repeated_facts(self, path: Path) -> int:
        """Rewrite ``facts.csv`` with each fact once; returns how many repeats were dropped. Only
        facts whose 64-bit hash repeats are compared, as strings."""
        repeated, seen, dropped = self.repeated_hashes, set(), 0
        tmp = path.with_suffix(".tmp")
        with open(path, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as dst:
            dst.write(next(src))
            for line in src:
                t = tuple(line.rstrip("\n").split(","))
                if hash(t) in repeated:
                    if t in seen:
                        dropped += 1
                        continue
                    seen.add(t)
                dst.write(line)
        tmp.replace(path)
        if dropped:
            self.report.skipped["repeated triples"] = dropped
        return dropped

    def import_command(self, folder: Path, java: str, jars: Path) -> list[str]:
        return [java, "-cp", f"{jars}/*", "org.neo4j.cli.AdminTool", "database", "import", "full",
                f"--nodes={folder / 'relations.csv'}", f"--nodes={folder / 'entities.csv'}",
                f"--relationships={folder / 'facts.csv'}", "--array-delimiter=U+001F",
                "--overwrite-destination=true", f"--report-file={folder / 'import.report'}", "neo4j"]


def _csv_bytes_needed(loader) -> int | None:
    """About what the importer's CSVs take: no more than the files they come from, plus the name vectors
    (7 bytes a component at most: ``-.1234`` and its delimiter)."""
    try:
        f = loader.files
        size = sum(Path(p).stat().st_size for p in [f.entity, f.relation, *f.triples, f.text] if p)
        if loader.opt.embeddings:
            size += len(loader.loaded_ids()) * (getattr(loader.encoder, "dim", None) or 384) * 7
        return size
    except (AttributeError, OSError, TypeError):
        return None


PR_SET_PDEATHSIG = 1          # linux/prctl.h


def _die_with(parent: int):
    """The ``preexec_fn`` of ``spawn_child``: on Linux, SIGKILL when ``parent`` dies (prctl PR_SET_PDEATHSIG),
    and exit at once when it died before that was set. libc's prctl is looked up here, in the parent, so
    that the child, between fork and exec, only calls it (no import, no lock)."""
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None                  # no prctl: the state file's recovery is what remains
    sig = int(signal.SIGKILL)

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:   # the parent died between fork and prctl
            os._exit(1)
    return preexec


def spawn_child(cmd: list[str], *, env: dict, stdout) -> subprocess.Popen:
    """Start the importer so that it never outlives kgqa: its own session and process group (a Ctrl-C
    reaches kgqa, which stops it; ``_stop_process`` signals the whole group) and, on Linux, a parent-death
    signal: kill -9 of kgqa kills the importer too (the next --bulk still cleans up the rest). The signal
    follows the thread that started the child, so it is started from the thread that waits for it."""
    import sys

    preexec = _die_with(os.getpid()) if sys.platform.startswith("linux") else None
    return subprocess.Popen(cmd, env=env, stdout=stdout, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=preexec)


def importer_percent(log: Path) -> int | None:
    """How far ``neo4j-admin database import`` is, 0–400, from its log: its stages are "(1/4) Node import" to
    "(4/4) Post processing", each printed with percentages ("...  45% ∆..."); None before the first stage."""
    import re

    try:
        with open(log, "rb") as fh:
            fh.seek(max(0, fh.seek(0, 2) - 65_536))
            tail = fh.read().decode("utf-8", "replace")
    except OSError:
        return None
    stages = list(re.finditer(r"\((\d)/4\)", tail))
    if not stages:
        return None
    pcts = re.findall(r"(\d{1,3})% ∆", tail[stages[-1].end():])
    return (int(stages[-1].group(1)) - 1) * 100 + (int(pcts[-1]) if pcts else 0)


def _run_importer(state: BulkState, server, cmd: list[str], folder: Path, bars=None,
                  imported: dict | None = None) -> tuple[float, float]:
    """Stop the server, run the importer, start the server again; returns (stopped at, imported at).
    ``bars``: a progress line every 30 s from the importer's log (its 4 stages as 0–400 %, an ETA).
    ``imported``: written to the state file as soon as the importer succeeded (with its CSVs deleted), so that a
    server that does not start again, or a kill meanwhile, leaves a rerun that resumes after the import.

    Ctrl-C or SIGTERM meanwhile: the importer is stopped, the server started, the CSVs removed,
    then the interruption goes on (exit 130); the state file stays, so that the rerun imports over
    what the importer had written."""
    def on_term(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term) if _main_thread() else None
    proc = None
    try:
        state.update(server_stopped=True)
        server.stop()
        t1 = time.perf_counter()
        env = {**os.environ, "NEO4J_HOME": str(server.home), "NEO4J_CONF": str(server.conf_dir)}
        log = folder / "importer.log"
        with open(log, "w", encoding="utf-8") as out:
            proc = spawn_child(cmd, env=env, stdout=out)
            state.update(importer=proc.pid)
            task = bars.add("neo4j-admin import (4 stages)", 400, unit="%") if bars is not None else None
            done = 0
            while True:
                try:
                    rc = proc.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    pct = importer_percent(log)
                    if task is not None and pct is not None and pct > done:
                        bars.advance(task, pct - done)
                        done = pct
            if task is not None:
                bars.finish(task, 400 if rc == 0 else done)
        t2 = time.perf_counter()
        if rc == 0 and imported is not None:
            state.update(**imported)
            for name in ("relations.csv", "entities.csv", "facts.csv"):    # in the store now
                (folder / name).unlink(missing_ok=True)
        started, why = False, ""
        try:
            server.start(wait_s=SERVER_START_WAIT_S)
            started = True
        except LocalServerError as e:          # e.g. Neo4j killed while it starts
            why = str(e)
        finally:
            if rc != 0:
                lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
                reason = f"killed by signal {-rc}" if rc < 0 else (lines[-1] if lines else f"exit {rc}")
                raise LocalServerError(f"neo4j-admin database import failed: {reason}"
                                       f" (log: {log}; a rerun of --bulk imports over it)"
                                       + ("" if started else "; the server did not start again"))
        if not started:
            raise LocalServerError(f"{why}, after the import: start it (`kgqa neo4j start`) and run the same "
                                   "command again")
        state.update(importer=None, server_stopped=False)
        return t1, t2
    except KeyboardInterrupt:
        if previous is not None:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)     # a second SIGTERM must not cut the clean-up
        import sys

        print("kgqa: --bulk interrupted: stopping the importer, starting the server, removing the CSVs",
              file=sys.stderr)
        if proc is not None and proc.poll() is None:
            _stop_process(proc.pid)
        if not server.status().running:
            server.start(wait_s=SERVER_START_WAIT_S)
        shutil.rmtree(folder, ignore_errors=True)
        state.update(owner=None, importer=None, server_stopped=False, folder=None, imported_over=True)
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _after_handed_out(graph, path, images, encoder, opts: LoadOptions, state: BulkState, t_start: float,
                      have: int):
    """The same --bulk again after its CSVs were handed out for another Neo4j's importer: once that database holds
    the CSVs' entities, the CSVs are removed and the rest is loaded as after a local import (``_after_import``);
    before it, one line saying what to run. ``have``: the entities the database holds."""
    folder, want = state.field("folder"), int(state.field("entities") or 0)
    if have == 0:
        raise InvalidInput(f"the importer's CSVs for {path} are under {folder}, not imported into "
                           f"{graph.settings.neo4j_uri} yet: run the neo4j-admin command this load printed where "
                           "the database lives, start it, then this command again")
    if have != want:
        raise InvalidInput(f"{graph.settings.neo4j_uri} holds {have:,} entities where the importer's CSVs for {path} "
                           f"hold {want:,}: import them into an empty database (the neo4j-admin command this load "
                           "printed), then this command again")
    if folder:                             # the database holds them: the CSVs are not needed again
        shutil.rmtree(folder, ignore_errors=True)
    return _after_import(graph, path, images, encoder, opts, state, t_start,
                         how="the importer's CSVs were imported where the database lives")


def _after_import(graph, path, images, encoder, opts: LoadOptions, state: BulkState, t_start: float,
                  how: str = "the interrupted --bulk of this folder had imported its structure") -> LoadReport:
    """The rerun of a --bulk cut off after its import: the structure is in the store, so the files are
    validated again and only the Bolt phases run (schema, descriptions, images, embeddings; each resumable)."""
    loader = BulkLoader(graph, path, images, encoder, opts)
    in_csv = state.imported_columns()
    loader.csv_descriptions = "description" in in_csv
    loader.csv_vectors = "name_embedding" in in_csv
    loader.report.warnings.append(how + (f" with {' and '.join(in_csv)}" if in_csv else "") + ": loading the rest")
    state.data = {"owner": os.getpid(), "imported": True, "path": str(Path(path).resolve()), "in_csv": in_csv}
    state.update()
    try:
        with Bars(opts.progress) as bars:
            loader.validate(bars)
            _write_the_rest(loader, bars)
    finally:
        loader.rejects.close()
    return _done(loader, state, "neo4j-admin import (an earlier run)", t_start)


def _children_cpu_s() -> float:
    """CPU seconds of this process's children that have ended (the importer, once waited for)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def bulk_load_wikidata5m(graph, path: str | Path, *, images: str | Path | None = None, encoder=None,
                         options: LoadOptions | None = None, lease=None,
                         interrupted: str | None = None) -> tuple[LoadReport, list[str]]:
    """First load into an empty database through the importer; see the module doc.

    ``graph`` must point at an empty database (the writer lease's node is no data). ``lease``: the command's
    ``WriterLease``, taken again once the importer's new store (without it) is served. ``interrupted``: what
    ``BulkState.recover`` did, when the caller ran it already (before its lease: it may start the server). Returns (report, next steps): the next steps
    are empty when the load is complete, else the commands to run where the database lives."""
    from kgqa.core.graph import Graph
    from kgqa.core.neo4j_local import LocalNeo4j

    opts = options or LoadOptions()
    settings = graph.settings
    t_start = time.perf_counter()
    state = BulkState(settings)
    if interrupted is None:
        interrupted = state.recover()      # before the first query: it may start the stopped server
    if interrupted == IMPORTED:
        if state.data_path() == str(Path(path).resolve()):
            return _after_import(graph, path, images, encoder, opts, state, t_start), []
        state.clear()                      # another folder: this database is not empty, as said below
        interrupted = ""
    if interrupted == HANDED_OUT:
        folder, have = state.field("folder"), graph.read("bulk_entity_count")[0]["entities"]
        if state.data_path() == str(Path(path).resolve()) and (have or (folder and Path(folder).is_dir())):
            return _after_handed_out(graph, path, images, encoder, opts, state, t_start, have), []
        state.clear()        # CSVs of another folder, or removed before an import: written again below
        interrupted = ""
    # after an interrupted import the database holds what that importer wrote (or does not open at
    # all): it was empty before, and is imported over again
    n = 0 if interrupted else graph.read("bulk_node_count")[0]["nodes"]
    if n:
        raise InvalidInput(f"--bulk is for a first load into an empty database, and {settings.neo4j_uri} holds "
                           f"{n:,} node(s): load without --bulk (the incremental loader MERGEs), or empty the "
                           "database first")
    loader = BulkLoader(graph, path, images, encoder, opts)
    folder = Path(settings.data_dir) / "import" / f"wikidata5m-{time.strftime('%Y%m%dT%H%M%S')}"
    local = is_local_server(settings)
    state.begin(folder, resumed=interrupted)
    if interrupted:
        loader.report.warnings.append(f"an interrupted --bulk was cleaned up ({interrupted}); loading again")
    try:
        with Bars(opts.progress) as bars:
            try:        # nothing reaches the database before every file is checked
                counts = loader.validate_to_csv(folder, bars)
            except BaseException as e:
                shutil.rmtree(folder, ignore_errors=True)     # no half-written CSVs left behind
                full = no_space(e, folder, need_bytes=_csv_bytes_needed(loader), what="the importer's CSVs")
                try:
                    state.release()
                except OSError:
                    pass
                if full is not None:
                    raise full from None
                raise
            server = LocalNeo4j(settings)
            cmd = loader.import_command(folder, settings.java, settings.neo4j_jars)
            if local and not server.status().running:        # it answered before the CSVs: it died since
                shutil.rmtree(folder, ignore_errors=True)
                state.release()
                raise LocalServerError(f"the local Neo4j server ({settings.neo4j_uri}) stopped while the importer's "
                                       "CSVs were written: start it (`kgqa neo4j start`) and run the same "
                                       "command again")
            if not local:        # the same command, once the user has imported there, loads the rest
                state.update(owner=None, handed_out=True, path=str(Path(path).resolve()),
                             in_csv=loader.imported_columns(), entities=counts.get("entities", 0))
                steps = [
                    "the database is not the local kgqa server: run the importer where it lives, with the "
                    "database stopped (files under " + str(folder) + "):",
                    "neo4j-admin database import full " + " ".join(c for c in cmd[7:]),
                    f"then, with the database started: kgqa load wikidata5m --bulk --path {path} (the same "
                    "command: the schema, images and relation vectors, and the vector index built once)"]
                loader.report.seconds = time.perf_counter() - t_start
                return loader.report, steps
            st = loader.report.phase("neo4j-admin import")
            t0, kids0 = time.perf_counter(), _children_cpu_s()
            graph.close()
            t1, t2 = _run_importer(state, server, cmd, folder, bars,     # then a rerun resumes after the import
                                   imported=dict(imported=True, path=str(Path(path).resolve()), folder=None,
                                                 in_csv=loader.imported_columns()))
            st.seconds = time.perf_counter() - t0
            st.detail.update(server_stop_s=t1 - t0, importer_s=t2 - t1, server_start_s=st.seconds - (t2 - t0),
                             importer_cpu_s=round(_children_cpu_s() - kids0, 1))
            st.rows = sum(counts.values())
            loader.graph = Graph(settings)
            loader.graph.verify()
            if lease is not None:                          # the new store has no lease: this writer's again
                lease.retake()
            loader.created_entities = True                 # the importer created every entity
            _write_the_rest(loader, bars)
    finally:
        loader.rejects.close()
    return _done(loader, state, "neo4j-admin import", t_start, close=True), []


def _write_the_rest(loader, bars) -> None:
    """What the importer leaves to Bolt once the store holds the structure: schema (which starts the entity
    vector index's one build over the imported vectors), descriptions unless imported, images, finish
    (relation vectors, the index build awaited)."""
    loader.graph.store_need = loader.store_need(structure=False)     # the structure is in the store already
    loader.apply_schema()
    if not loader.csv_descriptions:
        loader.write_descriptions(bars)
    loader.write_images(bars)
    loader.finish(bars)


def _done(loader, state: BulkState, structure: str, t_start: float, close: bool = False) -> LoadReport:
    """A finished --bulk: its state file gone (nothing to resume), the report with how the structure came in;
    ``close``: the loader's own connection (opened after the import) closed once the counts are read."""
    state.clear()
    r = loader.summarize()
    r.modes = {"structure": structure}
    if close:
        loader.graph.close()
    r.seconds = time.perf_counter() - t_start
    return r
