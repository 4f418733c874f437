"""Model roles and their backends (docs/ARCHITECTURE.md, "Models").

``build_models(settings, graph)`` is the one place that picks a backend per role
from the settings; engines receive the ``Models`` it returns. Nothing loads a
model here: each backend loads on its first call (once per process).

role        settings field          "local"                              "openai" / "vllm"
encoder     (always in-process)     all-MiniLM-L6-v2                     —
chat        KGQA_CHAT_BACKEND       SmolLM2-135M-Instruct (LocalChat)    OpenAIChat     ("none": graph-only floor)
            KGQA_LOCAL_LLM_RUNTIME  llamacpp (default) | transformers
vision      KGQA_VISION_BACKEND     ReferenceImageGrounder (stand-in)    OpenAIVision
softprompt  KGQA_SOFTPROMPT_BACKEND SmolLM2 with inputs_embeds           vLLM --enable-prompt-embeds
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgqa.core.config import Settings
from kgqa.models.accounting import Meter, ReplayCache
from kgqa.models.base import ChatModel, Encoder, SoftPromptModel, VisionModel


class MeteredEncoder:
    """The encoder with every ``encode`` call counted under role ``encoder`` (strings as prompt tokens)."""

    def __init__(self, inner, meter: Meter):
        self.inner = inner
        self.meter = meter
        self.name = inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts, batch_size: int = 64):
        with self.meter.call("encoder") as rec:
            rec.prompt_tokens = len(texts)
            return self.inner.encode(texts, batch_size=batch_size)

    def encode_passages(self, texts, batch_size: int = 16, threads: int | None = None):
        with self.meter.call("encoder") as rec:
            rec.prompt_tokens = len(texts)
            inner = getattr(self.inner, "encode_passages", None)
            if inner is None:
                return self.inner.encode(texts, batch_size=batch_size)
            return inner(texts, batch_size=batch_size, threads=threads)

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)


@dataclass
class Models:
    encoder: Encoder
    chat: ChatModel
    vision: VisionModel
    softprompt: SoftPromptModel
    meter: Meter = field(default_factory=Meter)
    cache: ReplayCache | None = None


def _is_remote(backend: str) -> bool:
    return backend in ("openai", "vllm")


def build_models(settings: Settings, graph=None, meter: Meter | None = None) -> Models:
    """Backends for every role, chosen by the settings; lazy (nothing is loaded here)."""
    from kgqa.models.encoder import encoder_for

    meter = meter or Meter()
    cache = ReplayCache(settings.model_cache_dir) if settings.model_cache_dir else None
    encoder = MeteredEncoder(encoder_for(settings), meter)

    if settings.chat_backend == "none":
        from kgqa.models.null_chat import NullChat

        chat = NullChat()
    elif _is_remote(settings.chat_backend):
        from kgqa.models.openai_backend import OpenAIChat

        chat = OpenAIChat(settings, meter=meter, cache=cache)
    else:
        from kgqa.models.local_chat import LocalChat

        chat = LocalChat(settings, meter=meter, cache=cache)

    if _is_remote(settings.vision_backend):
        from kgqa.models.openai_backend import OpenAIVision

        vision = OpenAIVision(settings, meter=meter, cache=cache)
    else:
        from kgqa.models.grounder import ReferenceImageGrounder

        vision = ReferenceImageGrounder(settings, graph=graph, chat=chat, meter=meter)

    if _is_remote(settings.softprompt_backend):
        from kgqa.models.openai_backend import OpenAISoftPrompt

        softprompt = OpenAISoftPrompt(settings, meter=meter)
    else:
        from kgqa.models.softprompt_local import LocalSoftPrompt

        softprompt = LocalSoftPrompt(settings, meter=meter)
    return Models(encoder=encoder, chat=chat, vision=vision, softprompt=softprompt, meter=meter, cache=cache)


def chat_setting(settings: Settings) -> str:
    """One line naming the chat setting a run used (``kgqa eval`` prints it beside the figures)."""
    if settings.chat_backend == "none":
        from kgqa.models.null_chat import GRAPH_ONLY

        return GRAPH_ONLY
    if _is_remote(settings.chat_backend):
        return f"{settings.chat_backend} · {settings.chat_model} @ {settings.chat_base_url or settings.openai_base_url}"
    name = settings.local_llm_gguf.stem if settings.local_llm_gguf else "SmolLM2-135M-Instruct"
    return f"local · {name} · {settings.local_llm_runtime}"


__all__ = ["Models", "chat_setting", "build_models", "Meter", "ReplayCache", "MeteredEncoder"]
