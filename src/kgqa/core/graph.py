"""Neo4j access: run a named query from ``cypher/`` in a read or write transaction.

Nothing else in kgqa builds Cypher strings. Values travel as parameters. Writes
pass relationship types as values too (Neo4j 5.26's dynamic types in CREATE/MERGE,
``-[:$(row.type)]->``, see cypher/load_facts.cypher) after ``relation_type`` and the
relation catalogue have validated them. MATCH patterns in 5.26 cannot take a dynamic
type, so ``write_typed`` splices one (used by the naive baseline in bench/load.py), and only an id that
``relation_type`` has validated against ``^P[0-9]+$``.
"""

from __future__ import annotations

import re
from typing import Any

from kgqa import cypher
from kgqa.core.ids import PID
from kgqa.core.config import Settings, check_neo4j_uri
from kgqa.core.errors import GraphUnavailable, InvalidInput, NoSpace, cap, cap_repr, space_needed

_RELATION_ID = PID


def relation_type(pid: str) -> str:
    """A Wikidata property id, validated for use as a relationship type."""
    if not isinstance(pid, str) or not _RELATION_ID.match(pid):
        raise InvalidInput(f"relation id {pid!r} is not a Wikidata property id (P followed by digits)")
    return pid


class Graph:
    """One driver per process; queries by name.

    >>> g = Graph(Settings()); g.read("server_info")
    """

    def __init__(self, settings: Settings):
        self.settings = settings
        self._driver = None
        #: (bytes, how estimated) that the write under way adds to the server's store, set by a loader that
        #: can estimate it: the "about N MB needed" of a full store's line (else it says the need is unknown)
        self.store_need: tuple[int, str] | None = None

    # -- connection ---------------------------------------------------------
    @property
    def driver(self):
        if self._driver is None:
            import logging

            import neo4j

            uri = check_neo4j_uri(self.settings.neo4j_uri)  # one line, exit 3, for a malformed URI
            # The driver logs a WARNING per retry (~30 s of them when Neo4j dies mid-load) and an
            # ERROR per defunct connection before the one line kgqa prints for the same failure;
            # quiet it unless the application configured neo4j's logger itself.
            log = logging.getLogger("neo4j")
            if log.level == logging.NOTSET:
                log.setLevel(logging.CRITICAL)
            try:
                self._driver = neo4j.GraphDatabase.driver(
                    uri,
                    auth=(self.settings.neo4j_username, self.settings.neo4j_password),
                    connection_timeout=self.settings.neo4j_timeout_s,
                    # a transaction that keeps failing (a dead server) gives up after this long
                    max_transaction_retry_time=self.settings.neo4j_timeout_s,
                    notifications_min_severity="OFF",
                )
            except (ValueError, neo4j.exceptions.ConfigurationError) as e:  # malformed URI
                raise GraphUnavailable(f"NEO4J_URI {cap_repr(self.settings.neo4j_uri, 100)} is not a Neo4j URI: "
                                       f"{cap(e, 200)}") from e
            # Fail fast with one line: otherwise the driver retries an unreachable
            # server for 30 s, logging a warning each time.
            try:
                self._guard(self._driver.verify_connectivity)
            except GraphUnavailable:
                self._driver.close()
                self._driver = None
                raise
        return self._driver

    def close(self) -> None:
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    def __enter__(self) -> "Graph":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def verify(self) -> None:
        """Raise GraphUnavailable with one clear line unless Neo4j answers."""
        self.driver  # connecting verifies

    # -- queries ------------------------------------------------------------
    def read(self, name: str, params: dict[str, Any] | None = None, **kw: Any) -> list[dict]:
        """Run ``cypher/<name>.cypher`` in a read transaction; rows as dicts."""
        return self._execute(name, {**(params or {}), **kw}, write=False)

    def write(self, name: str, params: dict[str, Any] | None = None, **kw: Any) -> list[dict]:
        """Run ``cypher/<name>.cypher`` in a write transaction; rows as dicts."""
        return self._execute(name, {**(params or {}), **kw}, write=True)

    def write_typed(self, name: str, rel_type: str, params: dict[str, Any]) -> list[dict]:
        """Run a query whose text holds the placeholder ``$$TYPE$$`` for a relationship type.

        Only a validated Wikidata property id is ever substituted (``relation_type``).
        """
        query = cypher.load(name).replace("$$TYPE$$", relation_type(rel_type))
        return self._run(query, params, write=True)

    def run_text(self, query: str, params: dict[str, Any] | None = None, *, write: bool = False) -> list[dict]:
        """Run a query text that code outside the package keeps in its own ``.cypher`` file (``bench/cypher``);
        kgqa's own queries go through ``read``/``write`` by name. Values only as ``$params``."""
        return self._run(query, params or {}, write=write)

    def apply_schema(self) -> int:
        """Apply ``cypher/schema.cypher`` (idempotent, also after Neo4j was killed while it ran: a constraint's
        index left without its constraint is dropped first, and created again with it); returns statements run."""
        import re

        stmts = cypher.statements("schema")
        names = [m.group(1) for m in (re.match(r"\s*CREATE CONSTRAINT (\w+)", s) for s in stmts) if m]
        for row in self.read("schema_orphan_indexes", names=names):
            self.write("schema_drop_index", {"name": row["name"]})
        for stmt in stmts:
            self._run(stmt, {}, write=True)
        return len(stmts)

    def await_indexes(self, timeout_s: float = 300) -> None:
        """Block until every index is ONLINE (raise GraphUnavailable naming a FAILED one, or on timeout)."""
        self._raise_failed()        # db.awaitIndexes would answer a FAILED index with Lucene's stack trace
        self._guard(lambda: self.driver.execute_query(
            "CALL db.awaitIndexes($t)", {"t": int(timeout_s)}, database_=self.settings.neo4j_database))
        self._raise_failed()

    def failed_indexes(self) -> list[str]:
        """Names of the indexes in state FAILED."""
        return [r["name"] for r in self.read("schema_indexes") if r["state"] == "FAILED"]

    def _raise_failed(self) -> None:
        failed = self.failed_indexes()
        if failed:
            raise GraphUnavailable(f"Neo4j index(es) FAILED: {', '.join(failed)}: run `kgqa neo4j init` to rebuild")

    def rebuild_failed_indexes(self) -> tuple[list[str], int]:
        """Drop every FAILED index and create it again from ``cypher/schema.cypher``; returns (the
        rebuilt names, entities whose over-long label keys were dropped first). A FAILED
        ``entity_label_keys`` comes from a key over Lucene's term limit (written before the loaders
        had byte limits): such keys are dropped from the entities, or the rebuild would fail again."""
        from kgqa.core.kg import MAX_LABEL_KEY_BYTES

        failed = self.failed_indexes()
        fixed = 0
        if "entity_label_keys" in failed:
            rows = self.read("schema_long_label_keys", max_chars=MAX_LABEL_KEY_BYTES // 4)
            fix = [{"id": r["id"], "label_keys": [k for k in r["label_keys"]
                                                  if len(k.encode("utf-8")) <= MAX_LABEL_KEY_BYTES]}
                   for r in rows]
            fix = [f for f, r in zip(fix, rows) if len(f["label_keys"]) != len(r["label_keys"])]
            if fix:
                self.write("load_label_keys", rows=fix)
            fixed = len(fix)
        for name in failed:
            self.write("schema_drop_index", {"name": name})
        if failed:
            self.apply_schema()
        return failed, fixed

    def session(self, write: bool = True):
        """A raw session for batched loaders that manage their own transactions."""
        import neo4j

        return self.driver.session(
            database=self.settings.neo4j_database,
            default_access_mode=neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS,
        )

    # -- internals ------------------------------------------------------------
    def _execute(self, name: str, params: dict[str, Any], write: bool) -> list[dict]:
        return self._run(cypher.load(name), params, write=write)

    def _run(self, query: str, params: dict[str, Any], write: bool) -> list[dict]:
        import neo4j

        def go():
            records, _, _ = self.driver.execute_query(
                query,
                params,
                database_=self.settings.neo4j_database,
                routing_=neo4j.RoutingControl.WRITE if write else neo4j.RoutingControl.READ,
            )
            return [r.data() for r in records]

        return self._guard(go)

    def _guard(self, fn):
        """Turn driver failures into GraphUnavailable with one clear line (exit 3): every error the
        driver or the server can give at connect/auth time, a panicked or unavailable database, a
        refused write. Only a query kgqa got wrong (syntax, types) still raises as it is."""
        from neo4j import exceptions as nx

        uri = self.settings.neo4j_uri
        try:
            return fn()
        except nx.AuthError as e:
            raise GraphUnavailable(
                f"Neo4j at {uri} refused user {self.settings.neo4j_username!r}: wrong password? "
                "(set NEO4J_PASSWORD; the local server's is documented in the README)"
            ) from e
        except (nx.ServiceUnavailable, nx.SessionExpired, OSError) as e:
            raise GraphUnavailable(
                f"Neo4j is not reachable at {uri} (start it with `kgqa neo4j start`, or set NEO4J_URI)"
            ) from e
        except ValueError as e:  # the driver resolves host:port only when it connects
            raise GraphUnavailable(f"NEO4J_URI {cap_repr(uri, 100)}: cannot resolve the address ({cap(e, 200)})") from e
        except nx.ConstraintError as e:
            raise GraphUnavailable(f"Neo4j at {uri} refused a write: {cap(e.message, 300)} "
                                   "(another load writing the same ids at the same time?)") from e
        except (nx.CypherSyntaxError, nx.CypherTypeError):
            raise                                  # a bug in kgqa's own query: the traceback is for us
        except nx.Neo4jError as e:
            if e.code == "Neo.ClientError.Statement.AccessMode":
                raise                              # a write in a read transaction: kgqa's own bug, as above
            full = self._store_full(e)
            if full is not None:
                raise full from e
            raise GraphUnavailable(self._server_error_line(e)) from e
        except nx.DriverError as e:                # e.g. a pool timeout, a bad auth configuration
            raise GraphUnavailable(f"Neo4j at {uri}: {type(e).__name__}: {cap(one_line(str(e)), 300)}") from e

    def _store_full(self, e) -> NoSpace | None:
        """A NoSpace line (exit 5) when the server could not write its transaction log or store: its disk is
        full. For the local server (``kgqa neo4j``) it names the store's folder and what is free there."""
        import shutil
        from urllib.parse import urlparse

        text = f"{e.code or ''} {e.message or e}"
        if "Could not append transaction" not in text and "No space left on device" not in text:
            return None
        need = space_needed(*(self.store_need or (None, "")))
        u = urlparse(self.settings.neo4j_uri)
        if u.hostname in ("127.0.0.1", "localhost") and (u.port or 7687) == self.settings.neo4j_bolt_port:
            store = probe = self.settings.neo4j_home / "data"
            while not probe.exists() and probe != probe.parent:
                probe = probe.parent
            try:
                room = f"{shutil.disk_usage(probe).free / 1e6:,.1f} MB free there"
            except OSError:
                room = "its free space unknown"
            return NoSpace(f"Neo4j could not write its transaction log: no space left under its store {store} "
                           f"({room}, {need}); free space there, restart the server (`kgqa neo4j stop`, "
                           "`kgqa neo4j start`) and run the same command again")
        return NoSpace(f"Neo4j at {self.settings.neo4j_uri} could not write its transaction log (is the disk under "
                       f"its store full? {need}): free space there, restart it and run the same command again")

    def _server_error_line(self, e) -> str:
        """One line for an error the server returned: what happened and what to do."""
        uri, code = self.settings.neo4j_uri, e.code or ""
        message = one_line(e.message or str(e))
        if code.endswith("Security.AuthenticationRateLimit"):
            return (f"Neo4j at {uri} locked user {self.settings.neo4j_username!r} out after repeated wrong passwords "
                    "(AuthenticationRateLimit): wait a few seconds (the server's dbms.security.auth_lock_time, "
                    "5 s by default), then retry with the right NEO4J_PASSWORD")
        if code.startswith("Neo.ClientError.Security."):
            return f"Neo4j at {uri} refused user {self.settings.neo4j_username!r}: {code.rsplit('.', 1)[-1]}: {cap(message, 200)}"
        if "DatabaseNotFound" in code:
            return f"Neo4j at {uri} has no database {self.settings.neo4j_database!r} (set NEO4J_DATABASE)"
        if is_panic(e):
            return (f"Neo4j at {uri}: database {self.settings.neo4j_database!r} is down after a critical error "
                    "(database panic; see its debug.log): restart it (`kgqa neo4j stop`, `kgqa neo4j start`), "
                    "then run `kgqa neo4j init`")
        if "DatabaseUnavailable" in code:
            return (f"Neo4j at {uri}: database {self.settings.neo4j_database!r} is unavailable (stopped, starting "
                    "or failed to recover; see its debug.log): restart the server, then run `kgqa neo4j init`")
        return f"Neo4j at {uri} failed the query: {cap(message, 300)}"   # e.g. "Property value is too large to index"


def one_line(text: str) -> str:
    """A server message on one line (Neo4j's include stack traces and banners)."""
    return " ".join(text.split())


def is_panic(e) -> bool:
    """Whether a Neo4j error says the database panicked (it answers nothing until restarted)."""
    text = f"{getattr(e, 'code', '') or ''} {getattr(e, 'message', '') or e}"
    return "critical error, and needs to be restarted" in text or "DatabasePanic" in text \
        or "Could not apply the transaction" in text
