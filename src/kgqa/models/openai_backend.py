"""Chat, vision and soft-prompt models over an OpenAI-compatible server (vLLM).

- ``OpenAIChat``: ``/v1/chat/completions``; JSON through structured outputs,
  ``response_format={"type": "json_schema", "json_schema": {name, schema, strict}}``,
  validated again with pydantic and retried (bounded). ``choose`` scores options
  with ``/v1/completions`` (``echo=True, logprobs=0``: the log-probabilities of
  the prompt's own tokens, as vLLM returns them in the legacy format).
- ``OpenAIVision``: the same endpoint with the image as a ``data:`` URL content
  part (vLLM serving Qwen2.5-VL).
- ``OpenAISoftPrompt``: ``/v1/completions`` on a server started with
  ``--enable-prompt-embeds``: ``prompt=""`` (the client does not accept None)
  and ``extra_body={"prompt_embeds": base64(torch.save(tensor))}``. The
  completions API applies no chat template, so the caller's embeddings cover
  the whole prompt: soft prompt first, then the embedded templated text, which
  needs the served model's tokenizer and input embeddings (``embedder``).

Faults — server down, timeout, HTTP 4xx/5xx, an unusable reply — raise
``ModelUnavailable`` with one line naming the role, URL and cause.
"""

from __future__ import annotations

import base64
import io
from typing import Callable, Sequence, TypeVar

from pydantic import BaseModel

from kgqa.core.config import Settings
from kgqa.core.errors import ModelUnavailable
from kgqa.models.accounting import Meter, ReplayCache, replayed_text_call
from kgqa.core.images import ImageInput
from kgqa.models.structured import with_retries

T = TypeVar("T", bound=BaseModel)

#: VisPath Eq. 1 for a real VLM: name the object the head noun refers to.
RECOGNIZE_PROMPT = ("Look at the image. What is the specific {hint} shown? Reply with its name only "
                    "(a proper name if it has one), no other words.")

#: the plain-text frame ``choose`` scores options in (the completions API applies no chat template)
CHOOSE_FRAME = "{prompt}\nAnswer: "


def _one_line(s: str, limit: int = 200) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _client(base_url: str, settings: Settings):
    try:
        from openai import OpenAI
    except ImportError as e:
        raise ModelUnavailable("the openai backend needs the openai package: pip install 'kgqa[openai]'") from e
    return OpenAI(base_url=base_url, api_key=settings.openai_api_key, timeout=settings.model_timeout_s,
                  max_retries=0)


def _call(role: str, base_url: str, fn: Callable):
    """Run one API call; every failure becomes ModelUnavailable with one line."""
    import openai

    try:
        return fn()
    except openai.APITimeoutError as e:
        raise ModelUnavailable(f"{role} backend {base_url}: timed out") from e
    except openai.APIConnectionError as e:
        raise ModelUnavailable(f"{role} backend {base_url}: cannot connect (is the server running?)") from e
    except openai.APIStatusError as e:
        msg = e.message
        try:
            body = e.response.json()
            err = body.get("error")
            msg = (body.get("message") or (err.get("message") if isinstance(err, dict) else err)
                   or body.get("detail") or msg)  # vLLM: message / error.message; FastAPI servers: detail
        except (ValueError, AttributeError):
            pass
        raise ModelUnavailable(f"{role} backend {base_url}: HTTP {e.status_code}: {_one_line(msg)}") from e
    except openai.OpenAIError as e:
        raise ModelUnavailable(f"{role} backend {base_url}: {_one_line(e)}") from e


def _usage(rec, resp) -> None:
    u = getattr(resp, "usage", None)
    if u is not None:
        rec.prompt_tokens = int(getattr(u, "prompt_tokens", 0) or 0)
        rec.completion_tokens = int(getattr(u, "completion_tokens", 0) or 0)


def _message_text(role: str, base_url: str, resp) -> str:
    try:
        text = resp.choices[0].message.content
    except (AttributeError, IndexError, TypeError) as e:
        raise ModelUnavailable(f"{role} backend {base_url}: reply has no choices[0].message") from e
    return text or ""


