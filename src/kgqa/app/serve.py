"""``kgqa serve``: the HTTP API over the same pipeline as ``kgqa ask`` (FastAPI + uvicorn).

    kgqa serve [--host 127.0.0.1] [--port 8765] [--workers N] [--queue 32] [--timeout 600]
               [--max-upload-mb 10] [--replay-cache DIR]

    POST /ask          JSON {question, method?, options?, ablations?, entity_id?}, or multipart/form-data
                       with the same fields (options as a JSON object) and an ``image`` file;
                       returns the Answer JSON of ``kgqa ask --json`` (trace_id, browser_cypher)
    GET  /traces/{id}  a stored trace, as ``kgqa trace show ID --json``
    GET  /health       Neo4j (as ``kgqa doctor``), the model roles, the queue
    GET  /methods      as ``kgqa methods --json``
    GET  /openapi.json the OpenAPI document (``/docs`` renders it)

Each worker process builds the graph driver, the models and the shared KG access once, at
startup, and answers one question at a time in one inference thread (the local models are
CPU-bound and not all thread-safe; more throughput = more ``--workers``, each with its own
models). Requests wait in a bounded queue; when ``--queue`` questions are already queued or
running, a new one gets 503 with ``Retry-After`` at once, never a hung socket. A question
that has not finished after ``--timeout`` seconds gets 504 (its computation still holds its
queue slot until it ends: a Python thread cannot be killed, and the queue must not lie).

Connections are guarded by ``kgqa.app.serve_guard``: a request must arrive whole within
``--read-timeout`` seconds (408, closed), and a connection over ``--max-connections`` gets 503 with
``Retry-After``. Limits are checked before anything is decoded: the body's size (``Content-Length``, then
counted while reading: 413), the question's length (the pipeline's limit: 400), the method's
options (400), the image's size and pixel count from its header (``kgqa.core.images.load_image``:
400). Reasoning reads run in read transactions (``Graph.read``); the trace is the only write.

With ``KGQA_API_TOKEN`` set every request must carry ``Authorization: Bearer <token>``
(else 401). Errors are the CLI's one-line messages in a JSON body with a stable code:
``{"code": "bad_input", "message": "..."}`` — 400 bad_input, 401 unauthorized, 404 not_found,
413 too_large, 415 unsupported_media_type, 503 graph_unavailable / model_unavailable /
queue_full, 504 timeout, 500 trace / internal. Never a stack trace (the server log has it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
import secrets
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kgqa.app.serve_input import (AskRequest, ServeError, check_request, claim_upload_dir, hide_paths, parse_ask,
                                  save_upload)
from kgqa.core.errors import (MESSAGE_LIMIT, BadModelReply, GraphUnavailable, InvalidInput, KgqaError,
                              ModelUnavailable, cap, first_error)

log = logging.getLogger("kgqa.app.serve")

#: How many recent answers the drain rate (Retry-After) is measured over.
DRAIN_WINDOW = 32


def error_status(e: KgqaError) -> tuple[int, str]:
    """HTTP status and stable code of a kgqa error (the CLI's exit codes, as HTTP)."""
    from kgqa.core.trace import TraceError

    if isinstance(e, InvalidInput):
        return 400, "bad_input"
    if isinstance(e, GraphUnavailable):
        return 503, "graph_unavailable"
    if isinstance(e, (ModelUnavailable, BadModelReply)):
        return 503, "model_unavailable"
    if isinstance(e, TraceError):
        return 500, "trace"
    return 500, "error"


_HIDDEN_DIRS: list[tuple[str, str]] = []      # (server path, what a client sees instead)


def _error(status: int, code: str, message: str, headers: dict | None = None) -> JSONResponse:
    message = str(message)
    for path, name in _HIDDEN_DIRS:
        message = message.replace(path, name)
    return JSONResponse({"code": code, "message": cap(" ".join(message.split()), MESSAGE_LIMIT)},
                        status_code=status, headers=headers)


def slash_redirect(app: FastAPI, request: Request) -> str | None:
    """Where a path with a trailing slash that a route answers without it goes: a RELATIVE location
    (``/traces/abc/`` → ``/traces/abc``), never one built from the request's ``Host`` header, which the
    client chooses (Starlette's own redirect would send ``Host: evil.example`` to http://evil.example/…)."""
    from starlette.routing import Match

    path = request.scope.get("path", "")
    if len(path) < 2 or not path.endswith("/"):
        return None
    bare = path.rstrip("/")
    if not bare.startswith("/") or bare.startswith("//") or "\\" in bare:
        return None                               # "//host" would be a location on another host
    scope = {**request.scope, "path": bare}
    if not any(r.matches(scope)[0] != Match.NONE for r in app.router.routes):
        return None
    raw = (request.scope.get("raw_path") or path.encode()).decode("latin-1")
    if not raw.endswith("/"):
        return None                               # "/health%2F": an encoded slash is no trailing slash (a 307 to
    location = raw.rstrip("/")                    # itself would loop): 404
    if not location.startswith("/") or location.startswith("//"):
        return None
    query = request.scope.get("query_string") or b""
    return location + ("?" + query.decode("latin-1") if query else "")


# --------------------------------------------------------------------------- the service
class Service:
    """One worker's graph, models, KG cache, inference thread and bounded queue."""

    def __init__(self, settings):
        self.settings = settings
        self.queue_size = int(settings.serve_queue)
        self.timeout_s = float(settings.serve_timeout_s)
        self.max_upload = int(settings.serve_max_upload_mb * 1024 * 1024)
        self.graph = self.models = self.kg = None
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgqa-ask")
        self._lock = threading.Lock()
        self.inflight = 0          # queued + running
        self.answered = 0
        self.seconds = 0.0         # total inference seconds of the answered questions
        self.rejected = 0          # 503 queue_full
        self.recent: deque[float] = deque(maxlen=DRAIN_WINDOW)     # running seconds of recent questions
        self.uploads = Path(settings.data_dir) / "serve" / "uploads"     # start(): this worker's folder in it
        self._uploads_lock: int | None = None

    def start(self) -> None:
        from kgqa.app.runtime import open_runtime

        rt = open_runtime(self.settings)
        self.graph, self.models, self.kg = rt.graph, rt.models, rt.kg
        self.kg.embed(["warm-up"])  # the encoder loads now, not in the first request
        # a folder of this worker's own, held locked: what a killed worker left is removed at the next start
        self.uploads, self._uploads_lock = claim_upload_dir(self.uploads)

    def stop(self) -> None:
        import shutil

        self.executor.shutdown(wait=False, cancel_futures=True)
        if self.graph is not None:
            self.graph.close()
        if self._uploads_lock is not None:
            shutil.rmtree(self.uploads, ignore_errors=True)
            os.close(self._uploads_lock)
            self._uploads_lock = None

    # -- admission ------------------------------------------------------------
    def admit(self) -> None:
        with self._lock:
            if self.inflight >= self.queue_size:
                self.rejected += 1
                retry = self.retry_after()
                raise ServeError(503, "queue_full", f"{self.inflight} questions are queued or running "
                                 f"(queue {self.queue_size}); retry in about {retry} s",
                                 headers={"Retry-After": str(retry)})
            self.inflight += 1

    def retry_after(self) -> int:
        """Seconds until the queue has room again, from the measured drain rate. One inference thread
        takes the questions one after another, so the queue drains one question per inference time;
        a slot frees when the running question ends: the mean inference time of the last
        ``DRAIN_WINDOW`` questions that left (answered or failed; their running time, never their
        wait in the queue, which made a 10 s burst say 115-172 s), 10 s before any has ended."""
        ran = list(self.recent)
        per_slot = sum(ran) / len(ran) if ran else 10.0
        return max(1, min(600, math.ceil(per_slot)))

    def release(self, seconds: float | None, ran: float | None = None) -> None:
        """A question left the queue: ``seconds`` its inference time when answered, ``ran`` how long
        it ran in the inference thread (answered or not; None when it never started)."""
        with self._lock:
            self.inflight -= 1
            if ran is not None:
                self.recent.append(ran)
            if seconds is not None:
                self.answered += 1
                self.seconds += seconds

    # -- one question (in the inference thread) -------------------------------
    def answer(self, req: AskRequest, image: Path | None) -> dict:
        from kgqa.app.pipeline import Pipeline

        pipe = Pipeline(self.settings, req.method, graph=self.graph, models=self.models, kg=self.kg,
                        options=req.options, ablations=req.ablations)
        ans = pipe.answer(req.question, image=image, entity_id=req.entity_id, docs=req.docs or None,
                          docs_glob=req.docs_glob)
        out = json.loads(json.dumps(ans.as_dict(), ensure_ascii=False, default=str))
        for f in (out.get("details") or {}).get("figures") or []:
            if isinstance(f, dict) and f.get("sha256"):
                f["url"] = f"/images/{f['sha256']}"          # GET it (behind the same token)
        return out

    def stats(self) -> dict:
        with self._lock:
            return {"queued_or_running": self.inflight, "queue": self.queue_size, "answered": self.answered,
                    "rejected_queue_full": self.rejected, "timeout_s": self.timeout_s,
                    "mean_s": round(self.seconds / self.answered, 3) if self.answered else None}


# --------------------------------------------------------------------------- the app
def create_app(settings=None) -> FastAPI:
    """The FastAPI app (uvicorn calls this in each worker: ``kgqa.app.serve:create_app``, factory)."""
    import kgqa
    from kgqa.app import serve_guard
    from kgqa.core.config import Settings

    settings = settings or Settings()
    serve_guard.configure(settings.serve_read_timeout_s, settings.serve_max_connections,
                          settings.serve_header_timeout_s, settings.serve_max_connections_per_client)
    service = Service(settings)
    token = settings.api_token or None
    for d, name in ((service.uploads, "<uploads>"), (Path(settings.data_dir), "<data dir>")):
        for form in {str(d), str(Path(d).resolve())}:
            if (form, name) not in _HIDDEN_DIRS:
                _HIDDEN_DIRS.append((form, name))

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await asyncio.to_thread(service.start)
        try:
            yield
        finally:
            service.stop()

    # redirect_slashes off: Starlette builds that redirect's Location from the Host header (slash_redirect)
    app = FastAPI(title="kgqa", version=getattr(kgqa, "__version__", "0"), lifespan=lifespan, redirect_slashes=False,
                  description="Multimodal knowledge-graph question answering over Neo4j: the API of `kgqa serve`. "
                              "Answers carry a trace id and the Cypher line that draws their evidence in "
                              "Neo4j Browser.")
    app.state.service = service

    @app.middleware("http")
    async def bearer_token(request: Request, call_next):
        if token is not None:
            scheme, _, given = (request.headers.get("authorization") or "").partition(" ")
            if scheme.lower() != "bearer" or not secrets.compare_digest(given.strip().encode(), token.encode()):
                return _error(401, "unauthorized", "missing or wrong bearer token "
                              "(send Authorization: Bearer <KGQA_API_TOKEN>)", {"WWW-Authenticate": "Bearer"})
        try:
            return await call_next(request)
        except ServeError as e:
            return _error(e.status, e.code, str(e), e.headers)

    @app.exception_handler(ServeError)
    async def on_serve_error(request: Request, e: ServeError):
        return _error(e.status, e.code, str(e), e.headers)

    @app.exception_handler(KgqaError)
    async def on_kgqa_error(request: Request, e: KgqaError):
        status, code = error_status(e)
        return _error(status, code, str(e))

    @app.exception_handler(StarletteHTTPException)
    async def on_http_error(request: Request, e: StarletteHTTPException):
        if e.status_code == 404 and (location := slash_redirect(app, request)) is not None:
            return RedirectResponse(location, status_code=307)
        code = {404: "not_found", 405: "method_not_allowed"}.get(e.status_code, "http_error")
        return _error(e.status_code, code, f"{request.method} {request.url.path}: {e.detail}")

    @app.exception_handler(RequestValidationError)
    async def on_validation_error(request: Request, e: RequestValidationError):
        loc, msg = first_error(e, default_loc="request") if e.errors() else ("request", "invalid")
        return _error(400, "bad_input", f"{loc}: {msg}")

    @app.exception_handler(Exception)
    async def on_unexpected(request: Request, e: Exception):
        log.exception("kgqa serve: unexpected error on %s %s", request.method, request.url.path)
        return _error(500, "internal", f"internal error ({type(e).__name__}); the server log has the details")

    ask_body = AskRequest.model_json_schema()
    form_body = {"type": "object", "required": ["question"], "properties": {
        **{k: {"type": "string", "description": v.get("description", "")}
           for k, v in ask_body["properties"].items()},
        "options": {"type": "string", "description": "the method's options as a JSON object"},
        "ablations": {"type": "string", "description": "comma-separated ablations"},
        "image": {"type": "string", "format": "binary", "description": "JPEG, PNG or WebP (size and pixel limits)"}}}
    error_schema = {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}

    def err(desc):
        return {"description": desc, "content": {"application/json": {"schema": error_schema}}}

    @app.post("/ask", summary="Answer a question (optionally about an image) and store its trace",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": ask_body},
                  "multipart/form-data": {"schema": form_body}}}},
              responses={200: {"description": "the Answer, as `kgqa ask --json` (trace_id, browser_cypher)"},
                         400: err("bad input (question, options, entity id, image)"), 401: err("no or wrong token"),
                         413: err("body or image over the size limit"),
                         503: err("queue full (Retry-After), or Neo4j / a model unavailable"),
                         504: err("not answered within the timeout")})
    async def ask(request: Request):
        req, image_bytes = await parse_ask(request, service.max_upload)
        check_request(req)
        image = save_upload(service.uploads, service.max_upload, image_bytes) if image_bytes is not None else None
        try:
            service.admit()
        except ServeError:
            if image is not None:
                image.unlink(missing_ok=True)
            raise
        started: list[float] = []

        def timed(req, image):
            started.append(time.perf_counter())          # inference time, not the wait in the queue
            return service.answer(req, image)

        fut = service.executor.submit(timed, req, image)

        def done(f):
            ok = not f.cancelled() and f.exception() is None
            ran = time.perf_counter() - started[0] if started else None
            service.release(ran if ok else None, ran)
            if image is not None:
                image.unlink(missing_ok=True)

        fut.add_done_callback(done)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), timeout=service.timeout_s)
        except KgqaError as e:
            status, code = error_status(e)
            raise ServeError(status, code, hide_paths(str(e), image)) from None
        except asyncio.TimeoutError:
            raise ServeError(504, "timeout", f"not answered within {service.timeout_s:g} s "
                             "(KGQA_SERVE_TIMEOUT_S / --timeout)") from None

    @app.get("/traces/{trace_id}", summary="A stored reasoning trace (kgqa trace show ID --json)",
             responses={400: err("not a trace id"), 404: err("no such trace")})
    async def trace(trace_id: str):
        from kgqa.core.trace import check_trace_id, show_trace

        check_trace_id(trace_id)
        tr = await asyncio.to_thread(show_trace, service.graph, trace_id)
        if tr is None:
            raise ServeError(404, "not_found", f"trace {trace_id}: no such trace")
        return json.loads(json.dumps(tr, ensure_ascii=False, default=str))

    @app.get("/images/{sha256}", summary="An image the graph holds (an answer's figure), by sha256",
             responses={400: err("not a sha256"), 404: err("no such image")})
    async def image(sha256: str):
        from fastapi.responses import FileResponse

        if not re.fullmatch(r"[0-9a-f]{64}", sha256):
            raise ServeError(400, "bad_input", "image id: expected a sha256 (64 lowercase hex digits)")
        rows = await asyncio.to_thread(service.graph.read, "image_file", sha256=sha256)
        path = Path(rows[0]["path"]) if rows and rows[0].get("path") else None
        if path is None or not path.is_file():
            raise ServeError(404, "not_found", f"image {sha256}: no such image")
        return FileResponse(path, media_type=rows[0].get("mime") or "application/octet-stream")

    @app.get("/health", summary="Neo4j, the model roles and the queue (503 when Neo4j does not answer)")
    async def health():
        from kgqa.app.doctor import graph_checks
        from kgqa.models import chat_setting

        checks = [c.as_dict() for c in await asyncio.to_thread(graph_checks, settings)]
        s = settings
        roles = {"encoder": {"backend": "local", "model": s.encoder_model or "all-MiniLM-L6-v2", "device": s.device},
                 "chat": {"backend": s.chat_backend, "setting": chat_setting(s)},
                 "vision": {"backend": s.vision_backend,
                            "model": "reference-image grounder (a stand-in, not a VLM)"
                            if s.vision_backend == "local" else s.vision_model},
                 "softprompt": {"backend": s.softprompt_backend}}
        ok = all(c["ok"] for c in checks if c["required"])
        body = {"ok": ok, "checks": checks, "models": roles, "queue": service.stats(),
                "replay_cache": str(s.model_cache_dir) if s.model_cache_dir else None,
                "auth": token is not None}
        return JSONResponse(body, status_code=200 if ok else 503)

    @app.get("/methods", summary="The methods: paper, options (defaults), ablations (kgqa methods --json)")
    async def methods():
        from kgqa.app.pipeline import methods_json

        return methods_json()

    return app


