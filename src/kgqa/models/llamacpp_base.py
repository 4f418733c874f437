"""What both llama.cpp bindings share (``llamacpp_chat``: llama-cpp-python; ``xllamacpp_chat``: xllamacpp):
the context size, the prompt batch, the per-call deadline and the JSON schema in the subset llama.cpp's
grammar converter enforces."""

from __future__ import annotations

import time
from typing import TypeVar

from pydantic import BaseModel

from kgqa.core.errors import ModelUnavailable
from kgqa.models.structured import schema_json, with_retries

T = TypeVar("T", bound=BaseModel)

#: context window of the llama.cpp context (tokens); VisPath's longest prompts are ~1.5k
N_CTX = 4096
#: tokens evaluated per llama_decode call while reading a prompt
N_BATCH = 512


class _Deadline:
    """``KGQA_MODEL_TIMEOUT_S`` for one call; ``check()`` raises ModelUnavailable past it."""

    def __init__(self, seconds: float, who: str):
        self.seconds = seconds
        self.who = who
        self.end = time.monotonic() + seconds
        self.passed = False

    def over(self) -> bool:
        self.passed = self.passed or time.monotonic() > self.end
        return self.passed

    def check(self) -> None:
        if self.over():
            raise ModelUnavailable(f"{self.who}: no reply within {self.seconds:g} s (KGQA_MODEL_TIMEOUT_S)")


class LlamaCppDecoding:
    """What both bindings share: whether the model is loaded in this process (each binding points
    ``_loaded_cache`` at its own cache of loaded models), ``generate``, ``generate_json`` and the public one-call
    decode (each binding implements ``_decode`` and ``prompt_tokens``)."""

    _loaded_cache: dict = {}
    #: how the binding names itself in a failed JSON reply's line
    BINDING = "llama.cpp"

    def __init__(self, settings, meter=None, cache=None, role: str = "chat"):
        super().__init__(settings, meter, cache, role)
        self._grammars: dict = {}        # the binding's compiled grammar per reply type

    @property
    def loaded(self) -> bool:
        from kgqa.models.gguf import locate_gguf

        try:
            return (str(locate_gguf(self.settings)), max(1, self.settings.torch_threads), N_CTX) in self._loaded_cache
        except ModelUnavailable:
            return False

    def generate(self, prompt: str, *, system: str | None = None, max_tokens: int = 256,
                 temperature: float = 0.0) -> str:
        """A free-text reply, greedy at temperature 0, through the replay cache."""
        params = {"max_tokens": max_tokens, "temperature": temperature}
        return self._cached("generate", prompt, system, params,
                            lambda rec: self._decode(self.prompt_tokens(prompt, system), max_tokens=max_tokens,
                                                     temperature=temperature, seed=0, grammar=None, rec=rec))

    def generate_json(self, prompt: str, schema: type[T], *, system: str | None = None,
                      max_tokens: int = 256) -> T:
        """A reply decoded under ``schema``'s grammar: greedy first, then sampled retries (seeded), each
        attempt through the replay cache; the last failure is one ``BadModelReply`` line."""
        def attempt(i: int) -> str:
            params = {"max_tokens": max_tokens, "schema": schema_json(schema), "attempt": i}
            return self._cached("json", prompt, system, params,
                                lambda rec: self._decode(self.prompt_tokens(prompt, system), max_tokens=max_tokens,
                                                         temperature=0.7 if i else 0.0, seed=i,
                                                         grammar=self.grammar(schema), rec=rec))

        return with_retries(attempt, schema, retries=self.settings.json_retries,
                            who=f"local LLM {self.name} ({self.BINDING})")

    def decode(self, tokens: list[int], *, max_tokens: int, temperature: float = 0.0, seed: int = 0, grammar=None,
               rec) -> str:
        """Up to ``max_tokens`` after the prompt ``tokens`` (``prompt_tokens``), under ``grammar`` when given, counted
        into ``rec``; one call, no retry, no replay cache (benchmarks)."""
        return self._decode(tokens, max_tokens=max_tokens, temperature=temperature, seed=seed, grammar=grammar,
                            rec=rec)


#: integer ranges up to this many values become an enum in the grammar
MAX_INT_ENUM = 64


def gbnf_compatible(js):
    """``js`` in the subset llama-cpp-python's JSON-schema converter enforces.

    * regex escapes GBNF character classes lack (``\\s``) are spelled out;
    * a small integer range (``minimum``..``maximum``, as pydantic's ``ge``/``le`` write it)
      becomes an ``enum`` of its values: the converter ignores integer bounds, and a small
      model then writes ``"depth": 100391…`` until ``max_tokens`` cuts the JSON off.
    """
    if isinstance(js, list):
        return [gbnf_compatible(v) for v in js]
    if not isinstance(js, dict):
        return js
    out = {k: gbnf_compatible(v) for k, v in js.items()}
    if isinstance(out.get("pattern"), str):
        out["pattern"] = _spell_whitespace(out["pattern"])
    lo, hi = out.get("minimum"), out.get("maximum")
    if (out.get("type") == "integer" and "enum" not in out and isinstance(lo, int) and isinstance(hi, int)
            and 0 <= hi - lo < MAX_INT_ENUM):
        out["enum"] = list(range(lo, hi + 1))
    return out


def _spell_whitespace(pattern: str) -> str:
    """``\\s`` as `` \\t\\n\\r`` inside a character class, as ``[ \\t\\n\\r]`` outside one."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            pair = pattern[i:i + 2]
            out.append((r" \t\n\r" if in_class else r"[ \t\n\r]") if pair == r"\s" else pair)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)
