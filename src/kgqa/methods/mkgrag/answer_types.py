"""The answer type of a question and the names it gives, as both CPU readers of mKG-RAG use them.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA" (Section 3.2.2) answers with an MLLM; without one, the rule reader (``rule_reader``) and the learned reader
(``learned_reader``) type the question by its wh-word and the noun after it (year, date, count, quantity, person,
place, organisation, name, other) and look for what it names where the answer is read.
"""

from __future__ import annotations

import re

from kgqa.core.kg import label_key

_STOP = set("""a an the of in on at to for from by with and or is was are were be been did do does what which who whom
whose when where how many much this that these those shown here photo image picture it its as into about
there their his her""".split())
PLACE_NOUNS = {"country", "city", "state", "continent", "constellation", "region", "place", "town", "capital",
               "river", "mountain", "island", "province", "county", "location", "nation", "village", "sea", "ocean"}
ORG_NOUNS = {"company", "organisation", "organization", "agency", "university", "team", "band", "party",
             "manufacturer", "firm", "institution", "club", "school", "airline", "publisher", "producer"}
PERSON_NOUNS = {"person", "astronaut", "architect", "designer", "founder", "scientist", "engineer", "painter",
                "author", "writer", "inventor", "president", "king", "queen", "leader", "man", "woman",
                "astronomer", "artist", "composer", "director", "player", "actor", "pilot"}
QUANTITY_NOUNS = {"distance", "height", "length", "size", "diameter", "mass", "weight", "area", "depth", "speed",
                  "population", "width", "altitude", "temperature", "duration", "age"}
#: the kinds of span an answer type takes: first the asked kind (fit 1), then compatible ones (fit ½)
KINDS = {
    "year": (("year",), ("date",)),
    "date": (("date",), ("year",)),
    "count": (("count",), ("measure",)),
    "quantity": (("measure", "ratio"), ("count",)),
    "person": (("name",), ()),
    "place": (("name",), ()),
    "organisation": (("name",), ()),
    "name": (("name",), ()),
    "other": (("name",), ("measure", "count", "ratio", "date", "year")),
}


def type_noun(question: str) -> str | None:
    """The noun naming what is asked: after which/what (capitalised words skipped: "Which Space Shuttle
    **mission**"), after "how many", or X in "what is the (adjective) X of …" / "the name of the X"."""
    words = re.findall(r"[\w'’-]+", question)
    low = [w.lower() for w in words]
    for cue in ("many", "name"):
        if cue in low:
            i = low.index(cue) + 1
            if cue == "name" and i < len(low) and low[i] == "of":
                i += 1
            while i < len(low) and low[i] in ("the", "a", "an"):
                i += 1
            if i < len(low) and cue == "many" or (cue == "name" and i < len(low) and low[i - 1] != "name"):
                return low[i]
    if low and low[0] in ("which", "what") or "which" in low or "what" in low:
        i = low.index("which") if "which" in low else low.index("what")
        j = i + 1
        if j < len(low) and low[j] in ("is", "are", "was", "were"):           # what is the (adj) X of …
            k = j + 1
            while k < len(low) and low[k] in ("the", "a", "an"):
                k += 1
            if "of" in low[k:k + 3]:
                return low[k + low[k:k + 3].index("of") - 1]
            known = QUANTITY_NOUNS | PLACE_NOUNS | ORG_NOUNS | PERSON_NOUNS
            return next((w for w in low[k:k + 3] if w in known), None)
        while j < len(low) and words[j][:1].isupper():
            j += 1
        if j < len(low) and low[j] not in _STOP:
            return low[j]
    return None


def answer_type(question: str) -> tuple[str, str | None]:
    """(answer type, type noun) from the wh-word and the noun after which/what/how many."""
    q = " ".join(question.lower().replace("?", " ").split())
    noun = type_noun(question)
    sing = noun[:-1] if noun and noun.endswith("s") and not noun.endswith("ss") else noun
    if re.search(r"\b(?:in )?(?:which|what) year\b", q) or re.search(r"\bwhen\b.*\byear\b", q):
        return "year", "year"
    if re.search(r"\b(?:on )?(?:which|what) (?:date|day)\b", q) or q.startswith("when "):
        return "date", None
    if re.search(r"\bhow many\b", q):
        return "count", noun
    if re.search(r"\bhow (?:much|large|tall|high|long|far|big|heavy|wide|deep|old|fast)\b", q) \
            or re.search(r"\bproportions?\b|\bratio\b", q) or (sing in QUANTITY_NOUNS):
        return "quantity", noun
    if re.search(r"\b(?:who|whom)\b", q) or q.startswith("whose ") or sing in PERSON_NOUNS:
        return "person", noun
    if re.search(r"\bwhere\b", q) or sing in PLACE_NOUNS:
        return "place", noun
    if sing in ORG_NOUNS:
        return "organisation", noun
    if re.search(r"\b(?:called|named|known as|name of|name)\b", q):
        return "name", noun
    return "other", noun


def content_words(text: str) -> set[str]:
    return {w for w in label_key(text).split() if w not in _STOP and len(w) > 1}


def occurs(name_key: str, text: str) -> bool:
    """The name (a label key) occurs in ``text``; a name of the form "A of B" ("the Temperate House of Marlow
    Botanical Garden") also when A and B occur apart (the row names A, the document's title B)."""
    t = f" {label_key(text)} "
    return f" {name_key} " in t or (" of " in name_key and all(f" {p.strip()} " in t
                                                               for p in name_key.split(" of ") if p.strip()))
