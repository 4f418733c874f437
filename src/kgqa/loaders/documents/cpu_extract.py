"""Step 3 without a large model: a document's KG from its structure and its sentences (the CPU extractor).

mKG-RAG ("mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for
Knowledge-intensive VQA", Section 3.1.1) prompts an MLLM for each segment's entities and relations;
that extractor stays (``kgqa.loaders.documents.extract``) and is chosen when a chat server is
configured. On a CPU-only machine SmolLM2-135M extracts almost nothing, so this module builds the
same shape of graph (entities with a description, relations head → tail with a summary) by rules:

* the **subject**: the document's title is its subject entity (type ``subject``), described by the
  document's first sentence; linked to Wikidata through the label-key index (``link_subject``);
* **structured facts**: a ``Key: value`` line (or list item) is subject -key-> value; a Markdown table
  row is row[0] -column-> cell for every other column (row[0] itself hangs off the subject); a plain
  list item is subject → item. The section heading is the fact's context;
* **sentences**: the typed spans of ``kgqa.core.spans`` (names, dates, years, numbers with their unit,
  ratios) and the sentence's technical tokens (paths, MIME types, identifiers, file names, flags, versions:
  ``spans.is_technical``, type ``identifier``) become entities; each sentence relates its head (the name it
  opens with, else the subject) to every other span, the summary and provenance being the sentence;
* **entities worth reading** (``_worthy``): a number is an entity only with what it counts ("nine Merlin
  engines", a table cell with its column: "410,000 visitors"), never bare ("100", "2.13"); a single
  capitalised word that the document also writes in lower case is an ordinary word at a sentence's start
  ("Users", "Data", "SHOULD"), not a name; a fragment (one letter, an identifier cut at a line end,
  "ASN1_") is left out; a ``Key: value`` line's long value (a clause) is not one entity, its own spans are;
* **relation phrases**: an edge's phrase is the words between its head's and its tail's spans (from the
  sentence's start when the head is not named in it), other spans left out; a structured fact's is its key,
  a table cell's its column. Stored on the ``DOC_REL`` edge (``phrase``) and mapped to the relation
  catalogue of the Wikidata KG (names and aliases, all-MiniLM-L6-v2 cosine ≥ ``RELATION_MIN_COS``),
  stored on the edge as ``relation_id`` / ``relation_name``. The CPU reader of mKG-RAG matches the
  question's words against them.

Interpretations: a span equal to, or contained in, the title is the subject itself; the whole-image
region of the CPU stand-in is matched to the entity its alt text names, else to the subject (an
illustrated article's images show what it is about) — no model is asked.
"""

from __future__ import annotations

import re

from kgqa.core.spans import (YEAR_RE, Span, is_technical, list_item, row_sentence, sentences, spans, structured_line,
                             table_rows)
from kgqa.loaders.documents.kg import DocumentKG, KGEntity, KGRelation, name_key
from kgqa.loaders.documents.parse import ParsedDocument
from kgqa.loaders.documents.segment import Chunk

CPU_EXTRACTOR = "cpu-rules-4"
RELATION_MIN_COS = 0.55
_PRONOUN_START = re.compile(r"^(?:it|its|he|his|she|her|they|their|this|the \w+)\b", re.IGNORECASE)
_SPAN_TYPES = {"date": "date", "year": "date", "ratio": "quantity", "measure": "quantity", "count": "quantity",
               "name": "name", "identifier": "identifier"}
#: a bare number (digits and their separators), a section number, a hexadecimal offset
_BARE_NUMBER = re.compile(r"^[\d\s.,:%/+-]*$|^[0-9a-fA-F]{4,}$")
#: a fact's value longer than this (words) is a clause, not one entity
MAX_VALUE_WORDS = 4
#: words that do not end a name or a counted noun ("END The", "one passage of")
_STOP = r"(?:the|a|an|this|these|that|it|its|here|there|do|does|if|of|in|on|at|by|to|for|with|from|and|or|is|are|" \
        r"was|were|be|other|more|less)"
