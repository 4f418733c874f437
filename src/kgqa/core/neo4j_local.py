"""The local Neo4j server used where there is no Docker engine.

It is the real Neo4j 5.26 LTS community server: the jars that Maven resolves in
``neo4j-local/`` (org.neo4j:neo4j and the Neo4j Browser jar), started with
``org.neo4j.server.CommunityEntryPoint`` - the same entry point the official
tarball runs. Bolt and HTTP (with Neo4j Browser at /browser/) bind to 127.0.0.1.

Layout under ``<data_dir>/neo4j`` (``KGQA_DATA_DIR``): ``conf/neo4j.conf``,
``data/``, ``logs/``, ``run/neo4j.pid``. On the first start the ``neo4j`` user's
password is set to ``NEO4J_PASSWORD`` (default: the documented local password)
with Neo4j's own ``neo4j-admin dbms set-initial-password`` command.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from kgqa.core.config import Settings, source_checkout
from kgqa.core.errors import LocalServerError

ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_TOOL = "org.neo4j.cli.AdminTool"


@dataclass
class ServerStatus:
    running: bool
    pid: int | None
    bolt: str
    http: str
    bolt_answers: bool
    home: str
    log: str

    def as_dict(self) -> dict:
        return asdict(self)


class LocalNeo4j:
    def __init__(self, settings: Settings):
        self.s = settings
        self.home = settings.neo4j_home
        self.conf_dir = self.home / "conf"
        self.pid_file = self.home / "run" / "neo4j.pid"
        self.console_log = self.home / "logs" / "console.log"

    # -- public ---------------------------------------------------------------
    def status(self) -> ServerStatus:
        pid = self._live_pid()
        return ServerStatus(
            running=pid is not None,
            pid=pid,
            bolt=f"bolt://127.0.0.1:{self.s.neo4j_bolt_port}",
            http=f"http://127.0.0.1:{self.s.neo4j_http_port}/browser/",
            bolt_answers=pid is not None and _port_answers(self.s.neo4j_bolt_port),
            home=str(self.home),
            log=str(self.console_log),
        )

    def start(self, wait_s: float = 120.0) -> tuple[ServerStatus, bool]:
        """Start the server and wait until Bolt answers; (status, started_now)."""
        if self._live_pid() is not None:
            self._wait_for_bolt(wait_s)
            return self.status(), False
        java = self._java()
        jars = self.ensure_jars()
        for port, what in ((self.s.neo4j_bolt_port, "Bolt"), (self.s.neo4j_http_port, "HTTP")):
            if not _port_free(port):
                raise LocalServerError(
                    f"port {port} on 127.0.0.1 ({what}) is taken by another process: stop it, or set "
                    f"KGQA_NEO4J_{what.upper()}_PORT to a free port"
                )
        for d in ("conf", "data", "logs", "run", "import", "plugins"):
            (self.home / d).mkdir(parents=True, exist_ok=True)
        self._write_conf()
        classpath = f"{jars}/*"
        env = {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)}
        if not (self.home / "data" / "dbms" / "auth.ini").exists() and not (self.home / "data" / "databases").exists():
            out = subprocess.run(
                [java, "-cp", classpath, ADMIN_TOOL, "dbms", "set-initial-password", self.s.neo4j_password],
                env=env, capture_output=True, text=True,
            )
            if out.returncode != 0:
                raise LocalServerError(f"neo4j-admin set-initial-password failed: {_last_line(out.stderr or out.stdout)}")
        with open(self.console_log, "ab") as log:
            proc = subprocess.Popen(
                [java, f"-Xmx{self.s.neo4j_heap}", "-XX:+UseG1GC", "-cp", classpath, ENTRY_POINT,
                 f"--home-dir={self.home}", f"--config-dir={self.conf_dir}"],
                env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, cwd=self.home,
            )
        self.pid_file.write_text(str(proc.pid))
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise LocalServerError(
                    f"Neo4j exited during start (code {proc.returncode}): {self._log_tail()} (log: {self.console_log})"
                )
            if _port_answers(self.s.neo4j_bolt_port) and self._http_ready():
                return self.status(), True
            time.sleep(0.5)
        raise LocalServerError(f"Neo4j did not answer on Bolt within {wait_s:.0f}s (log: {self.console_log})")

    def stop(self, wait_s: float = 60.0) -> bool:
        """Stop the server cleanly (SIGTERM, then SIGKILL after wait_s); False if it was not running."""
        pid = self._live_pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.2)
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return True

    def ensure_jars(self) -> Path:
        """The server's jar folder; resolve it with Maven when it is missing."""
        jars = self.s.neo4j_jars
        if any(jars.glob("neo4j-server-*.jar")):
            return jars
        root = source_checkout()
        pom = root / "neo4j-local" / "pom.xml" if root else jars / "pom.xml"
        mvn = shutil.which("mvn")
        if not pom.exists() or mvn is None:
            raise LocalServerError(
                f"Neo4j jars not found in {jars}: run `mvn -f neo4j-local/pom.xml package` "
                "(needs Maven) or set KGQA_NEO4J_JARS"
            )
        out = subprocess.run([mvn, "-q", "-B", "-f", str(pom), "package"], capture_output=True, text=True)
        if out.returncode != 0 or not any(jars.glob("neo4j-server-*.jar")):
            raise LocalServerError(f"Maven could not fetch the Neo4j jars: {_last_line(out.stdout + out.stderr)}")
        return jars

    # -- internals --------------------------------------------------------------
    def _java(self) -> str:
        java = shutil.which(self.s.java)
        if java is None and os.environ.get("JAVA_HOME"):
            cand = Path(os.environ["JAVA_HOME"]) / "bin" / "java"
            java = str(cand) if cand.exists() else None
        if java is None:
            raise LocalServerError(
                f"Java not found ({self.s.java!r} is not on PATH): install Java 17 "
                "(Debian: apt-get install openjdk-17-jre-headless) or set KGQA_JAVA / JAVA_HOME"
            )
        return java

    def _write_conf(self) -> None:
        h = self.home
        conf = f"""# written by `kgqa neo4j start`; edits are overwritten on the next start
server.default_listen_address=127.0.0.1
server.default_advertised_address=127.0.0.1
server.bolt.enabled=true
server.bolt.listen_address=127.0.0.1:{self.s.neo4j_bolt_port}
server.bolt.advertised_address=127.0.0.1:{self.s.neo4j_bolt_port}
server.http.enabled=true
server.http.listen_address=127.0.0.1:{self.s.neo4j_http_port}
server.http.advertised_address=127.0.0.1:{self.s.neo4j_http_port}
server.https.enabled=false
server.directories.data={h / 'data'}
server.directories.logs={h / 'logs'}
server.directories.run={h / 'run'}
server.directories.import={h / 'import'}
server.directories.plugins={h / 'plugins'}
server.memory.heap.initial_size={self.s.neo4j_heap}
server.memory.heap.max_size={self.s.neo4j_heap}
server.memory.pagecache.size={self.s.neo4j_pagecache}
dbms.security.auth_enabled=true
dbms.usage_report.enabled=false
db.tx_log.rotation.retention_policy=1 files
# a transaction half-appended when the disk filled up (never committed) is cut off by recovery on the next
# start, instead of the database refusing to start until someone repairs its log by hand
internal.dbms.tx_log.fail_on_corrupted_log_files=false
"""
        (self.conf_dir / "neo4j.conf").write_text(conf)

    def _live_pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        if not pid_alive(pid):
            return None
        try:  # the pid may have been reused by another program
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            if b"CommunityEntryPoint" not in cmdline:
                return None
        except OSError:
            pass
        return pid

    def _wait_for_bolt(self, wait_s: float) -> None:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if _port_answers(self.s.neo4j_bolt_port):
                return
            time.sleep(0.5)
        raise LocalServerError(f"Neo4j runs but Bolt does not answer on port {self.s.neo4j_bolt_port}")

    def _http_ready(self) -> bool:
        import urllib.request

        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.s.neo4j_http_port}/", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def _log_tail(self) -> str:
        try:
            lines = [l for l in self.console_log.read_text(errors="replace").splitlines() if l.strip()]
        except OSError:
            return "no log"
        lines = [t for t in ("".join(c if c.isprintable() else " " for c in l).strip() for l in lines) if t]
        errors = [l for l in lines if "ERROR" in l or "Exception" in l]
        return (errors or lines or ["no log"])[-1][:300]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child of ours counts as dead
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
        return state != "Z"
    except OSError:
        return True


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _port_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _last_line(text: str) -> str:
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1][:300] if lines else "no output"
