"""The rule reader of mKG-RAG: an extractive answer from the retrieved context, no language model.

mKG-RAG ("mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for
Knowledge-intensive VQA", Section 3.2.2, last paragraph) feeds the retrieved graph elements and their
chunks to an MLLM. Where no model is served, the learned reader (``learned_reader``) answers by default;
this rule reader (``RuleReader``, ``reader=rules`` or ``cpu``; the default before 2026-12-06, and the
fallback when the learned reader's checkpoint cannot load) reads the answer from the same context with
word-cosine rules:

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

from kgqa.core.kg import label_key
from kgqa.core.spans import NUMBER_WORDS, Span, sentences, spans, text_sentences
from kgqa.methods.mkgrag.answer_types import KINDS, answer_type, content_words, occurs
from kgqa.methods.mkgrag.reading import ReadRequest
from kgqa.methods.mkgrag.records import Candidate, Reading

_MODIFIER = re.compile(r"\b(?:a|an|the)\s*$", re.IGNORECASE)
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|to)\s*$", re.IGNORECASE)
_NAMING_CUE = re.compile(r"(?:called|known as|named|nicknamed|termed|name is)\s*$", re.IGNORECASE)
_ORG_WORDS = {"company", "agency", "corporation", "inc", "ltd", "university", "institute", "organisation",
              "organization", "nasa", "spacex", "force", "society", "association"}


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


class RuleReader:
    """The rule reader (see the module doc): ``embed``: texts → unit vectors (the KG's encoder); it abstains below
    ``min_sentence_cos``; with ``debug`` its ``Reading`` lists every candidate, best first."""

    def __init__(self, embed, min_sentence_cos: float = 0.3, debug: bool = False):
        self.embed, self.min_sentence_cos, self.debug = embed, min_sentence_cos, debug

    def read(self, req: ReadRequest) -> Reading:
        """The extractive answer over the request's chunks and G_r (kind, name, text, chunk_ids, doc_id; a relation's
        phrase and relation_name): the top document's title is the subject (not an answer), and where a candidate
        is read includes its document's title."""
        question, chunks, elements, image_note = req.question, req.chunks, req.elements, req.image_note
        titles, doc_titles = req.subject_titles, req.doc_titles
        doc_cos = {d.id: d.cos for d in req.documents}
        embed, min_sentence_cos, debug = self.embed, self.min_sentence_cos, self.debug
        atype, noun = answer_type(question)
        asked, allowed = KINDS[atype]
        cands: list[Candidate] = []
        chunk_text = {c.id: f"{c.title or ''} {' '.join(c.heading_path)} {c.text}" for c in chunks}

        def where(x: Candidate) -> str:
            """The text a candidate is read from: its chunk (with the document's title and its heading path), else
            its sentence and title."""
            return " ".join([chunk_text.get(x.chunk_id) or "", doc_titles.get(x.doc_id or "", ""), x.sentence])
        for c in chunks:
            heading = (c.sections or [""])[0]
            for sent in text_sentences(c.text):
                if sent in c.sections:
                    heading = sent
                    continue
                for sp in spans(sent):
                    cands += _typed(sp, sent, heading, c.id, c.doc_id, atype)
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
            words = {_root(w) for w in content_words(f"{getattr(el, 'phrase', '')} {getattr(el, 'relation_name', '')}")}
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
            about = [x for x in cands if occurs(label_key(image_note), where(x))]
            cands = about or cands
        if not cands:
            return Reading(None, atype, noun, None, 0, f"no {atype} in the retrieved context")
        # what the question already names is not its answer
        qkey = label_key(question)
        known = content_words(question) | content_words(image_note or "")
        subjects = {label_key(t) for t in titles.values()}
        texts = list(dict.fromkeys(f"{x.heading}: {x.sentence}" if x.heading else x.sentence for x in cands))
        vecs = embed([question] + texts)
        qv, sv = vecs[0], {t: float(v @ vecs[0]) for t, v in zip(texts, vecs[1:])}
        qwords = {_stem(w) for w in content_words(question)}
        # the question's relation words: its content words less the names it gives and what the image shows
        named = set()
        for sp in spans(question):
            if sp.kind == "name" and sp.start > 0:
                named |= content_words(sp.text)
        qrel = {_root(w) for w in content_words(question) - named - content_words(image_note or "")}
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
            doc = 0.5 * doc_cos.get(x.doc_id, 0.0)                       # stage 1's cosine of its document
            x.score = (x.sentence_cos + fit + 0.5 * near + noun_bonus + cue + graph + relation + shape + doc
                       - 0.5 * repeat)
            if key not in best or x.score > best[key].score:
                best[key] = x
        if not best:
            return Reading(None, atype, noun, None, len(cands), "every candidate is named by the question")
        ranked = sorted(best.values(), key=lambda x: (x.score, not x.from_graph), reverse=True)
        top = ranked[0]
        # the names the question itself gives ("the Mona Lisa"): one must occur where the answer is read
        q_names = [label_key(x.text) for x in spans(question) if x.kind == "name" and x.start > 0]
        if q_names and not any(occurs(n, where(top) + " " + titles.get(top.doc_id or "", "")) for n in q_names if n):
            return Reading(None, atype, noun, top, len(best),
                           f"abstained: what the question names ({', '.join(q_names)}) is not where the best candidate "
                           "was read")
        if top.sentence_cos < min_sentence_cos:
            return Reading(None, atype, noun, top, len(best),
                           f"abstained: the best sentence's cosine {top.sentence_cos:.2f} < {min_sentence_cos}")
        return Reading(top.text, atype, noun, top, len(best), "read from the retrieved context",
                       ranked if debug else None)


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
