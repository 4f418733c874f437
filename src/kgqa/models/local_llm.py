"""What the two in-process runtimes of the local chat LLM share: their set-up and the cached call.

``LocalChat`` (transformers, ``kgqa.models.local_chat``) and ``LlamaCppChat`` (llama.cpp,
``kgqa.models.llamacpp_chat``) run the same GGUF (SmolLM2-135M-Instruct, or
``KGQA_LOCAL_LLM_GGUF``). Both are built from the settings with a ``Meter``, an optional
``ReplayCache`` and the role they are counted under; both key the replay cache by
(backend, model name, kind + system + prompt, parameters), the backend naming the runtime.
"""

from __future__ import annotations

from pathlib import Path

from kgqa.core.config import Settings
from kgqa.models.accounting import Meter, ReplayCache, replayed_text_call


class LocalLLMChat:
    """The set-up and the replay-cached call of an in-process chat runtime (subclassed, not used alone)."""

    backend: str

    def __init__(self, settings: Settings, meter: Meter | None = None, cache: ReplayCache | None = None,
                 role: str = "chat"):
        self.settings = settings
        self.meter = meter or Meter()
        self.cache = cache
        self.role = role
        self.name = Path(settings.local_llm_gguf).stem if settings.local_llm_gguf else "SmolLM2-135M-Instruct"

    @staticmethod
    def _messages(prompt: str, system: str | None) -> list[dict]:
        """The chat turns of one call: the system prompt when there is one, then the user's prompt."""
        return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]

    def _cached(self, kind: str, prompt: str, system: str | None, params: dict, run):
        """Replay-cache wrapper around one metered call; ``run(rec)`` returns text."""
        prompt_key = {"kind": kind, "system": system, "prompt": prompt}
        return replayed_text_call(self.meter, self.role, self.cache,
                                  (self.backend, self.name, prompt_key, None, params), run)
