"""The graph-only setting: ``KGQA_CHAT_BACKEND=none``.

No text LLM on purpose. Every call raises ``BadModelReply`` with code ``graph_only``, so
every LLM step of a method takes its documented fallback. This is the floor every
CPU-stack accuracy figure is compared with: a method that scores below it on the same
questions is made worse by its small LLM, not better. Nothing is loaded; calls are
not counted (no model ran).
"""

from __future__ import annotations

from typing import Sequence, TypeVar

from pydantic import BaseModel

from kgqa.core.errors import BadModelReply

T = TypeVar("T", bound=BaseModel)

GRAPH_ONLY = "graph-only (KGQA_CHAT_BACKEND=none: every LLM step takes its fallback)"


class NullChat:
    """A ChatModel that never answers (the graph-only floor)."""

    name = "none"
    backend = "none"
    loaded = True

    def _refuse(self):
        raise BadModelReply("graph-only setting: no chat model (KGQA_CHAT_BACKEND=none)", code="graph_only")

    def generate(self, prompt: str, *, system: str | None = None, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        self._refuse()

    def generate_json(self, prompt: str, schema: type[T], *, system: str | None = None,
                      max_tokens: int = 256) -> T:
        self._refuse()

    def choose(self, prompt: str, options: Sequence[str], *, system: str | None = None,
               per_token: bool = False) -> list[float]:
        self._refuse()