_TRAILING_STOP = re.compile(rf"(?:\s+{_STOP})+$", re.IGNORECASE)
#: what a number counts: one or two words after it ("nine Merlin engines"), not a stop word
_COUNTED = re.compile(rf"[ \t]+(?!{_STOP}\b)[A-Za-z][a-z-]{{2,}}(?!\w)(?:[ \t]+(?!{_STOP}\b)[a-z][a-z-]{{2,}}(?!\w))?",
                      re.IGNORECASE)
#: the characters of a technical token kept as an entity (not a line of a hex dump)
_IDENTIFIER = re.compile(r"^[~*\w./-][\w.+~/:@#*-]*$")
LITERAL_TYPES = ("date", "quantity")


def _is_subject(name: str, title: str) -> bool:
    k, t = name_key(name), name_key(title)
    return bool(k) and (k == t or (len(k) > 3 and f" {k} " in f" {t} "))


def cpu_text_graph(doc: ParsedDocument, chunks: list[Chunk], kg: DocumentKG) -> KGEntity | None:
    """Fill ``kg`` from the chunks' structure and sentences; returns the subject entity."""
    if not chunks:
        return None
    first = next((s for c in chunks for s in sentences(_body(c)) if not structured_line(s)), doc.title)
    subject = kg.add_entity(doc.id, doc.title, "subject", first, chunks[0].id)
    doc = _Doc(doc, chunks)
    for ch in chunks:
        heading = ch.sections[0] if ch.sections else ""
        table: list[str] = []
        for line in ch.text.split("\n"):
            s = line.strip()
            if not s:
                continue
            if s in ch.sections:                         # a heading line of a merged chunk
                heading = s
                continue
            if s.startswith("|"):
                table.append(s)
                continue
            if table:
                _table(doc, ch, kg, subject, table_rows(table), heading)
                table = []
            kv = structured_line(s)
            if kv:
                _fact(doc, ch, kg, subject, kv[0], kv[1], s, heading)
                continue
            item = list_item(s)
            if item is not None and len(item.split()) <= 8:
                _fact(doc, ch, kg, subject, heading or "item", item, s, heading)
                continue
            for sent in sentences(item if item is not None else s):
                _sentence(doc, ch, kg, subject, sent, heading)
        if table:
            _table(doc, ch, kg, subject, table_rows(table), heading)
    return subject


class _Doc:
    """The document as the rules read it: its id and title, and the words it writes in lower case."""

    def __init__(self, doc: ParsedDocument, chunks: list[Chunk]):
        self.id, self.title = doc.id, doc.title
        self.common = {w for c in chunks for w in re.findall(r"(?<![\w/])[a-z][a-z'’-]+\b", c.text)}


def _worthy(doc, text: str, kind: str) -> bool:
    """An entity worth a graph node (module doc): not a bare number, not an ordinary word capitalised at a
    sentence's start, not a fragment."""
    t = text.strip()
    if len(t) < 2 or t.endswith(("_", "-")) or _BARE_NUMBER.match(t) and kind not in ("date", "year", "ratio"):
        return False
    if doc and kind == "name" and " " not in t and t.lower() in doc.common and not _is_subject(t, doc.title):
        return False
    return len(t.split()) <= 12


def _counted(sent: str, x: Span) -> Span | None:
    """A count span with what it counts ("nine Merlin engines"), or None when the number stands alone."""
    m = _COUNTED.match(sent, x.end)
    if m is None:
        return None
    return Span(sent[x.start:m.end()], x.start, m.end(), "count")


def _technical(sent: str) -> list[Span]:
    """The sentence's technical tokens (``spans.is_technical``) as identifier spans."""
    out = []
    for m in re.finditer(r"\S+", sent):
        tok = m.group(0)
        lead = len(tok) - len(tok.lstrip("([{\"'‘“<"))
        core = tok.strip("()[]{}<>\"'‘’“”,;:!?").rstrip(".")
        if len(core) >= 3 and is_technical(core) and _IDENTIFIER.match(core) and _worthy(None, core, "identifier"):
            out.append(Span(core, m.start() + lead, m.start() + lead + len(core), "identifier"))
    return out


