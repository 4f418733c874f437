"""``kgqa serve``'s request input: the ``POST /ask`` body, read, capped, decoded and validated.

Used by ``kgqa.app.serve``: the body's size is refused (413) before anything is decoded, JSON nesting
before it is parsed, the fields by ``AskRequest``, the question and the method's options as the
pipeline checks them, and an uploaded image from its header and then every pixel (400), all before the
question is queued. ``ServeError`` is the HTTP error with a stable code that these raise.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kgqa.core.errors import InvalidInput, cap, first_error


#: Room for the form fields of a multipart request beside the image itself.
FORM_OVERHEAD_BYTES = 64 * 1024
#: The deepest nesting of arrays/objects a request body may have (deeper: 400, never a RecursionError).
MAX_JSON_DEPTH = 32


class AskRequest(BaseModel):
    """The body of ``POST /ask`` (JSON), or the fields of its multipart form."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(..., description="the question (at most 2,000 characters)")
    method: str = Field("vispath", description="the method (GET /methods lists them)")
    options: dict[str, Any] = Field(default_factory=dict, description="the method's options, as `-o KEY=VALUE`")
    ablations: list[str] = Field(default_factory=list, description="the method's ablations to switch on")
    entity_id: str | None = Field(None, description="start entity id (skips grounding), e.g. Q90")
    docs: list[str] = Field(default_factory=list, description="retrieve only from these loaded documents (ids; "
                            "mkgrag), as `kgqa ask --doc`")
    docs_glob: str | None = Field(None, description="retrieve only from the loaded documents whose id, path or file "
                                  "name matches this pattern (mkgrag), as `kgqa ask --docs`")