def response_format(schema: type[BaseModel]) -> dict:
    """OpenAI structured-outputs ``response_format`` for a pydantic schema (vLLM honours it)."""
    return {"type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": True}}


class _Served:
    """One role on an OpenAI-compatible server: ``<role>_base_url`` (else ``openai_base_url``) and
    ``<role>_model`` from the settings, the client made on first use."""

    role: str
    backend = "openai"

    def __init__(self, settings: Settings, meter: Meter | None = None):
        self.settings = settings
        self.base_url = getattr(settings, f"{self.role}_base_url") or settings.openai_base_url
        self.name = getattr(settings, f"{self.role}_model")
        self.meter = meter or Meter()
        self._client = None

    @property
    def client(self):
        if self._client is None:
            self._client = _client(self.base_url, self.settings)
        return self._client

    def ping(self) -> list[str]:
        """The model ids the server serves (``GET /v1/models``)."""
        resp = _call(self.role, self.base_url, lambda: self.client.models.list())
        return [m.id for m in resp.data]


class _Chatting(_Served):
    """Chat-completions plumbing shared by the chat and vision roles."""

    role = "chat"

    def __init__(self, settings: Settings, meter: Meter | None = None, cache: ReplayCache | None = None):
        super().__init__(settings, meter)
        self.cache = cache

    def _complete(self, messages: list[dict], *, image_sha256: str | None = None, **params) -> str:
        """One chat completion (through the replay cache); returns the message text."""
        def run(rec):
            resp = _call(self.role, self.base_url,
                         lambda: self.client.chat.completions.create(model=self.name, messages=messages, **params))
            _usage(rec, resp)
            return _message_text(self.role, self.base_url, resp)

        return replayed_text_call(self.meter, self.role, self.cache,
                                  (self.backend, self.name, messages, image_sha256, params), run)

    def _json(self, messages: list[dict], schema: type[T], max_tokens: int, image_sha256: str | None = None) -> T:
        def attempt(i: int) -> str:
            # first try greedy; retries sample (a greedy retry would repeat the same reply)
            return self._complete(messages, image_sha256=image_sha256, max_tokens=max_tokens,
                                  temperature=0.0 if i == 0 else 0.7, seed=i,
                                  response_format=response_format(schema))

        return with_retries(attempt, schema, retries=self.settings.json_retries,
                            who=f"{self.role} backend {self.base_url} ({self.name})")


def _messages(prompt: str, system: str | None, image: ImageInput | None = None) -> list[dict]:
    msgs: list[dict] = [{"role": "system", "content": system}] if system else []
    if image is None:
        msgs.append({"role": "user", "content": prompt})
    else:
        from kgqa.core.images import data_url

        msgs.append({"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": data_url(image)}},
            {"type": "text", "text": prompt},
        ]})
    return msgs