def _sentence_spans(doc, sent: str) -> list[Span]:
    """The entities of a sentence: its technical tokens, then the typed spans that do not overlap them, counts
    with what they count; only those ``_worthy``."""
    tech = _technical(sent)
    out = list(tech)
    for x in spans(sent):
        if any(x.start < t.end and t.start < x.end for t in tech):
            continue
        if x.kind == "count":
            x = _counted(sent, x)
        elif x.kind == "name" and _TRAILING_STOP.search(x.text):
            text = _TRAILING_STOP.sub("", x.text)
            x = Span(text, x.start, x.start + len(text), "name")
        if x is not None and _worthy(doc, x.text, x.kind):
            out.append(x)
    return sorted(out, key=lambda x: x.start)


def _body(c: Chunk) -> str:
    return "\n".join(ln for ln in c.text.split("\n") if ln.strip() not in c.sections)


def _entity(doc, ch, kg, subject, text: str, kind: str, desc: str) -> KGEntity:
    if kind == "name" and _is_subject(text, doc.title):
        return subject
    return kg.add_entity(doc.id, text, _SPAN_TYPES.get(kind, kind), desc, ch.id)


def _relate(doc, ch, kg, head: KGEntity, tail: KGEntity, sentence: str, heading: str, phrase: str) -> None:
    if head is tail:
        return
    r = kg.add_relation(doc.id, head.name, tail.name, sentence, ch.id)
    if r is not None and not r.sentence:
        r.sentence, r.context, r.phrase = sentence, heading, phrase


def _fact(doc, ch, kg, subject, key: str, value: str, line: str, heading: str) -> None:
    """subject -key-> value; a long value (a clause) is no entity: subject -key-> each of its own spans. A bare
    number is named with its key ("Floors: 81" → "81 floors")."""
    value = value.strip(" .")
    if len(value.split()) > MAX_VALUE_WORDS:
        for x in _sentence_spans(doc, value):
            _relate(doc, ch, kg, subject, _entity(doc, ch, kg, subject, x.text, x.kind, line), line, heading, key)
        return
    sp = spans(value)
    kind = sp[0].kind if len(sp) == 1 and sp[0].text == value else "name"
    text = _with_noun(value, key)
    if _worthy(doc, text, kind):
        _relate(doc, ch, kg, subject, _entity(doc, ch, kg, subject, text, kind, line), line, heading, key)


def _with_noun(value: str, noun: str) -> str:
    """A bare number named with what it counts (a key, a table column): "81" of "Floors" → "81 floors"."""
    if _BARE_NUMBER.match(value) and any(ch.isdigit() for ch in value) and noun and not YEAR_RE.fullmatch(value):
        return f"{value} {noun.lower()}"
    return value


def _table(doc, ch, kg, subject, rows: list[list[str]], heading: str) -> None:
    if len(rows) < 2:
        return
    header = rows[0]
    for row in rows[1:]:
        if not row or not row[0]:
            continue
        line = row_sentence(header, row)
        first = _with_noun(row[0], header[0] if header else "")
        kind = "year" if YEAR_RE.fullmatch(first) else "value"
        head = _entity(doc, ch, kg, subject, first, "name", line) if _worthy(doc, first, kind) else subject
        _relate(doc, ch, kg, subject, head, line, heading, header[0] if header else heading)
        for h, cell in zip(header[1:], row[1:]):
            if cell:
                sp = spans(cell)
                kind = sp[0].kind if len(sp) == 1 and sp[0].text == cell.strip(" .") else "value"
                text = _with_noun(cell, h)
                if _worthy(doc, text, kind):
                    tail = _entity(doc, ch, kg, subject, text, "name" if kind == "value" else kind, line)
                    _relate(doc, ch, kg, head, tail, line, heading, h)


def _sentence(doc, ch, kg, subject, sent: str, heading: str) -> None:
    sp = _sentence_spans(doc, sent)
    if not sp:
        return
    ents = [(x, _entity(doc, ch, kg, subject, x.text, x.kind, sent)) for x in sp]
    # the head: the name the sentence opens with, else (a pronoun, "The flag …") the subject
    head = subject
    if sp[0].start <= 4 and sp[0].kind in ("name", "identifier") and not _PRONOUN_START.match(sent):
        head = ents[0][1]
    elif _PRONOUN_START.match(sent) is None and sp[0].kind in ("name", "identifier") and sp[0].start < 12:
        head = ents[0][1]
    where = {id(e): x for x, e in reversed(ents)}           # an entity's first span in the sentence
    whole = _phrase(sent, sp, 0, len(sent))
    if head is not subject:
        _relate(doc, ch, kg, subject, head, sent, heading, _between(sent, sp, where.get(id(subject)),
                                                                    where[id(head)]) or whole)
    for x, e in ents:
        _relate(doc, ch, kg, head, e, sent, heading, _between(sent, sp, where.get(id(head)), x) or whole)