class ServeError(Exception):
    """An HTTP error with a stable code and one line (``KgqaError``s are mapped by ``kgqa.app.serve.error_status``)."""

    def __init__(self, status: int, code: str, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.code, self.headers = status, code, headers or {}


# --------------------------------------------------------------------------- request parsing
async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to exceed ``limit`` bytes (before decoding)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            n = int(declared)
        except ValueError:
            raise ServeError(400, "bad_input", f"Content-Length {cap(declared, 40)!r} is not a number") from None
        if n > limit:
            raise ServeError(413, "too_large", f"request body is {n:,} bytes, over the {limit:,}-byte limit "
                             "(KGQA_SERVE_MAX_UPLOAD_MB / --max-upload-mb)")
    from starlette.requests import ClientDisconnect

    chunks, total = [], 0
    try:
        async for chunk in request.stream():
            total += len(chunk)
            if total > limit:
                raise ServeError(413, "too_large", f"request body is over the {limit:,}-byte limit "
                                 "(KGQA_SERVE_MAX_UPLOAD_MB / --max-upload-mb)")
            chunks.append(chunk)
    except ClientDisconnect:
        # gone before its body arrived whole (or closed at the read deadline, kgqa.app.serve_guard): no answer
        raise ServeError(408, "request_timeout", "the client went away before its request body arrived") from None
    return b"".join(chunks)


def json_depth_ok(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the brackets of a JSON text nest at most ``limit`` deep (strings skipped), counted
    without recursion, so that a deeply nested body is refused before it is decoded."""
    s = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    depth, in_str, esc = 0, False, False
    for ch in s:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def _json_value(text: str | bytes, where: str) -> Any:
    """``text`` decoded as JSON, or a 400 line: not JSON, or nested deeper than ``MAX_JSON_DEPTH``."""
    if not text.strip():
        return None
    if not json_depth_ok(text):
        raise ServeError(400, "bad_input", f"{where} nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text)
    except ValueError as e:       # not JSON, not UTF-8, or an integer of more digits than Python reads (4,300)
        raise ServeError(400, "bad_input", f"{where} is not valid JSON ({cap(getattr(e, 'msg', e), 120)})") from None
    except RecursionError:
        raise ServeError(400, "bad_input", f"{where} nests too deeply") from None


def _validation_line(e: ValidationError, where: str) -> str:
    loc, msg = first_error(e, default_loc=where)
    return f"{where} field {loc}: {msg}"


async def parse_ask(request: Request, max_upload: int) -> tuple[AskRequest, bytes | None]:
    """The request body as an ``AskRequest`` and the uploaded image's bytes (an image over ``max_upload``
    bytes is 413)."""
    ctype = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
    if ctype not in ("application/json", "multipart/form-data", ""):
        raise ServeError(415, "unsupported_media_type",
                         f"Content-Type {cap(ctype, 60)!r}: send application/json or multipart/form-data")
    body = await read_body(request, max_upload + FORM_OVERHEAD_BYTES)
    image: bytes | None = None
    if ctype == "multipart/form-data":
        from starlette.datastructures import UploadFile

        request._body = body  # Starlette parses the form from the body already read (and capped)
        try:
            form = await request.form(max_files=1, max_fields=16)
        except Exception as e:  # malformed multipart: python-multipart's errors vary
            raise ServeError(400, "bad_input", f"multipart body cannot be parsed: {cap(e, 200)}") from None
        fields: dict[str, Any] = {}
        for key, value in form.multi_items():
            if isinstance(value, UploadFile):
                if key != "image":
                    raise ServeError(400, "bad_input", f"form file field {cap(key, 40)!r}: only 'image' is a file")
                image = await value.read()
                if len(image) > max_upload:
                    raise ServeError(413, "too_large", f"image is {len(image):,} bytes, over the "
                                     f"{max_upload:,}-byte limit")
            elif key == "options":
                fields["options"] = _json_value(value, "form field options") if value.strip() else {}
            elif key in ("ablations", "docs"):
                fields[key] = [a.strip() for a in value.split(",") if a.strip()]
            else:
                fields[key] = value
        data: Any = fields
        where = "form"
    else:
        data = _json_value(body, "request body")
        if not isinstance(data, dict):
            raise ServeError(400, "bad_input", "request body must be a JSON object {question, method?, options?, "
                                               "ablations?, entity_id?, docs?, docs_glob?}")
        where = "body"
    try:
        req = AskRequest.model_validate(data)
    except ValidationError as e:
        raise ServeError(400, "bad_input", _validation_line(e, where)) from None
    return req, image


def check_request(req: AskRequest) -> None:
    """Everything checkable without the graph, before the question is queued (400 on the first problem): the
    question through the input gate (``req.question`` becomes the validated ``Question``), the ids and patterns,
    and the options a client may set (``core/method.client_options``: how to answer, never which files or
    models the server loads — those are the server's settings)."""
    from kgqa.app.pipeline import method_options
    from kgqa.core.inputs import check_question, check_text
    from kgqa.core.method import client_options
    from kgqa.core.scope import check_scope
    from kgqa.methods.registry import get_method

    req.question = check_question(req.question)
    if req.entity_id is not None:
        check_text(req.entity_id, "entity_id")
    check_scope(req.docs, req.docs_glob)
    cls = get_method(check_text(req.method, "method", 100))
    allowed = client_options(cls)
    refused = sorted(k for k in req.options if k in cls.Options.model_fields and k not in allowed)
    if refused:
        raise ServeError(400, "bad_input", f"{cls.name} option(s) {', '.join(refused)}: the server's setting, not a "
                         f"client's (a client may set: {', '.join(allowed)})")
    method_options(cls, req.options, req.ablations)


def claim_upload_dir(root: Path) -> tuple[Path, int]:
    """This worker's own upload folder under ``root`` (``<data dir>/serve/uploads``), and the descriptor of the
    lock it holds on it for its whole life. Folders whose lock nobody holds any more (a worker killed with -9, a
    crash: its uploads never removed) are deleted first, as are loose files an older version left in ``root``;
    another live worker's folder is left alone."""
    import fcntl
    import shutil

    import time

    root.mkdir(parents=True, exist_ok=True)
    for d in root.iterdir():
        if d.is_dir() and not d.is_symlink():
            try:
                fd = os.open(d / ".lock", os.O_RDWR)
            except FileNotFoundError:             # a worker creating its folder now, or one that died doing so
                if time.time() - d.stat().st_mtime > 60:
                    shutil.rmtree(d, ignore_errors=True)
                continue
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)                   # held: a live worker's
                continue
            shutil.rmtree(d, ignore_errors=True)
            os.close(fd)
        elif d.name.startswith("upload-"):
            d.unlink(missing_ok=True)
    mine = Path(tempfile.mkdtemp(prefix=f"worker-{os.getpid()}-", dir=root))
    fd = os.open(mine / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return mine, fd


def save_upload(uploads: Path, max_upload: int, data: bytes) -> Path:
    """The uploaded image as a file in ``uploads`` the pipeline can read, validated (size up to ``max_upload``
    bytes, pixels, format) from its header."""
    from kgqa.core.images import load_image

    fd, name = tempfile.mkstemp(prefix="upload-", suffix=".img", dir=uploads)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    path = Path(name)
    try:
        img = load_image(path, max_bytes=max_upload)   # header: format, size, pixels
        _decode_fully(img.data)                                 # then every pixel: truncated → 400 here
    except InvalidInput as e:
        path.unlink(missing_ok=True)
        raise InvalidInput("image upload: " + hide_paths(str(e).removeprefix(f"{path}: "), path)) from None
    return path


def _decode_fully(data: bytes) -> None:
    """Decode every pixel (the pixel limit was checked from the header first): a truncated or
    corrupt file is refused here, before it is queued, not inside the pipeline."""
    import io

    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as im:
            im.load()
    except Exception as e:
        raise InvalidInput(f"truncated or corrupt image ({type(e).__name__})") from None


def hide_paths(message: str, *paths: Path | str | None) -> str:
    """``message`` with the server's own paths (the upload's temporary file, the data dir) replaced by
    what they are, so that no error body tells a client where the server keeps its files."""
    for p, name in ((x, "the uploaded image") for x in paths if x):
        message = message.replace(str(p), name)
    return message
