"""Structured output: validate a JSON reply against its pydantic schema, retry, give up.

Every backend's ``generate_json`` ends here: ``attempt(i)`` produces the raw text
of try ``i`` (0 = first), ``parse`` validates it, and after ``retries`` failed
retries ``BadModelReply`` (code ``schema``) names the schema and the last problem in one line,
so that the caller takes its documented fallback.
"""

from __future__ import annotations

import json
import re
from typing import Callable, TypeVar

from pydantic import BaseModel, ValidationError

from kgqa.core.errors import BadModelReply, first_error

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def parse(text: str, schema: type[T]) -> T:
    """The reply as a ``schema`` instance; ValueError with a short reason otherwise.

    Tolerates a Markdown code fence and text around the outermost JSON object,
    which chat models add even when told not to.
    """
    s = text.strip()
    m = _FENCE.match(s)
    if m:
        s = m.group(1)
    if not s.startswith("{"):
        start, end = s.find("{"), s.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("no JSON object in the reply")
        s = s[start:end + 1]
    try:
        return schema.model_validate_json(s)
    except ValidationError as e:
        where, msg = first_error(e, default_loc="reply")
        raise ValueError(f"{where}: {msg}") from None


def with_retries(attempt: Callable[[int], str], schema: type[T], *, retries: int, who: str) -> T:
    """Run ``attempt(0)``, ``attempt(1)``, … until a reply validates; at most ``retries`` retries."""
    problem = "no reply"
    for i in range(retries + 1):
        text = attempt(i)
        try:
            return parse(text, schema)
        except ValueError as e:
            problem = str(e)
    raise BadModelReply(f"{who}: no valid {schema.__name__} JSON after {retries + 1} tries ({problem})", code="schema")


def schema_json(schema: type[BaseModel]) -> str:
    """The JSON schema as compact text (for prompts and cache keys)."""
    return json.dumps(schema.model_json_schema(), sort_keys=True, separators=(",", ":"))


#: first character of a free-text JSON string value under constrained decoding
MAX_BOUNDED_LENGTH = 64
_STRING_START = r'[^\s<>"\\{}\[\].…]'
#: any later character: no control characters, no JSON or template punctuation
_STRING_REST = r'[^\x00-\x1f<>"\\{}\[\]]'


def decoding_schema(js: dict) -> dict:
    """The JSON schema the local LLM decodes under: ``js`` with free-text strings tightened.

    A 135M model under a plain JSON grammar still copies the prompt's template
    (``"<entity name>"``, ``"..."``) or emits escapes it cannot close. Every
    string without its own ``pattern``/``enum``/``format`` therefore gets one:
    it starts with a letter, digit or other non-punctuation character and holds no
    ``< > " \\ { } [ ]``, within the schema's own min length and (up to
    ``MAX_BOUNDED_LENGTH``) max length. Validation still uses the caller's pydantic
    schema unchanged.
    """
    if isinstance(js, list):
        return [decoding_schema(v) for v in js]
    if not isinstance(js, dict):
        return js
    out = {k: decoding_schema(v) for k, v in js.items()}
    if out.get("type") == "string" and not ({"pattern", "enum", "const", "format"} & out.keys()):
        lo = max(int(out.pop("minLength", 1)), 1)
        hi = out.pop("maxLength", None)
        # A bounded repeat {0,999} compiles into a DFA with ~1000 states (seconds per schema,
        # paid once per process); long limits are left to max_tokens and pydantic instead.
        bounded = hi is not None and int(hi) <= MAX_BOUNDED_LENGTH
        rest = f"{{{lo - 1},{int(hi) - 1}}}" if bounded else f"{{{lo - 1},}}"
        out["pattern"] = f"^{_STRING_START}{_STRING_REST}{rest}$"
    return out