# --------------------------------------------------------------------------- runner
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def run(settings, host: str = "127.0.0.1", port: int = 8765, workers: int = 1, log_level: str = "info") -> None:
    """Check Neo4j once (one line, exit 3, when it is not there), then serve with uvicorn.

    The workers build their own Settings from the environment: the CLI's flags reach them as
    the ``KGQA_SERVE_*`` / ``KGQA_MODEL_CACHE_DIR`` variables it sets before starting uvicorn."""
    import uvicorn

    from kgqa.core.graph import Graph

    if not 1 <= int(port) <= 65535:
        raise InvalidInput(f"--port {port}: must be 1-65535")
    if int(workers) < 1:
        raise InvalidInput(f"--workers {workers}: must be at least 1")
    with Graph(settings) as g:
        g.verify()
        from kgqa.models.encoder import encoder_for
        from kgqa.models.vector_space import check_space

        check_space(g, encoder_for(settings))   # the graph's vectors made by another encoder: one line, exit 2
    if host not in LOOPBACK and not settings.api_token:
        log.warning("kgqa serve: binding to %s without KGQA_API_TOKEN: anyone who can reach it can ask "
                    "and write traces", host)
    # the h11 protocol with a read deadline and a connection cap (kgqa.app.serve_guard)
    uvicorn.run("kgqa.app.serve:create_app", factory=True, host=host, port=int(port), workers=int(workers),
                log_level=log_level, timeout_graceful_shutdown=5, http="kgqa.app.serve_guard:GuardedH11Protocol")