def _between(sent: str, sp, a, b) -> str:
    """The relation phrase of one edge: the words between its two spans (``a`` None: the head is not named in
    the sentence, "It was designed by …", so from the sentence's start), other spans left out."""
    if a is None:
        return _phrase(sent, sp, 0, b.start)
    if a is b:
        return ""
    lo, hi = (a.end, b.start) if a.start < b.start else (b.end, a.start)
    return _phrase(sent, sp, lo, hi)


def _phrase(sent: str, sp, lo: int, hi: int) -> str:
    """The words of ``sent[lo:hi]`` that are not spans (what states the relation)."""
    out, last = [], lo
    for x in sp:
        if x.start >= lo and x.end <= hi:
            out.append(sent[last:x.start])
            last = x.end
    out.append(sent[last:hi])
    return " ".join(" ".join(out).replace(",", " ").replace(";", " ").split()).strip(" .:")


def match_stand_in_regions(doc: ParsedDocument, chunks: list[Chunk], kg: DocumentKG, subject: KGEntity | None,
                           stand_in: bool) -> None:
    """The whole-image region of each image: to the entity its alt text names, else the subject."""
    if subject is None:
        return
    for ch in chunks:
        for im in ch.images:
            target = subject
            for x in spans(im.alt or ""):
                e = kg.entities.get(name_key(x.text))
                if e is not None and e.type not in LITERAL_TYPES:
                    target = e
                    break
            kg.regions.append({"id": f"{target.id}:g:{im.sha256[:8]}:o0", "entity_id": target.id,
                               "bbox": [0.0, 0.0, 1.0, 1.0], "category": im.alt or "image",
                               "image_sha256": im.sha256, "stand_in": stand_in})


# --------------------------------------------------------------------------- linking and relation phrases
def link_subject(graph, subject: KGEntity) -> dict | None:
    """The subject's Wikidata entity by its title's label key (exact name or alias), or None."""
    from kgqa.core.kg import label_key

    key = label_key(subject.name)
    if not key:
        return None
    rows = graph.read("entity_label_search", query=f'"{key}"', k=3)
    return {"docentity_id": subject.id, "entity_id": rows[0]["id"], "score": 1.0} if rows else None


class RelationCatalogue:
    """The Wikidata KG's relations (names and aliases), embedded once per load, to map relation phrases."""

    def __init__(self, graph, encoder):
        import numpy as np

        rows = graph.read("kg_relation_catalogue")
        self.labels: list[tuple[str, str]] = []
        texts: list[str] = []
        for r in rows:
            for label in [r["name"], *(r.get("aliases") or [])]:
                if label:
                    self.labels.append((r["id"], r["name"]))
                    texts.append(label)
        self.vecs = _unit(np.asarray(encoder.encode(texts), dtype=np.float32)) if texts else None
        self.encoder = encoder

    def assign(self, relations: list[KGRelation]) -> int:
        """Set relation_id / relation_name of the relations whose phrase maps to the catalogue; returns how many."""
        import numpy as np

        todo = [r for r in relations if r.phrase]
        if self.vecs is None or not todo:
            return 0
        phrases = list(dict.fromkeys(r.phrase for r in todo))
        pv = _unit(np.asarray(self.encoder.encode(phrases), dtype=np.float32))
        sims = pv @ self.vecs.T
        best = {p: (int(sims[i].argmax()), float(sims[i].max())) for i, p in enumerate(phrases)}
        n = 0
        for r in todo:
            j, cos = best[r.phrase]
            if cos >= RELATION_MIN_COS:
                r.relation_id, r.relation_name = self.labels[j]
                n += 1
        return n


def _unit(v):
    import numpy as np

    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