class OpenAIChat(_Chatting):
    """ChatModel over an OpenAI-compatible server."""

    role = "chat"

    def generate(self, prompt: str, *, system: str | None = None, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        return self._complete(_messages(prompt, system), max_tokens=max_tokens, temperature=temperature)

    def generate_json(self, prompt: str, schema: type[T], *, system: str | None = None,
                      max_tokens: int = 256) -> T:
        return self._json(_messages(prompt, system), schema, max_tokens)

    def choose(self, prompt: str, options: Sequence[str], *, system: str | None = None,
               per_token: bool = False) -> list[float]:
        """Log-likelihood of each option after ``CHOOSE_FRAME`` (``system`` is not used here)."""
        if not options:
            return []
        prefix = CHOOSE_FRAME.format(prompt=prompt)
        texts = [prefix + o for o in options]
        with self.meter.call(self.role) as rec:
            resp = _call(self.role, self.base_url, lambda: self.client.completions.create(
                model=self.name, prompt=texts, max_tokens=1, temperature=0.0, echo=True, logprobs=0))
            _usage(rec, resp)
            by_index = {c.index: c for c in resp.choices}
            scores = []
            for i, _ in enumerate(options):
                lp = getattr(by_index.get(i), "logprobs", None)
                if lp is None or lp.text_offset is None or lp.token_logprobs is None:
                    raise ModelUnavailable(f"chat backend {self.base_url}: completions reply without echoed "
                                           "logprobs (the server must support echo=true with logprobs)")
                # echoed prompt tokens come first; the one generated token is last and not counted
                toks = [(off, v) for off, v in zip(lp.text_offset, lp.token_logprobs)][:-1]
                mine = [v for off, v in toks if off >= len(prefix) and v is not None]
                total = float(sum(mine))
                scores.append(total / max(1, len(mine)) if per_token else total)
            return scores


class OpenAIVision(_Chatting):
    """VisionModel over an OpenAI-compatible server (images as ``data:`` URLs)."""

    role = "vision"

    def recognize(self, image: ImageInput, hint: str) -> str:
        text = self._complete(_messages(RECOGNIZE_PROMPT.format(hint=hint or "object"), None, image),
                              image_sha256=image.sha256, max_tokens=32, temperature=0.0)
        return text.strip().strip(".").strip()

    def generate_json(self, image: ImageInput | None, prompt: str, schema: type[T], *,
                      system: str | None = None, max_tokens: int = 256) -> T:
        return self._json(_messages(prompt, system, image), schema, max_tokens,
                          image_sha256=image.sha256 if image is not None else None)


def tensor_to_base64(tensor) -> str:
    """base64 of ``torch.save(tensor)`` — the ``prompt_embeds`` wire format vLLM documents."""
    import torch

    buf = io.BytesIO()
    torch.save(tensor.detach().cpu().contiguous(), buf)
    return base64.b64encode(buf.getvalue()).decode("ascii")


class OpenAISoftPrompt(_Served):
    """SoftPromptModel over vLLM ``--enable-prompt-embeds`` (completions API).

    ``embedder(text) -> (n, hidden)`` turns the templated prompt into the served
    model's input embeddings (its tokenizer + embedding table, loaded on the client);
    by default the text is embedded with the local SmolLM2, which is only right
    when the server serves SmolLM2 too — GraSP passes its own embedder.
    """

    role = "softprompt"

    def __init__(self, settings: Settings, meter: Meter | None = None, embedder: Callable | None = None,
                 hidden_size: int | None = None):
        super().__init__(settings, meter)
        self.embedder = embedder
        self._hidden = hidden_size

    @property
    def hidden_size(self) -> int:
        if self._hidden is None:
            from kgqa.models.softprompt_local import LocalSoftPrompt

            self._hidden = LocalSoftPrompt(self.settings).hidden_size
        return self._hidden

    def _embed_text(self, prompt: str):
        if self.embedder is not None:
            return self.embedder(prompt)
        import torch

        from kgqa.models.local_chat import load_local_llm

        model, tok = load_local_llm(self.settings)
        text = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                       tokenize=False)
        ids = tok(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            return model.get_input_embeddings()(ids)[0]

    def generate(self, soft_prompt, prompt: str, *, max_tokens: int = 64) -> str:
        import torch

        text_emb = self._embed_text(prompt)
        embeds = torch.cat([soft_prompt.detach().to(text_emb.dtype), text_emb.detach()], dim=0)
        payload = tensor_to_base64(embeds)
        with self.meter.call(self.role) as rec:
            resp = _call(self.role, self.base_url, lambda: self.client.completions.create(
                model=self.name, prompt="", max_tokens=max_tokens, temperature=0.0,
                extra_body={"prompt_embeds": payload}))
            _usage(rec, resp)
            try:
                return resp.choices[0].text or ""
            except (AttributeError, IndexError) as e:
                raise ModelUnavailable(f"softprompt backend {self.base_url}: reply has no choices[0].text") from e


__all__ = ["OpenAIChat", "OpenAIVision", "OpenAISoftPrompt", "response_format", "tensor_to_base64",
           "RECOGNIZE_PROMPT"]
