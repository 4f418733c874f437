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

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

#: The password ``kgqa neo4j start`` gives the local server's ``neo4j`` user on
#: its first start. Documented in the README; local, loopback-only use.
LOCAL_PASSWORD = "kgqa-local"

REPO_ROOT = Path(__file__).resolve().parent.parent


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kgqa"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    # --- Neo4j connection -------------------------------------------------
    neo4j_uri: str = Field("bolt://127.0.0.1:7687", validation_alias=AliasChoices("NEO4J_URI", "neo4j_uri"))
    neo4j_username: str = Field("neo4j", validation_alias=AliasChoices("NEO4J_USERNAME", "neo4j_username"))
    neo4j_password: str = Field(LOCAL_PASSWORD, validation_alias=AliasChoices("NEO4J_PASSWORD", "neo4j_password"))
    neo4j_database: str = Field("neo4j", validation_alias=AliasChoices("NEO4J_DATABASE", "neo4j_database"))
    neo4j_timeout_s: float = Field(10.0, validation_alias=AliasChoices("KGQA_NEO4J_TIMEOUT_S", "neo4j_timeout_s"))

    # --- local server (kgqa neo4j start|stop|status) -----------------------
    data_dir: Path = Field(default_factory=_default_data_dir, validation_alias=AliasChoices("KGQA_DATA_DIR", "data_dir"))
    neo4j_bolt_port: int = Field(7687, validation_alias=AliasChoices("KGQA_NEO4J_BOLT_PORT", "neo4j_bolt_port"))
    neo4j_http_port: int = Field(7474, validation_alias=AliasChoices("KGQA_NEO4J_HTTP_PORT", "neo4j_http_port"))
    neo4j_heap: str = Field("1g", validation_alias=AliasChoices("KGQA_NEO4J_HEAP", "neo4j_heap"))
    neo4j_pagecache: str = Field("1g", validation_alias=AliasChoices("KGQA_NEO4J_PAGECACHE", "neo4j_pagecache"))
    neo4j_jars: Path = Field(
        REPO_ROOT / "neo4j-local" / "target" / "lib",
        validation_alias=AliasChoices("KGQA_NEO4J_JARS", "neo4j_jars"),
    )
    java: str = Field("java", validation_alias=AliasChoices("KGQA_JAVA", "java"))

    # --- compute ----------------------------------------------------------
    device: str = Field("cpu", validation_alias=AliasChoices("KGQA_DEVICE", "device"))
    torch_threads: int = Field(1, validation_alias=AliasChoices("KGQA_TORCH_THREADS", "torch_threads"))

    @property
    def neo4j_home(self) -> Path:
        return self.data_dir / "neo4j"
