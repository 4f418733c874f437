"""The one input gate: a question, an id, a pattern or an option value from a user (the command line, a
question file, an HTTP body) checked once, where it enters, before anything connects.

* ``check_question``: the question as a ``Question``, the type the pipeline and ``BaseMethod.answer`` take
  as validated (they check nothing again); empty, over ``MAX_QUESTION_CHARS``, not valid UTF-8 text or holding
  a control character: ``InvalidInput`` (exit 2, 400 over HTTP);
* ``check_text``: the same rules for one short value (``--entity``, ``--doc``, ``--docs``, a form field);
* ``check_number``: an option value that is a number is finite and of a sane size (NaN, infinities and
  integers of thousands of digits are one line, never an ``OverflowError`` deep inside a method).

Invalid UTF-8 reaches Python as lone surrogates: ``sys.argv`` decodes undecodable bytes with
``surrogateescape`` (U+DC80–U+DCFF) and JSON's ``"\\ud800"`` escapes decode to them too; neither can be
encoded again (by the Neo4j driver, a tokenizer, a log line), so they are refused here.
"""

from __future__ import annotations

import math
import unicodedata

from kgqa.core.errors import InvalidInput, cap_repr

#: The longest question accepted, in characters (``kgqa ask``, ``kgqa eval``, ``kgqa serve`` alike).
#: A question is one sentence or a few; this bound keeps every prompt built from it well inside
#: a small model's context (SmolLM2: 8,192 tokens) instead of running for minutes on 100 KB.
MAX_QUESTION_CHARS = 2000
#: The longest id or pattern accepted (``--entity``, ``--doc``, ``--docs``).
MAX_TEXT_CHARS = 1000
#: The most digits of a number given as text (an option value); Python refuses over 4,300 anyway.
MAX_NUMBER_DIGITS = 30
#: White space a question may hold; every other control character is refused.
_ALLOWED_CONTROLS = frozenset("\t\n\r")


class Question(str):
    """A question that passed ``check_question``: stripped, non-empty, within the limit, valid text.

    Made only by ``check_question``; whoever receives one (``Pipeline.answer``, ``Query``,
    ``BaseMethod.answer``) takes it as validated."""

    __slots__ = ()


def _bad_character(text: str, controls_ok: frozenset[str]) -> str | None:
    """Why ``text`` is not acceptable text (its first bad character, by position), or None."""
    for i, ch in enumerate(text):
        cat = unicodedata.category(ch)
        if cat == "Cs":
            byte = f" (byte 0x{ord(ch) - 0xDC00:02x})" if 0xDC80 <= ord(ch) <= 0xDCFF else ""
            return f"is not valid UTF-8 text{byte} at character {i + 1}"
        if cat == "Cc" and ch not in controls_ok:
            return f"holds a control character (U+{ord(ch):04X}) at character {i + 1}"
    return None


def check_text(value, what: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``value`` stripped, when it is non-empty text of at most ``limit`` characters, valid UTF-8 and free of
    control characters; else ``InvalidInput`` naming ``what``."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what}: expected text, got {type(value).__name__}")
    if len(value) > limit:
        raise InvalidInput(f"{what} is {len(value):,} characters, over the {limit:,}-character limit")
    if (why := _bad_character(value, frozenset())) is not None:
        raise InvalidInput(f"{what} {why}")
    if not value.strip():
        raise InvalidInput(f"{what} is empty")
    return value.strip()


def check_question(question) -> Question:
    """The question, stripped, as a ``Question``; ``InvalidInput`` (exit 2) when it is not text, empty, over
    ``MAX_QUESTION_CHARS``, not valid UTF-8 or holds a control character other than white space. A
    ``Question`` passes as it is: it was checked where it entered."""
    if isinstance(question, Question):
        return question
    if not isinstance(question, str) or not question.strip():
        raise InvalidInput("question is empty" if isinstance(question, str) or question is None
                           else f"question: expected text, got {type(question).__name__}")
    q = question.strip()
    if len(q) > MAX_QUESTION_CHARS:
        raise InvalidInput(f"question is {len(q):,} characters, over the {MAX_QUESTION_CHARS:,}-character limit")
    if (why := _bad_character(q, _ALLOWED_CONTROLS)) is not None:
        raise InvalidInput(f"question {why}")
    return Question(q)


def check_number(value, what: str):
    """``value`` when it is no number, or a finite one of at most ``MAX_NUMBER_DIGITS`` digits (as a number or
    as the text of one); else ``InvalidInput`` naming ``what``. The option's own bounds are its model's."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"{what}={value!r}: must be a finite number")
    if isinstance(value, int) and value.bit_length() > MAX_NUMBER_DIGITS * 4:
        raise InvalidInput(f"{what}: a number of about {int(value.bit_length() * 0.30103) + 1:,} digits is out of "
                           "range")
    if isinstance(value, str):
        text = value.strip().lower().lstrip("+-")
        if text in ("nan", "inf", "infinity"):
            raise InvalidInput(f"{what}={cap_repr(value)}: must be a finite number")
        if text.replace("_", "").isdigit() and len(text) > MAX_NUMBER_DIGITS:
            raise InvalidInput(f"{what}: a number of {len(text):,} digits is out of range")
    return value
