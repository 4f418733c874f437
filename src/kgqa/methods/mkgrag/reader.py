"""The CPU reader of mKG-RAG: an extractive answer from the retrieved context, no language model.

mKG-RAG ("mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for
Knowledge-intensive VQA", Section 3.2.2, last paragraph) feeds the retrieved graph elements and their
chunks to an MLLM. Where no model is served, the learned span reader (learned.py) answers by default; this
rule reader (``reader=rules`` or ``cpu``; the default before 2026-12-06, and the fallback when the learned
reader's checkpoint cannot load) reads the answer from the same context with word-cosine rules:

1. **answer type** of the question, from its wh-word and the noun after it: year, date, count,
   quantity (a number with a unit or a ratio), person, place, organisation, name (``called`` /
   ``name of``) or other, and the question's *type noun* ("which **mission**", "how many **engines**");
2. **candidates**: the typed spans (``kgqa.core.spans``) of every sentence of the retrieved chunks,
   and the entities of the query subgraph G_r with the sentence they came from;
3. **score** = cos(MiniLM(heading: sentence), MiniLM(question))            the sentence answers it
   + type fit (1 for the asked kind, ½ for a compatible one)                  the answer's shape
   + ½ · question words within six words of the candidate                   where in the sentence
   + ¼ · the type noun next to the candidate, + ¼ for a naming cue ("called", "known as") on a name
   + 0.35 · the candidate is the tail of an edge of G_r read from this sentence whose head is the question's
     subject (what the image shows, or a node the question names), ¼ · of any edge of G_r read from this
     sentence, 0.1 · it is a node of G_r or its sentence the provenance of an edge of G_r
   − candidates the question (or what the image shows, or the document's title) already names;
4. the best candidate is the answer, its sentence the evidence; the reader abstains without a
   candidate of the asked type, when none of the names the question gives occurs in the chunk the
   best candidate is read from, or below ``min_sentence_cos`` (its sentence is not about the question).

Weights are round numbers chosen from the answer-type taxonomy, not fitted per question; see
bench/mkgrag.py for how they were checked (two folds of the bundled questions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgqa.core.kg import label_key
from kgqa.core.spans import NUMBER_WORDS, Span, sentences, spans, text_sentences

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
_MODIFIER = re.compile(r"\b(?:a|an|the)\s*$", re.IGNORECASE)
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|to)\s*$", re.IGNORECASE)
_NAMING_CUE = re.compile(r"(?:called|known as|named|nicknamed|termed|name is)\s*$", re.IGNORECASE)
_ORG_WORDS = {"company", "agency", "corporation", "inc", "ltd", "university", "institute", "organisation",
              "organization", "nasa", "spacex", "force", "society", "association"}


@dataclass
class Candidate:
    text: str
    kind: str
    sentence: str
    heading: str
    chunk_id: str | None
    doc_id: str | None
    start: int = -1                    # the span's offset in the sentence (-1: a graph node)
    from_graph: bool = False
    score: float = 0.0
    sentence_cos: float = 0.0
    span: str = ""                     # the span it was read from when that differs (a date's year)


@dataclass
class Reading:
    answer: str | None
    answer_type: str
    type_noun: str | None
    candidate: Candidate | None
    candidates: int
    reason: str
    debug: list | None = None          # every candidate, best first (``debug=True``)
    cpu_reader: str = "rules"          # rules (this module) | learned (learned.py)


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


def _content_words(text: str) -> set[str]:
    return {w for w in label_key(text).split() if w not in _STOP and len(w) > 1}


def _stem(w: str) -> str:
    return w[:-1] if w.endswith("s") and not w.endswith("ss") else w


_NAMING_WORDS = {"called", "call", "calls", "named", "name", "names", "known", "nicknamed", "termed"}


#: a count as the CPU extractor names it: the number, then what it counts ("nine Merlin engines", "5,500 galaxies")
_COUNT_NAME = re.compile(rf"^(\d[\d,.]*|{'|'.join(NUMBER_WORDS)})\s+[A-Za-z]", re.IGNORECASE)


def _count_of(tail: str) -> str:
    """An edge's tail (a name) as the label key of the candidate it stands for: a count's number ("nine" of
    "nine Merlin engines", what the reader's candidate is), else the whole name."""
    m = _COUNT_NAME.match(tail)
    return label_key(m.group(1) if m else tail)


def _root(w: str) -> str:
    """A crude word root, so that "designed", "designer" and "design" meet (suffixes of English inflection);
    the naming words ("called", "known as", "name") share one."""
    if w in _NAMING_WORDS:
        return "name"
    for suf in ("ing", "ed", "er", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 4 and not w.endswith("ss"):
            return w[:-len(suf)]
    return w


def read(question: str, chunks: list[dict], elements: list, embed, *, image_note: str | None = None,
         titles: dict[str, str] | None = None, doc_cos: dict[str, float] | None = None,
         doc_titles: dict[str, str] | None = None, min_sentence_cos: float = 0.3, debug: bool = False) -> Reading:
    """The extractive answer (see the module doc). ``chunks``: {id, doc_id, title, text, sections};
    ``elements``: mKG-RAG's G_r (kind, name, text, chunk_ids, doc_id; a relation's phrase and relation_name);
    ``embed``: texts → unit vectors; ``titles``: the top document's title (its subject is not an answer);
    ``doc_titles``: every retrieved document's title (where a candidate is read includes its document's title)."""
    atype, noun = answer_type(question)
    asked, allowed = KINDS[atype]
    cands: list[Candidate] = []
    chunk_text = {c["id"]: f"{c.get('title') or ''} {c['text']}" for c in chunks}
    doc_titles = doc_titles or {}

    def where(x: Candidate) -> str:
        """The text a candidate is read from: its chunk (with the document's title), else its sentence and title."""
        return " ".join([chunk_text.get(x.chunk_id) or "", doc_titles.get(x.doc_id or "", ""), x.sentence])
    for c in chunks:
        heading = (c.get("sections") or [""])[0]
        for sent in text_sentences(c["text"]):
            if sent in (c.get("sections") or []):
                heading = sent
                continue
            for sp in spans(sent):
                cands += _typed(sp, sent, heading, c["id"], c.get("doc_id"), atype)
    rel_sentences = set()
    for el in elements:
        if el.kind == "relation":
            rel_sentences.add(" ".join(el.text.split(":", 1)[-1].split()))
    graph_names = {label_key(el.name) for el in elements if el.kind == "entity"}
    # the edges of G_r as (tail, sentence): a candidate that is the tail of an edge read from its own sentence
    rel_elements = [el for el in elements if el.kind == "relation" and " -> " in el.name]
    edges = [(label_key(el.name.split(" -> ", 1)[0]), _count_of(el.name.split(" -> ", 1)[-1]),
              " ".join(el.text.split(": ", 2)[-1].split())) for el in rel_elements]
    graph_facts = {(t, sent) for _, t, sent in edges}
    # what each edge of G_r says: its relation phrase and relation catalogue name, as word roots
    edge_words: dict[tuple[str, str], set[str]] = {}
    for el, (_, t, sent) in zip(rel_elements, edges):
        words = {_root(w) for w in _content_words(f"{getattr(el, 'phrase', '')} {getattr(el, 'relation_name', '')}")}
        edge_words.setdefault((t, sent), set()).update(words)
    # the question's subject in G_r: what the image shows, or a G_r node the question names
    qk = f" {label_key(question)} "
    subject_keys = {label_key(image_note)} if image_note else set()
    if image_note:       # the document KG's node for what the image shows ("Flag of Denmark" for "Denmark")
        subject_keys |= {n for n in graph_names if f" {label_key(image_note)} " in f" {n} "}
    subject_keys |= {n for n in graph_names if len(n) > 2 and f" {n} " in qk}
    subject_facts = {(t, sent) for h, t, sent in edges if h in subject_keys}
    seen_sentences = {x.sentence for x in cands}
    for el in elements:                      # G_r: its nodes and the sentences its edges were read from
        if not el.name:
            continue
        chunk_id = (el.chunk_ids or [None])[0]
        if el.kind == "relation":
            text = " ".join(el.text.split(": ", 2)[-1].split()) if el.text.count(": ") >= 2 else ""
        else:
            text = el.text.split("): ", 1)[-1] if "): " in el.text else ""
            text = text.split(" [depicted in an image")[0]
        for sent in sentences(text):
            if sent in seen_sentences:
                continue
            seen_sentences.add(sent)
            for sp in spans(sent):
                cands += _typed(sp, sent, "", chunk_id, el.doc_id, atype, from_graph=True)
    cands = [x for x in cands if x.kind in asked + allowed]
    if image_note:
        # what the image shows must be where the answer is read (as the names the question gives, below)
        about = [x for x in cands if _occurs(label_key(image_note), where(x))]
        cands = about or cands
    if not cands:
        return Reading(None, atype, noun, None, 0, f"no {atype} in the retrieved context")
    # what the question already names is not its answer
    qkey = label_key(question)
    known = _content_words(question) | _content_words(image_note or "")
    subjects = {label_key(t) for t in (titles or {}).values()}
    texts = list(dict.fromkeys(f"{x.heading}: {x.sentence}" if x.heading else x.sentence for x in cands))
    vecs = embed([question] + texts)
    qv, sv = vecs[0], {t: float(v @ vecs[0]) for t, v in zip(texts, vecs[1:])}
    qwords = {_stem(w) for w in _content_words(question)}
    # the question's relation words: its content words less the names it gives and what the image shows
    named = set()
    for sp in spans(question):
        if sp.kind == "name" and sp.start > 0:
            named |= _content_words(sp.text)
    qrel = {_root(w) for w in _content_words(question) - named - _content_words(image_note or "")}
    noun_root = _root(noun) if noun else None
    if atype in ("count", "quantity"):       # "how many galaxies": the noun is what is counted, not the relation
        qrel.discard(noun_root)
        noun_root = None
    best: dict[str, Candidate] = {}
    for x in cands:
        key = label_key(x.text)
        words = set(key.split())
        if not key or (words and words <= known) or f" {key} " in f" {qkey} " or key in subjects:
            continue
        x.sentence_cos = sv[f"{x.heading}: {x.sentence}" if x.heading else x.sentence]
        fit = 1.0 if x.kind in asked else 0.5
        near = _near(x, qwords)
        noun_bonus = 0.25 if noun and x.start >= 0 and _noun_next(x, noun) else 0.0
        cue = 0.25 if atype in ("name", "other") and x.start > 0 and _NAMING_CUE.search(x.sentence[:x.start]) \
            else 0.0
        fact = (key, " ".join(x.sentence.split()))
        graph = (0.35 if fact in subject_facts else 0.25 if fact in graph_facts
                 else 0.1 if (key in graph_names or " ".join(x.sentence.split()) in rel_sentences) else 0.0)
        said = edge_words.get((label_key(x.span), fact[1]) if x.span else fact, set())
        relation = ((0.5 if noun_root and noun_root in said else 0.0)
                    + (len(said & qrel) / len(qrel) if qrel else 0.0))
        shape = _shape(x, atype)
        if atype == "place" and x.start > 0 and _PLACE_CUE.search(x.sentence[:x.start]):
            shape += 0.2
        repeat = len(words & known) / len(words) if words else 0.0      # words the question already has
        doc = 0.5 * (doc_cos or {}).get(x.doc_id, 0.0)                     # stage 1's cosine of its document
        x.score = x.sentence_cos + fit + 0.5 * near + noun_bonus + cue + graph + relation + shape + doc - 0.5 * repeat
        if key not in best or x.score > best[key].score:
            best[key] = x
    if not best:
        return Reading(None, atype, noun, None, len(cands), "every candidate is named by the question")
    ranked = sorted(best.values(), key=lambda x: (x.score, not x.from_graph), reverse=True)
    top = ranked[0]
    # the names the question itself gives ("the Mona Lisa"): one must occur where the answer is read
    q_names = [label_key(x.text) for x in spans(question) if x.kind == "name" and x.start > 0]
    if q_names and not any(_occurs(n, where(top) + " " + (titles or {}).get(top.doc_id or "", "")) for n in q_names if n):
        return Reading(None, atype, noun, top, len(best),
                       f"abstained: what the question names ({', '.join(q_names)}) is not where the best candidate "
                       "was read")
    if top.sentence_cos < min_sentence_cos:
        return Reading(None, atype, noun, top, len(best),
                       f"abstained: the best sentence's cosine {top.sentence_cos:.2f} < {min_sentence_cos}")
    return Reading(top.text, atype, noun, top, len(best), "read from the retrieved context",
                   ranked if debug else None)


def _occurs(name_key: str, text: str) -> bool:
    """The name (a label key) occurs in ``text``; a name of the form "A of B" ("the Temperate House of Marlow
    Botanical Garden") also when A and B occur apart (the row names A, the document's title B)."""
    t = f" {label_key(text)} "
    return f" {name_key} " in t or (" of " in name_key and all(f" {p.strip()} " in t
                                                               for p in name_key.split(" of ") if p.strip()))


def _typed(sp: Span, sent: str, heading: str, chunk_id, doc_id, atype: str, from_graph: bool = False) -> list:
    """The candidate(s) a span gives for the answer type (a date also gives its year to a year question)."""
    out = [Candidate(sp.text, sp.kind, sent, heading, chunk_id, doc_id, sp.start, from_graph)]
    if sp.kind == "date" and atype in ("year", "other"):
        y = re.search(r"\d{3,4}$", sp.text)
        if y:
            out.append(Candidate(y.group(0), "year", sent, heading, chunk_id, doc_id, sp.start, from_graph,
                                 span=sp.text))
    if sp.kind == "measure" and atype == "count":
        out.append(Candidate(sp.text.split()[0], "count", sent, heading, chunk_id, doc_id, sp.start, from_graph,
                             span=sp.text))
    return out


def _near(x: Candidate, qwords: set[str], window: int = 6) -> float:
    """The share of the question's content words within ``window`` words of the candidate in its sentence."""
    if x.start < 0 or not qwords:
        return 0.0
    before = label_key(x.sentence[:x.start]).split()[-window:]
    after = label_key(x.sentence[x.start + len(x.text):]).split()[:window]
    hit = {_stem(w) for w in before + after} & qwords
    return len(hit) / len(qwords)


def _noun_next(x: Candidate, noun: str) -> bool:
    """The type noun right after the candidate ("nine Merlin engines") or right before it ("mission STS-93")."""
    n = _stem(noun)
    after = [_stem(w) for w in label_key(x.sentence[x.start + len(x.text):]).split()[:3]]
    before = [_stem(w) for w in label_key(x.sentence[:x.start]).split()[-3:]]
    return n in after or n in before or n in [_stem(w) for w in label_key(x.text).split()]


def _shape(x: Candidate, atype: str) -> float:
    """Small preferences inside the name types: a person's name has two or more words and no digit; a place
    or person is not an organisation's name; an organisation's is."""
    if x.kind != "name":
        return 0.0
    words = label_key(x.text).split()
    has_digit = any(ch.isdigit() for ch in x.text)
    org = bool(set(words) & _ORG_WORDS) or (x.text.isupper() and len(x.text) > 2)
    if len(words) == 1 and x.start > 0 and _MODIFIER.search(x.sentence[:x.start]) \
            and re.match(r"\s+[a-z]", x.sentence[x.start + len(x.text):]):
        return -0.3              # "an American astronomer", "the Danish architect": a modifier, not a name
    if atype == "person":
        return (0.2 if len(words) >= 2 else 0.0) - (0.5 if has_digit else 0.0) - (0.3 if org else 0.0)
    if atype == "place":
        return -(0.5 if has_digit else 0.0) - (0.3 if org else 0.0)
    if atype == "organisation":
        return 0.2 if org else 0.0
    return 0.0
