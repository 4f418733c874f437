"""The four model roles as small Protocols (docs/ARCHITECTURE.md, "Models").

Backends live beside this file; engines receive instances through their
constructors and never read settings or load models themselves.

Role            production (GPU host)                  CPU-only machine
Encoder         all-MiniLM-L6-v2 (sentence-transformers, in-process everywhere)
ChatModel       vLLM OpenAI-compatible API              SmolLM2-135M-Instruct (GGUF → transformers)
VisionModel     vLLM serving Qwen2.5-VL                  ReferenceImageGrounder (a stand-in, not a VLM)
SoftPromptModel vLLM --enable-prompt-embeds              SmolLM2 in-process with inputs_embeds
"""

from __future__ import annotations

from typing import Protocol, Sequence, TypeVar, runtime_checkable

from pydantic import BaseModel

from kgqa.core.images import ImageInput

T = TypeVar("T", bound=BaseModel)


@runtime_checkable
class Encoder(Protocol):
    """SBERT: texts → L2-normalised float32 vectors of shape (n, dim)."""

    dim: int

    def encode(self, texts: Sequence[str], batch_size: int = 64):  # -> np.ndarray
        ...


@runtime_checkable
class ChatModel(Protocol):
    """A text LLM. Every JSON-returning call names a pydantic schema."""

    name: str

    def generate(self, prompt: str, *, system: str | None = None, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        ...

    def generate_json(self, prompt: str, schema: type[T], *, system: str | None = None,
                      max_tokens: int = 256) -> T:
        """Structured output validated against ``schema``; raises ModelUnavailable
        after bounded retries so that the caller takes its documented fallback."""
        ...

    def choose(self, prompt: str, options: Sequence[str], *, per_token: bool = False) -> list[float]:
        """Log-likelihood score of each option as the continuation of ``prompt``
        (``per_token``: divided by the option's token count)."""
        ...


@runtime_checkable
class VisionModel(Protocol):
    """A vision-language model: an image plus text in, text or JSON out."""

    name: str

    def recognize(self, image: ImageInput, hint: str) -> str:
        """Eq. 1 of VisPath: name the object ``hint`` (a head noun) refers to in the image."""
        ...

    def generate_json(self, image: ImageInput | None, prompt: str, schema: type[T], *,
                      system: str | None = None, max_tokens: int = 256) -> T:
        ...


@runtime_checkable
class SoftPromptModel(Protocol):
    """A small LLM that takes soft-prompt vectors before the text prompt (GraSP)."""

    name: str
    hidden_size: int

    def generate(self, soft_prompt, prompt: str, *, max_tokens: int = 64) -> str:
        """``soft_prompt``: a float tensor (n_tokens, hidden_size) placed before the prompt."""
        ...
