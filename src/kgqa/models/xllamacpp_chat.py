"""ChatModel in-process on llama.cpp through ``xllamacpp`` (prebuilt CPU wheels on PyPI, MIT).

The same llama.cpp engine, GGUF and calls as ``LlamaCppChat`` (``kgqa.models.llamacpp_chat``, on
``llama-cpp-python``, which PyPI ships only as source: its first install compiles llama.cpp, about
10 CPU-minutes). ``xllamacpp`` exposes llama.cpp's own server engine (``Server``), not its token-level
API, so each ChatModel call is one or more completion requests handed to that engine in-process:

* Prompt: the GGUF's chat template rendered by llama.cpp (``/apply-template``), tokenized with
  special tokens parsed and no BOS added, exactly as ``LlamaCppChat`` tokenizes it.
* ``generate`` / ``generate_json``: greedy at temperature 0, else top-p 0.95 seeded by the attempt;
  ``generate_json`` decodes under the grammar llama.cpp's own JSON-schema converter makes from the
  same ``decoding_schema`` (``gbnf_compatible``, objects closed: ``closed_objects``), validated and
  retried as ``LlamaCppChat`` does.
* ``choose``: the log-likelihood of each option as the whole assistant reply (its tokens, then the
  end-of-turn token). The engine reports the model's own log-probability of each token it emits
  (computed from the raw logits, before sampling), so each option token is emitted by a +100 logit
  bias on it, one token per request after the prompt (the engine reuses the prompt's KV cache).
* Timeout: ``KGQA_MODEL_TIMEOUT_S`` bounds each call (``t_max_predict_ms`` for decoding, checked
  between requests); past it ``ModelUnavailable``.
* Replay cache: the backend is ``llamacpp``, as ``LlamaCppChat``'s: the same engine, model, prompts
  and parameters, so replies recorded on either binding replay on the other (bench/llm.py compares
  the two bindings' replies).

The engine listens on a random 127.0.0.1 port for its HTTP API (used here only for tokenizing); a
random API key, generated per process and never stored, makes every request without it fail (401).
Not here: soft prompts (GraSP) stay on transformers, as with ``LlamaCppChat``.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import urllib.request
from pathlib import Path
from typing import Sequence

from pydantic import BaseModel

from kgqa.core.config import Settings
from kgqa.core.errors import BadModelReply, ModelUnavailable
from kgqa.models.gguf import locate_gguf
from kgqa.models.llamacpp_base import N_BATCH, N_CTX, LlamaCppDecoding, _Deadline, gbnf_compatible
from kgqa.models.local_llm import LocalLLMChat
from kgqa.models.structured import decoding_schema


#: the logit bias that makes the engine emit the option token being scored
FORCE = 100.0

_LOCK = threading.Lock()
_LOADED: dict[tuple, "_Engine"] = {}


def available() -> bool:
    """Whether the xllamacpp wheel is installed."""
    try:
        import xllamacpp  # noqa: F401
    except ImportError:
        return False
    return True


class _Engine:
    """One xllamacpp ``Server`` (model + one slot) with its private HTTP key."""

    def __init__(self, gguf: Path, threads: int, n_ctx: int):
        try:
            import xllamacpp as xlc
        except ImportError as e:
            raise ModelUnavailable("xllamacpp is not installed (pip install xllamacpp)") from e
        p = xlc.CommonParams()
        p.model.path = str(gguf)
        p.n_ctx, p.n_batch, p.n_ubatch, p.n_parallel = n_ctx, N_BATCH, N_BATCH, 1
        p.cpuparams.n_threads = p.cpuparams_batch.n_threads = threads
        p.warmup, p.verbosity = False, -1
        self.key = secrets.token_hex(16)
        p.api_keys = [self.key]
        t0 = time.perf_counter()
        try:
            self.server = xlc.Server(p)
        except Exception as e:  # noqa: BLE001 - a load failure is one line for the user
            raise ModelUnavailable(f"llama.cpp (xllamacpp) cannot load {gguf}: {e}") from e
        self.load_seconds = time.perf_counter() - t0
        self.address = str(self.server.listening_address).rstrip("/")
        end = self.tokenize("<|im_end|>", special=True)
        self.end_of_turn = end if len(end) == 1 else self.tokenize("</s>", special=True)[:1]
        self.lock = threading.Lock()    # one slot: one call at a time keeps its prompt cache

    def http(self, path: str, body: dict) -> dict:
        req = urllib.request.Request(self.address + path, json.dumps(body).encode("utf-8"),
                                     {"Content-Type": "application/json", "Authorization": f"Bearer {self.key}"})
        with urllib.request.urlopen(req, timeout=60) as r:   # noqa: S310 - our own 127.0.0.1 engine
            return json.loads(r.read())

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        return list(self.http("/tokenize", {"content": text, "add_special": False, "parse_special": special})["tokens"])

    def complete(self, body: dict) -> dict:
        out = self.server.handle_completions(body)
        if isinstance(out, dict) and out.get("error"):
            raise BadModelReply(f"llama.cpp (xllamacpp): {out['error'].get('message', out['error'])}", code="error")
        return out


def load_engine(settings: Settings) -> _Engine:
    gguf = locate_gguf(settings)
    key = (str(gguf), max(1, settings.torch_threads), N_CTX)
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = _Engine(gguf, key[1], N_CTX)
        return _LOADED[key]


def closed_objects(js):
    """``additionalProperties: false`` on every object that does not say otherwise.

    xllamacpp's converter emits an LLGuidance grammar, which follows JSON Schema (extra keys allowed);
    llama-cpp-python's GBNF converter allows only the listed keys. Without this a small model appends
    keys ("language", "name", …) until ``max_tokens`` cuts the JSON off."""
    if isinstance(js, list):
        return [closed_objects(v) for v in js]
    if not isinstance(js, dict):
        return js
    out = {k: closed_objects(v) for k, v in js.items()}
    if (out.get("type") == "object" or "properties" in out) and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


class XLlamaCppChat(LlamaCppDecoding, LocalLLMChat):
    """SmolLM2-135M-Instruct (or any chat GGUF) on llama.cpp via xllamacpp (implements ``ChatModel``)."""

    backend = "llamacpp"      # same engine, model and calls as LlamaCppChat: replay caches are shared
    binding = "xllamacpp"
    _loaded_cache = _LOADED
    BINDING = "llama.cpp, xllamacpp"

    @property
    def engine(self) -> _Engine:
        return load_engine(self.settings)

    def prompt_tokens(self, prompt: str, system: str | None = None) -> list[int]:
        """The chat-formatted prompt as token ids, ending with the assistant's turn header."""
        e = self.engine
        text = e.http("/apply-template", {"messages": self._messages(prompt, system)})["prompt"]
        return e.tokenize(text, special=True)

    def _deadline(self) -> _Deadline:
        return _Deadline(self.settings.model_timeout_s, f"local LLM {self.name} (llama.cpp, xllamacpp)")

    def _decode(self, tokens: list[int], *, max_tokens: int, temperature: float, seed: int, grammar, rec) -> str:
        if len(tokens) + max_tokens > N_CTX:
            raise BadModelReply(f"local LLM {self.name}: prompt of {len(tokens)} tokens + {max_tokens} new "
                                f"exceeds the context of {N_CTX}", code="context")
        deadline = self._deadline()
        body = {"prompt": tokens, "n_predict": max_tokens, "seed": seed, "repeat_penalty": 1.0, "min_p": 0.0,
                "top_k": 0, "cache_prompt": True, "t_max_predict_ms": int(deadline.seconds * 1000),
                **({"temperature": 0.0, "top_p": 1.0} if temperature <= 0 else
                   {"temperature": temperature, "top_p": 0.95})}
        if grammar:
            body["grammar"] = grammar
        with self.engine.lock:
            out = self.engine.complete(body)
        usage = out.get("usage") or {}
        rec.prompt_tokens = len(tokens)
        rec.completion_tokens = int(usage.get("completion_tokens", 0))
        deadline.check()
        return out["choices"][0]["text"]

    def grammar(self, schema: type[BaseModel]) -> str:
        """llama.cpp's grammar of ``decoding_schema(schema)``, built once per schema."""
        if schema not in self._grammars:
            import xllamacpp as xlc

            self._grammars[schema] = xlc.json_schema_to_grammar(
                json.dumps(closed_objects(gbnf_compatible(decoding_schema(schema.model_json_schema())))))
        return self._grammars[schema]

    def choose(self, prompt: str, options: Sequence[str], *, system: str | None = None,
               per_token: bool = False) -> list[float]:
        """Log-likelihood of each option as the whole assistant reply (``LlamaCppChat.choose``'s definition)."""
        if not options:
            return []
        with self.meter.call(self.role) as rec:
            prefix = self.prompt_tokens(prompt, system)
            e = self.engine
            conts = [e.tokenize(o, special=False) + e.end_of_turn for o in options]
            longest = max(len(c) for c in conts)
            if len(prefix) + longest > N_CTX:
                raise BadModelReply(f"local LLM {self.name}: prompt of {len(prefix)} tokens + an option of "
                                    f"{longest} exceeds the context of {N_CTX}", code="context")
            deadline = self._deadline()
            scores = []
            with e.lock:
                for c in conts:
                    lp = 0.0
                    for j, tok in enumerate(c):
                        out = e.complete({"prompt": prefix + c[:j], "n_predict": 1, "temperature": 0.0,
                                          "n_probs": 1, "logit_bias": [[tok, FORCE]], "cache_prompt": True,
                                          "repeat_penalty": 1.0})
                        got = out["choices"][0]["logprobs"]["content"][0]
                        if got["id"] != tok:
                            raise BadModelReply(f"local LLM {self.name}: option token {tok} was not emitted "
                                                f"(got {got['id']})", code="error")
                        lp += float(got["logprob"])
                        rec.prompt_tokens += 1
                        deadline.check()
                    scores.append(lp / len(c) if per_token else lp)
            rec.prompt_tokens += len(prefix)
        return scores
