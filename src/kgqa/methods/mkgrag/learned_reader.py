"""mKG-RAG's learned reader (CPU): the best answer span over the retrieved context, by the span model
(``kgqa.models.heads.span_reader``, all-MiniLM-L6-v2 fine-tuned for span start/end), typed by the question.

mKG-RAG ("mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for
Knowledge-intensive VQA", Section 3.2.2) gives the retrieved graph elements and their chunks to an MLLM;
without one served, this reads the same context:

1. **passages**: every retrieved chunk's prose (with ``by_paragraph``, each of its paragraphs: the unit the span
   model was trained on), and each of its Markdown table's rows as a passage of its own
   (``Column: value; …``, ``kgqa.core.spans.text_lines``): a row is a record, read on its
   own rather than among its neighbours; bare as the span model was trained (no title line in front), and
   the G_r elements whose text no retrieved chunk holds (an entity's description, a relation's sentence) as
   one more passage each;
2. **spans**: the span model's best spans (at most ``max_answer_tokens``, 20, tokens) over all passages, each with
   its *margin*, the span's score (start + end logit) over its window's no-answer score; for a checkpoint trained
   with shared normalisation (Clark and Gardner, "Simple and Effective Multi-Paragraph Reading
   Comprehension", ACL 2018, arXiv:1710.10723; ``kgqa.models.heads.span_reader``) over the question's one
   no-answer score, the best of all its windows, so that spans of all passages rank by raw score (and
   mKG-RAG lets more chunks reach it: ``shared_norm_budget``);
3. **whole names**: a span that stops inside a proper name ("Skidmore" of "Skidmore, Owings and Merrill") is
   widened to the span model's longer guess from the same start when that only adds capitalised name words and
   scores at most ``NAME_SLACK`` below it (a round number, not fitted); a quantity question's span that stops
   before its unit ("about 330" of "about 330 metres") runs on to the end of the measure;
4. **typed by the question**: the answer type of the rule reader (``answer_types.answer_type``: year, date, count,
   quantity, person, place, organisation, name, other). A year, date, count or quantity question wants a span
   holding such a value (``kgqa.core.spans``), −``TYPE_PENALTY`` without; a person, place or organisation
   question and a span that is a G_r entity whose graph type is another of the three: −``TYPE_PENALTY`` (one
   of the same kind: +``TYPE_BONUS``). Spans the question (or what the image shows, or the top document's
   title) already names are not answers, nor spans holding ``RESTATED_WORDS`` consecutive words of the question
   (a clause restating it); a span read where a name the question gives (or what the image
   shows) occurs gains ``SUBJECT_BONUS``; with the passage ranker, ``rank_weight`` times the ranker's score of the
   span's chunk (read by paragraph: of its paragraph) below the best one's (a retrieval prior, as BERTserini weighs
   its retriever's: Yang et al., arXiv:1902.01718);
5. the best span is the answer and the sentence holding it the evidence; the reader abstains when the best
   margin is below the checkpoint's threshold (chosen on held-out training articles, ``threshold`` option to
   override), or when none of the names the question gives (nor what the image shows) occurs in the passage
   the best span is read from or in its chunk's heading path (document title › topic › section: a section that
   says "the tower" lies under "Eiffel Tower"), as the rule reader.

The passages are data, never instructions: the span model only ever scores spans of them.
"""

from __future__ import annotations

import re
from dataclasses import replace

from kgqa.core.kg import label_key
from kgqa.core.spans import paragraphs_of, spans, text_lines
from kgqa.methods.mkgrag.answer_types import (KINDS, ORG_NOUNS, PERSON_NOUNS, PLACE_NOUNS, answer_type,
                                              content_words, occurs)
from kgqa.methods.mkgrag.reading import ReadRequest
from kgqa.methods.mkgrag.records import Candidate, Reading

