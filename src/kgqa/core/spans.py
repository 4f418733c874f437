"""Sentences, structured lines and typed spans of document text, without a language model.

Shared by the CPU extractor of ``kgqa load documents`` (``kgqa.loaders.documents.cpu_extract``) and
the rule reader of mKG-RAG (``kgqa.methods.mkgrag.rule_reader``), so the spans a document's KG is built
from and the spans an answer is read from are the same. Rules are about the shape of English
text (capitalisation, dates, numbers with their units, ``Key: value`` lines, table rows), never
about a particular document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
                "thirty", "forty", "fifty", "hundred", "thousand", "million", "billion", "dozen")
#: words that start a sentence or a clause with a capital and are not names
_FUNCTION = {
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "he", "she", "his", "her", "they", "their",
    "in", "on", "at", "of", "for", "from", "by", "with", "as", "after", "before", "during", "since", "until",
    "and", "or", "but", "when", "while", "where", "which", "who", "what", "how", "officially", "today", "there",
    "some", "many", "most", "all", "both", "each", "one", "two", "three", "with", "between", "about", "also",
    "is", "was", "are", "were", "be", "i", "we", "you", "if", "then", "because", "although", "however",
}

_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_NUMW = r"(?:" + "|".join(NUMBER_WORDS) + r")"
_UNIT = (r"(?:km|kilometres?|kilometers?|m|metres?|meters?|cm|mm|miles?|feet|ft|inches|kg|kilograms?|tonnes?|tons?"
         r"|g|grams?|lb|pounds?|km/h|mph|%|per ?cent|percent|years?|days?|hours?|minutes?|seconds?|°C|°F|degrees?"
         r"|light-years?|au|hectares?|acres?|litres?|liters?|people|inhabitants|dollars?|euros?)")
DATE_RE = re.compile(
    rf"\b(?:\d{{1,2}} {_MONTH} \d{{3,4}}|{_MONTH} \d{{1,2}}, \d{{3,4}}|{_MONTH} \d{{3,4}})\b")
YEAR_RE = re.compile(r"(?<![\d,.:])\b(1[0-9]{3}|20[0-9]{2})\b(?![,.:]?\d)")
RATIO_RE = re.compile(r"\b\d+(?:\.\d+)?:\d+(?:\.\d+)?\b")
MEASURE_RE = re.compile(rf"\b(?:about |approximately |around |some |over |nearly )?({_NUM}|{_NUMW})"
                        rf"(?:[ -]({_UNIT}))(?![\w])", re.IGNORECASE)
COUNT_RE = re.compile(rf"\b({_NUM}|{_NUMW})\b((?: [A-Z][\w-]*)?(?: [a-z]+))?", re.IGNORECASE)
# a name: capitalised words (any script), possibly joined by of/de/la/and/hyphens, or a code like STS-93
_CAP = r"(?:[A-Z\u00C0-\u00DE][\w'’\-]*|[A-Z]{2,}[\w\-]*)"
NAME_RE = re.compile(rf"{_CAP}(?:(?: (?:of|de|la|le|von|van|der|du|del|da|di|the))? {_CAP})*(?: \d+[A-Za-z]?\b)?")
NAMED_RE = re.compile(r"\b(?:called|known as|named|name is|names? are)\s+([\w'’-]+(?: [\w'’-]+){0,3}?)"
                      r"(?=\s*(?:[,.;:()]|\band\b|\bbut\b|\bor\b|$))", re.IGNORECASE)
SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\u00C0-\u00DE])")
KV_RE = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?([A-Z\u00C0-\u00DE][^:|]{0,40}?)\s*:\s+(\S.{0,200})$")
LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(\S.*)$")
TABLE_RE = re.compile(r"^\s*\|(.+)\|\s*$")
TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Span:
    text: str
    start: int
    end: int
    kind: str            # date | year | ratio | measure | count | name


#: a blank line (spaces allowed): where two paragraphs meet
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


def paragraphs_of(text: str) -> list[str]:
    """The blank-line-separated paragraphs of ``text``, empty ones left out."""
    return [p for p in _PARAGRAPH_BREAK.split(text) if p.strip()]


def sentences(text: str) -> list[str]:
    """The sentences of a paragraph (split at . ! ? before a capital or digit)."""
    out = []
    for para in text.split("\n"):
        out += [s.strip() for s in SENTENCE_RE.split(para) if s.strip()]
    return out


def spans(sentence: str) -> list[Span]:
    """Typed spans of one sentence: dates, years, ratios, measures (number + unit), counts (number + noun)
    and names (the phrase after a naming cue such as "called" or "known as", whatever its case, and
    capitalised word runs that are not function words at the start of a clause)."""
    out: list[Span] = []
    taken: list[tuple[int, int]] = []

    def add(s: int, e: int, kind: str) -> None:
        text = sentence[s:e].strip(" ,;")
        if text and not any(s < b and a < e for a, b in taken):
            out.append(Span(text, s, e, kind))
            taken.append((s, e))

    for m in DATE_RE.finditer(sentence):
        add(m.start(), m.end(), "date")
    for m in RATIO_RE.finditer(sentence):
        add(m.start(), m.end(), "ratio")
    for m in MEASURE_RE.finditer(sentence):
        if m.group(2) and not YEAR_RE.fullmatch(m.group(1) or ""):
            add(m.start(1), m.end(), "measure")
    for m in YEAR_RE.finditer(sentence):
        add(m.start(), m.end(), "year")
    for m in NAMED_RE.finditer(sentence):           # "its scientific name is Felis catus", "known as robusta"
        s, text = m.start(1), m.group(1)
        first = text.split()[0]
        if first.lower() in ("the", "a", "an") and len(text.split()) > 1:
            s, text = s + len(first) + 1, text[len(first) + 1:]
        add(s, s + len(text), "name")
    for m in NAME_RE.finditer(sentence):
        s, e = m.start(), m.end()
        words = sentence[s:e].split()
        while words and (words[0].lower() in _FUNCTION or words[0].lower() in MONTHS):   # "The", "In", "On"
            s += len(words[0]) + 1
            words = words[1:]
        while words and words[-1].lower() in MONTHS:
            e -= len(words[-1]) + 1
            words = words[:-1]
        if words:
            add(s, s + len(" ".join(words)), "name")
    for m in COUNT_RE.finditer(sentence):
        n = m.group(1)
        if YEAR_RE.fullmatch(n):
            continue
        add(m.start(1), m.end(1), "count")
    return sorted(out, key=lambda x: x.start)


def structured_line(line: str) -> tuple[str, str] | None:
    """``Key: value`` (optionally as a list item) → (key, value); None for prose. The key is short and does
    not end a sentence, so an ordinary sentence with a colon is not taken for one."""
    m = KV_RE.match(line)
    if not m:
        return None
    key, value = m.group(1).strip(), m.group(2).strip()
    if len(key.split()) > 5 or key.endswith((".", "!", "?")):
        return None
    return key, value


def list_item(line: str) -> str | None:
    m = LIST_RE.match(line)
    return m.group(1).strip() if m else None


def table_rows(lines: list[str]) -> list[list[str]]:
    """The rows of a Markdown table (pipes), header first, separator lines dropped."""
    rows = []
    for ln in lines:
        if TABLE_SEP_RE.match(ln):
            continue
        m = TABLE_RE.match(ln)
        if m:
            rows.append([c.strip() for c in m.group(1).split("|")])
    return rows


def row_sentence(header: list[str], row: list[str]) -> str:
    """A table row as one line that keeps its column names ("Year: 2019; Visitors: 410,000")."""
    return "; ".join(f"{h}: {c}" for h, c in zip(header, row) if c)


def text_lines(text: str) -> list[tuple[str, bool]]:
    """The sentences of a chunk's text in order, each with whether it is a Markdown table's row (given as a
    ``row_sentence`` line)."""
    out: list[tuple[str, bool]] = []
    table: list[str] = []
    for line in text.split("\n") + [""]:
        if line.strip().startswith("|"):
            table.append(line)
            continue
        if table:
            rows = table_rows(table)
            out += [(row_sentence(rows[0], r), True) for r in rows[1:]] if len(rows) > 1 else []
            table = []
        out += [(x, False) for x in sentences(line)]
    return out


def text_sentences(text: str) -> list[str]:
    """The sentences of a chunk's text, a Markdown table's rows given as ``row_sentence`` lines."""
    return [x for x, _ in text_lines(text)]


# --------------------------------------------------------------------------- technical tokens
#: what surrounds a token without being part of it (quotes, brackets, clause punctuation)
_TOKEN_EDGE = "()[]{}<>\"'‘’“”,;:!?"
#: a token that is one technical name: a path or MIME type (a "/" beside a letter), an identifier with "_", an
#: e-mail address, a URL, a file name or dotted name ("libtasn1.h", "pkix.asn": a "." inside, with 2 letters or
#: digits on one side), a command-line flag ("--check", "-b"), a version ("4.19.0")
TECHNICAL_RE = re.compile(r"""(?x)
    (?=.*[A-Za-z]).*(?:[A-Za-z0-9]/|/[A-Za-z~.]|_|[A-Za-z0-9]@[A-Za-z]|://
                       |[A-Za-z0-9]{2}\.[A-Za-z0-9]|[A-Za-z0-9]\.[A-Za-z0-9]{2})
  | ^--?[A-Za-z][\w-]*$
  | ^v?\d+(?:\.\d+){2,}$""")
#: what a span may end with after a technical token and is not part of the answer: ", 18 August 2022"
_TRAILING_DATE = re.compile(rf"^,?\s*(?:{DATE_RE.pattern})\W*$")
#: a user handle glued after a name ("Thomas Leonard tal197")
_HANDLE = re.compile(r"^[a-z]+\d+$")


def _token_at(text: str, i: int) -> tuple[int, int]:
    """The whitespace-delimited token holding ``text[i]``, without what surrounds it (``_TOKEN_EDGE``, a final
    full stop)."""
    s = i
    while s > 0 and not text[s - 1].isspace():
        s -= 1
    e = i
    while e < len(text) and not text[e].isspace():
        e += 1
    while s < e and text[s] in _TOKEN_EDGE:
        s += 1
    while e > s and (text[e - 1] in _TOKEN_EDGE or text[e - 1] == "."):
        e -= 1
    return s, e


#: initials and titles ("U.S.", "Ph.D.", "St.") are words, not technical names
_ABBREVIATION = re.compile(r"^(?:[A-Z][a-z]?\.)+[A-Za-z]{0,2}\.?$")


def is_technical(token: str) -> bool:
    return bool(TECHNICAL_RE.search(token)) and not _ABBREVIATION.match(token)


def whole_tokens(text: str, start: int, end: int) -> tuple[int, int]:
    """The span ``text[start:end]`` as an answer that respects technical tokens (paths, MIME types, identifiers,
    flags, versions): never a piece cut from inside one ("x-midi" of "audio/x-midi" widens to it), and nothing
    glued after one (a span opening with a technical token and going on, "application/zip files", is that
    token; a date after one, "4.19.0, 18 August 2022", is dropped); a user handle after a name
    ("Thomas Leonard tal197") is dropped too. Other spans are returned as they are."""
    if not 0 <= start < end <= len(text):
        return start, end
    s0, e0 = _token_at(text, start)
    if s0 < start < e0 and is_technical(text[s0:e0]):
        start = s0
    s1, e1 = _token_at(text, end - 1)
    if s1 < end < e1 and is_technical(text[s1:e1]):
        end = e1
    s0, e0 = _token_at(text, start)
    if s0 == start and e0 < end and is_technical(text[s0:e0]) and text[e0:end].strip(_TOKEN_EDGE + ". "):
        return start, e0
    words = text[start:end].split()
    if len(words) >= 3 and _HANDLE.match(words[-1]) and words[-2][:1].isupper():
        return start, text.rindex(words[-1], start, end) - 1
    for m in re.finditer(r"\S+", text[start:end]):
        tok = m.group(0).strip(_TOKEN_EDGE + ".")
        if is_technical(tok) and _TRAILING_DATE.match(text[start + m.end():end].lstrip(".")):
            return start, start + m.start() + len(m.group(0).rstrip(_TOKEN_EDGE + "."))
    return start, end
