"""``kgqa serve``: the HTTP API (``kgqa.app.serve``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer

from kgqa.app.cli.common import app, env_settings


@app.command("serve")
def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind (loopback unless told otherwise)."),
    port: int = typer.Option(8765, "--port", help="Port to bind."),
    workers: int = typer.Option(1, "--workers", help="Worker processes; each loads the models once."),
    queue: Optional[int] = typer.Option(None, "--queue", help="Questions queued or running per worker before "
                                        "503 + Retry-After (KGQA_SERVE_QUEUE, default 32)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per question before 504 "
                                            "(KGQA_SERVE_TIMEOUT_S, default 600)."),
    max_upload_mb: Optional[float] = typer.Option(None, "--max-upload-mb", help="Largest request body / image "
                                                  "upload in MB (KGQA_SERVE_MAX_UPLOAD_MB, default 10)."),
    read_timeout: Optional[float] = typer.Option(None, "--read-timeout", help="Seconds for a request's line, "
                                                 "headers and body to arrive before 408 and the connection closes "
                                                 "(KGQA_SERVE_READ_TIMEOUT_S, default 30)."),
    max_connections: Optional[int] = typer.Option(None, "--max-connections", help="Open connections per worker; "
                                                  "one more takes the slot of an idle connection of a client "
                                                  "holding two more, else gets 503 + Retry-After, but GET /health is "
                                                  "still answered (KGQA_SERVE_MAX_CONNECTIONS, default 256)."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level."),
):
    """Serve the HTTP API: POST /ask, GET /traces/{id}, /health, /methods, /openapi.json (KGQA_API_TOKEN: bearer auth)."""
    env = {"KGQA_SERVE_QUEUE": queue, "KGQA_SERVE_TIMEOUT_S": timeout, "KGQA_SERVE_MAX_UPLOAD_MB": max_upload_mb,
           "KGQA_SERVE_READ_TIMEOUT_S": read_timeout, "KGQA_SERVE_MAX_CONNECTIONS": max_connections,
           "KGQA_MODEL_CACHE_DIR": str(replay_cache.resolve()) if replay_cache else None}
    for name, value in env.items():  # the uvicorn workers build their Settings from the environment
        if value is not None:
            os.environ[name] = str(value)
    s = env_settings()   # a bad --queue / --timeout / KGQA_SERVE_* value: one line naming the variable
    from kgqa.app.serve import run

    run(s, host=host, port=port, workers=workers, log_level=log_level)