TYPE_PENALTY = 3.0
TYPE_BONUS = 0.5
SUBJECT_BONUS = 1.0
_NUMERIC = ("year", "date", "count", "quantity")
_GRAPH_KIND = {"person": PERSON_NOUNS | {"person", "people", "human", "individual"},
               "place": PLACE_NOUNS | {"location", "geo", "gpe", "landmark", "building"},
               "organisation": ORG_NOUNS | {"org", "organization", "organisation", "company", "group"}}


#: what continues a coordinated proper name cut at its comma or "and": ", Owings and Merrill", " & Gamble"
#: (not ", Missouri": a place's region is not part of its name)
_NAME_TAIL = re.compile(r"^(?:,?\s+[A-Z][\w.'&-]*)*,?\s+(?:and|&)\s+[A-Z][\w.'&-]*$")
NAME_SLACK = 1.0
#: what a span's text is stripped of at its ends (spaces and clause punctuation)
_SPAN_EDGE = " \t\n,;:."
#: a heading's numbering ("2.3 " of "2.3 Design"): not part of the name it gives
_NUMBERING = re.compile(r"^\d+(?:\.\d+)*\.?\s+")
#: a possessive ending of a name the question gives ("Did Karp's paper …"): the name is "Karp", not "karp s"
_POSSESSIVE = re.compile(r"['’]s$")


def _whole_names(guesses: list, passages: list[str]) -> list:
    """A span that stops inside a proper name ("Skidmore" of "Skidmore, Owings and Merrill") is widened to the
    longer guess from the same start when that one only adds capitalised name words joined by commas and
    ending in "and" / "&" (a coordinated name) and scores at most ``NAME_SLACK`` (start + end logits) below it; its score stays its own."""
    out = []
    for g in guesses:
        longer = [h for h in guesses if h.passage == g.passage and h.start == g.start and h.end > g.end
                  and h.score >= g.score - NAME_SLACK and _NAME_TAIL.match(passages[g.passage][g.end:h.end])]
        if longer:
            h = max(longer, key=lambda x: x.end)
            g = replace(g, end=h.end, text=passages[g.passage][g.start:h.end])
        out.append(g)
    return out


#: a span holding this many consecutive words of the question restates it ("Neil Armstrong was the first person
#: to walk on its …" for "Who was the first person to walk on …"): a clause, not an answer
RESTATED_WORDS = 3


def _restates(key: str, qkey: str, n: int = RESTATED_WORDS) -> bool:
    """The span (a label key) holds ``n`` consecutive words of the question (``qkey``: its label key, padded)."""
    w = key.split()
    return any(f" {' '.join(w[i:i + n])} " in qkey for i in range(len(w) - n + 1))


def _with_unit(text: str, at: int, sentence: str) -> str:
    """A quantity span that stops before its unit ("about 330" of "about 330 metres tall") runs on to the end of
    the measure it starts (``kgqa.core.spans``); ``at``: the span's offset in ``sentence``."""
    end = at + len(text)
    for sp in spans(sentence):
        if sp.kind == "measure" and at <= sp.start < end < sp.end:
            return sentence[at:sp.end]
    return text


def _graph_kind(etype: str) -> str | None:
    t = (etype or "").lower().strip()
    for kind, words in _GRAPH_KIND.items():
        if t in words or any(w in words for w in t.replace("_", " ").split()):
            return kind
    return None


def _passage(lines: list[str]) -> tuple[str, list[tuple[int, int, str]]]:
    """The passage text and each sentence's (start, end, sentence) in it. No title line before it: the
    span model was trained on bare paragraphs, and a "Title." line in front of the gold paragraph costs it 4.1
    EM points on SQuAD dev (articles 0–3 of the open bench, 120 questions, best span: 68.3 without, 64.2 with;
    docs/benchmarks.md)."""
    text, where = "", []
    for line in lines:
        if text:
            text += " "
        where.append((len(text), len(text) + len(line), line))
        text += line
        if line[-1:] not in ".!?:;":            # a heading or a table row ends as a sentence does
            text += "."
    return text, where


class LearnedReader:
    """The learned reader (see the module doc) with a loaded ``SpanReader`` (``model``): ``threshold``: the
    abstention margin (default: the checkpoint's); ``top``: the spans it asks of the model; ``prior_weight``: a
    span's margin gains this times its chunk's passage-ranker score (``ReadRequest.rank_scores``) less the best
    chunk's (a passage of no ranked chunk: the lowest score); ``by_paragraph``: each paragraph of a chunk's prose
    (blank-line separated) is a passage of its own, else the chunk's prose is one; ``rank_passages``: the passage
    ranker's scores of a list of passages, which then give the prior of each passage itself (a paragraph, the unit
    the ranker was trained on) in place of its chunk's."""

    def __init__(self, model, *, threshold: float | None = None, top: int = 20, prior_weight: float = 0.0,
                 by_paragraph: bool = False, rank_passages=None):
        self.model, self.threshold, self.top = model, threshold, top
        self.prior_weight, self.by_paragraph, self.rank_passages = prior_weight, by_paragraph, rank_passages

    def read(self, req: ReadRequest) -> Reading:
        """The learned reader's answer over the request's chunks and G_r."""
        question, chunks, elements, image_note = req.question, req.chunks, req.elements, req.image_note
        titles, doc_titles, prior = req.subject_titles, req.doc_titles, req.rank_scores
        model, threshold, top, prior_weight = self.model, self.threshold, self.top, self.prior_weight
        by_paragraph, rank_passages = self.by_paragraph, self.rank_passages
        atype, noun = answer_type(question)
        passages: list[str] = []
        meta: list[dict] = []
        held = set()
        for c in chunks:
            paras = [text_lines(p) for p in (paragraphs_of(c.text) if by_paragraph else [c.text])]
            lines = [x for p in paras for x in p]
            whole = [x for x, _ in lines]
            held |= {" ".join(x.split()) for x in whole}
            title = c.title or doc_titles.get(c.doc_id or "", "")
            # each paragraph's prose is one passage, each table row one of its own (a record, read on its own)
            groups, at = [], 0
            for p in paras:
                groups.append([at + i for i, (_, row) in enumerate(p) if not row])
                groups += [[at + i] for i, (_, row) in enumerate(p) if row]
                at += len(p)
            for idx in groups:
                if not idx:
                    continue
                text, where = _passage([whole[i] for i in idx])
                passages.append(text)
                meta.append({"chunk_id": c.id, "doc_id": c.doc_id, "where": where, "lines": whole,
                             "index": idx, "sections": c.sections, "graph": False, "title": title,
                             "path": c.heading_path})
        for el in elements:                      # G_r text that no retrieved chunk holds
            if el.kind == "relation":
                text = " ".join(el.text.split(": ", 2)[-1].split()) if el.text.count(": ") >= 2 else ""
            else:
                text = el.text.split("): ", 1)[-1] if "): " in el.text else ""
                text = text.split(" [depicted in an image")[0]
            text = " ".join(text.split())
            if not text or text in held:
                continue
            held.add(text)
            title = doc_titles.get(el.doc_id or "", "")
            ptext, where = _passage([text])
            passages.append(ptext)
            meta.append({"chunk_id": (el.chunk_ids or [None])[0], "doc_id": el.doc_id, "where": where, "lines": [text],
                         "index": [0], "sections": [], "graph": True, "title": title, "path": []})
        if not passages:
            return Reading(None, atype, noun, None, 0, "no retrieved context to read", reader_name="learned")
        guesses = _whole_names(model.read(question, passages, top=top), passages)
        etypes = {}
        for el in elements:
            if el.kind == "entity" and el.name and "(" in el.text:
                etypes[label_key(el.name)] = el.text.split("(", 1)[1].split(")", 1)[0]
        known = content_words(question) | content_words(image_note or "")
        qkey = f" {label_key(question)} "
        subjects = {label_key(t) for t in titles.values()}
        q_names = [label_key(_POSSESSIVE.sub("", x.text)) for x in spans(question) if x.kind == "name" and x.start > 0]
        if image_note:
            q_names.append(label_key(image_note))
        asked, allowed = KINDS[atype]
        use_prior = bool(prior) and prior_weight > 0
        p_top, p_low = (max(prior.values()), min(prior.values())) if use_prior else (0.0, 0.0)
        own = [float(x) for x in rank_passages(passages)] if use_prior and rank_passages else None
        if own:
            p_top = max(own)
        scored: list[tuple[float, Candidate]] = []
        for g in guesses:
            m = meta[g.passage]
            text = g.text.strip(_SPAN_EDGE)
            key = label_key(text)
            words = set(key.split())
            if not key or (words and words <= known) or f" {key} " in qkey or key in subjects or \
                    key in {label_key(_NUMBERING.sub("", h)) for h in m["path"]}:
                continue                     # the question's words, or the subject: its title, topic or section
            if _restates(key, qkey):
                continue
            si = next((k for k, (s0, s1, _) in enumerate(m["where"]) if s0 <= g.start < s1 and g.end <= s1 + 1), None)
            sent = None if si is None else (m["where"][si][0], m["where"][si][2])      # (offset, sentence)
            if sent is None or sent[1].rstrip(".") in {m["title"], *m["path"], *m["sections"]}:
                continue                                       # read from a heading line: the subject, not an answer
            if atype == "quantity" and not {sp.kind for sp in spans(text)} & set(asked):
                # ``text``'s offset in the sentence
                at = g.start - sent[0] + len(g.text) - len(g.text.lstrip(_SPAN_EDGE))
                text = _with_unit(text, at, sent[1])
                key = label_key(text)
            adj = 0.0
            if atype in _NUMERIC:
                kinds = {sp.kind for sp in spans(text)}
                adj += 0.0 if kinds & set(asked + allowed) else -TYPE_PENALTY
            elif atype in _GRAPH_KIND and key in etypes:
                gk = _graph_kind(etypes[key])
                adj += TYPE_BONUS if gk == atype else (-TYPE_PENALTY if gk else 0.0)
            if q_names and any(n and occurs(n, " ".join(m["lines"] + m["path"])) for n in q_names):
                adj += SUBJECT_BONUS
            if use_prior:
                adj += prior_weight * ((own[g.passage] if own else prior.get(m["chunk_id"], p_low)) - p_top)
            heading = ""                                 # the last section heading of the chunk up to the sentence
            for s in m["lines"][:m["index"][si] + 1]:
                if s in m["sections"]:
                    heading = s
            start = g.start - sent[0]
            kind = next((sp.kind for sp in spans(text)), "span")
            cand = Candidate(text, kind, sent[1], heading, m["chunk_id"], m["doc_id"], start, m["graph"],
                             score=round(g.margin + adj, 4))
            scored.append((g.margin + adj, cand))
        if not scored:
            return Reading(None, atype, noun, None, 0, "no span of the retrieved context survives the question's "
                           "own names", reader_name="learned")
        scored.sort(key=lambda x: -x[0])
        best_score, best = scored[0]
        # the names the question gives (or what the image shows): one must occur where the answer is read
        where = next((" ".join(m["lines"] + m["path"]) for m in meta
                      if m["chunk_id"] == best.chunk_id and m["doc_id"] == best.doc_id), "")
        if q_names and not any(n and occurs(n, f"{where} {titles.get(best.doc_id or '', '')}") for n in q_names):
            return Reading(None, atype, noun, best, len(scored),
                           f"abstained: what the question names ({', '.join(q_names)}) is not where the best span was "
                           "read", reader_name="learned")
        limit = model.threshold if threshold is None else threshold
        if best_score < limit:
            return Reading(None, atype, noun, best, len(scored),
                           f"abstained: the best span's margin {best_score:.2f} < threshold {limit:.2f}",
                           reader_name="learned")
        return Reading(best.text, atype, noun, best, len(scored), "read from the retrieved context (learned reader)",
                       reader_name="learned")
