"""Question-text heuristics (no graph, no model): VisPath's fallbacks, and the answer type nouns GraSP reads too.

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843) asks the model for the topic mention and the relation sketch; these are our
fallbacks when it does not answer usably: the topic mention from capitalised words, the question's
content-word phrases (candidates for relation mentions), the tokens that name or point at entities,
the type nouns the answer typing reads, and the greedy phrase-to-relation matching of the
non-LLM relation sketch (``kgqa.core.sketch.relation_sketch`` supplies the relation vectors).
"""

from __future__ import annotations

import re

import numpy as np


_WH = {"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "in", "is", "was", "the", "of"}


def topic_mention_heuristic(question: str) -> str:
    """Fallback topic mention without an LLM: the longest run of capitalised words (not a leading wh-word)."""
    tokens = re.findall(r"[\w'’.-]+|,", question)
    runs, cur = [], []
    for i, tok in enumerate(tokens):
        cap = tok[:1].isupper() and not (i == 0 and tok.lower() in _WH)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        # a comma joins names ("Albany, New York") but not an apposition ("Michael Collins, the Apollo 11 astronaut")
        joins = tok.lower() in {"of", "de", "la", "the"} or (tok == "," and nxt[:1].isupper())
        if cap or (cur and joins):
            cur.append(tok)
        else:
            if cur:
                runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    best = max(runs, key=len, default=[])
    while best and (best[-1] in {",", "of", "de", "la", "the"}):
        best.pop()
    return " ".join(best).replace(" ,", ",") or question


PHRASE_STOP = frozenset(
    "a an the of in on at to by for from with and or is was were be been are does did do has have had which "
    "what who whom whose where when why how this that these those it its as into there here shown pictured "
    "picture photo image depicted seen".split())


def question_tokens(question: str) -> list[str]:
    """The question's words as question_phrases counts them (case kept, trailing dots stripped)."""
    return [t.strip(".") for t in re.findall(r"[\w'’.-]+", question)]


def question_phrases(question: str, max_len: int = 3,
                     exclude: frozenset[int] | set[int] = frozenset()) -> list[tuple[int, int, str]]:
    """The question's word n-grams (1..max_len) that neither start nor end with a function word and
    touch no token in ``exclude``: (first token, end token, text), lower-cased — the candidates for
    relation mentions."""
    toks = [t.lower() for t in question_tokens(question)]
    out = []
    for n in range(1, max_len + 1):
        for i in range(len(toks) - n + 1):
            g = toks[i:i + n]
            if any(k in exclude for k in range(i, i + n)):
                continue
            if g[0] and g[-1] and g[0] not in PHRASE_STOP and g[-1] not in PHRASE_STOP:
                out.append((i, i + n, " ".join(g)))
    return out


_PARTICIPLE = re.compile(r"^(?:\w{3,}ed|born|built|written|made|known|held|drawn|painted|sung|given|won|sold|"
                         r"shown|seen|flown|run|founded|led)$")
_PREPOSITIONS = frozenset({"by", "with", "in", "at", "on", "from", "for", "into", "after", "to"})
_RELATIVE = frozenset({"that", "which", "who", "whom", "where", "whose"})
_DEICTIC = frozenset({"this", "these", "shown", "pictured", "depicted", "here"})
_PICTURE = frozenset({"photo", "photograph", "image", "picture", "shot", "scene", "view"})


def mention_tokens(question: str, has_image: bool) -> tuple[set[int], set[int]]:
    """Tokens that name or point at entities rather than relations, and answer-type tokens.

    Returns (excluded, answer_type) token indices (question_tokens order):
    * a capitalised word after the first names an entity ("Eiffel Tower", "U.S.", "Mozart"), not a
      relation, and an apposition after it (", the Apollo 11 astronaut,") describes that entity;
    * with an image, the noun phrase that points at it ("the astronaut in this photo", "the country
      whose flag is shown", "the patch of sky shown in this image") is the topic entity's type;
    * the noun right after "which"/"what" ("In which city …") is the answer's type, and a noun that heads
      a relative clause ("the company that builds …", "the state where …") the type of an entity on the way
      (a noun between an article and a name, "the novel Notre-Dame de Paris", types that named entity and
      is left out with it): such a type noun may name a hop ("In which country was the architect … born?" → country) or
      only the type of the entity the other relations reach ("In which city was … born?"), so it counts
      as an optional hop, and as half a match in ``RelationSketch.alignment``.
    """
    toks = question_tokens(question)
    low = [t.lower() for t in toks]
    excluded = {i for i, t in enumerate(toks) if i > 0 and t[:1].isupper()}
    # an apposition after a name describes that entity ("Michael Collins, the Apollo 11 astronaut, …")
    spans = [m.span() for m in re.finditer(r"[\w'’.-]+", question)]
    comma = [i > 0 and "," in question[spans[i - 1][1]:spans[i][0]] for i in range(len(spans))]  # before token i
    for i in range(1, len(toks)):
        if comma[i] and i - 1 in excluded and low[i] in ("the", "a", "an"):
            end = next((j for j in range(i + 1, len(toks)) if comma[j]), None)
            if end is not None:
                excluded.update(range(i, end))
    if has_image:
        m = next((i for i, t in enumerate(low) if t in _DEICTIC), None)
        if m is not None:
            s = max((i for i in range(m) if low[i] in ("the", "this", "these")), default=m)
            e = m
            if low[m] in ("this", "these"):          # "this launch photo"
                e = next((j for j in range(m + 1, min(m + 4, len(low))) if low[j] in _PICTURE), None)
                if e is None:                        # "the parent taxon of this fish": "this fish" is the
                    s, e = m, min(m + 1, len(low) - 1)   # topic; the noun phrase before it names a hop
            excluded.update(range(s, e + 1))
    answer_type = answer_noun_tokens(question, excluded)
    answer_type |= {i for i, t in enumerate(low[:-1]) if i > 0 and low[i + 1] in _RELATIVE
                    and t not in PHRASE_STOP and i not in excluded}
    # a reduced relative clause: "the city twinned with …", "the novel written by …" (article, noun,
    # participle, preposition): the noun types the entity the participle's relation reaches
    answer_type |= {i for i in range(1, len(low) - 2) if low[i - 1] in ("the", "a", "an")
                    and low[i] not in PHRASE_STOP and i not in excluded
                    and _PARTICIPLE.match(low[i + 1]) and low[i + 2] in _PREPOSITIONS}
    # "the novel Notre-Dame de Paris", "the composer Mozart": a noun between an article and a name types the
    # named entity (the topic), as "this fish" does: neither a hop nor the type of an entity on the way
    excluded |= {i for i in range(1, len(low) - 1) if low[i - 1] in ("the", "a", "an") and i + 1 in excluded
                 and i not in excluded and low[i] not in PHRASE_STOP and toks[i + 1][:1].isupper()}
    return excluded, answer_type


def answer_noun_tokens(question: str, excluded: set[int] | frozenset[int] = frozenset()) -> set[int]:
    """The noun right after "which"/"what" ("In which *city* …"): the answer's type (question_tokens order)."""
    low = [t.lower() for t in question_tokens(question)]
    return {i + 1 for i, t in enumerate(low[:-1])
            if t in ("which", "what") and low[i + 1] not in PHRASE_STOP and i + 1 not in excluded}


_COPULA = frozenset({"is", "was", "are", "were"})


def type_nouns(question: str, has_image: bool) -> tuple[list[str], list[str]]:
    """The type nouns of ``mention_tokens``, lower-cased: (the answer's, after "which"/"what": "In which
    *city* …", or the question's object, "What is the *river* that …"; those of entities on the way: "the
    *state* where …", "the *novel* Notre-Dame de Paris")."""
    toks = [t.lower() for t in question_tokens(question)]
    _, typed = mention_tokens(question, has_image)
    answer = {i for i in typed if i > 0 and toks[i - 1] in ("which", "what")}
    # "What is the river that flows through …", "Who was the architect who …": the question's own object
    answer |= {i for i in typed if i == 3 and toks[0] in ("what", "which", "who") and toks[1] in _COPULA
               and toks[2] in ("the", "a", "an")}
    return [toks[i] for i in sorted(answer)], [toks[i] for i in sorted(typed - answer)]


#: a description noun that implies a type noun a question asks for ("Rome, capital of Italy" is a city)
_TYPE_IMPLIES = {"capital": ("city",), "metropolis": ("city",), "commune": ("town",), "municipality": ("town",)}


def description_words(text: str | None) -> set[str]:
    """The lower-case words of an entity description and the types they imply (``_TYPE_IMPLIES``); no
    stemming, so "United States" names no state."""
    words = set(re.findall(r"\w+", (text or "").lower()))
    return words.union(*(_TYPE_IMPLIES.get(w, ()) for w in words))


def type_words(classes, description: str | None) -> set[str]:
    """An entity's type words: the names of its classes, each as a whole ("country" for a country whose
    ``instance of`` is sovereign state, a ``subclass of`` country), and the words of its description with
    the types they imply (``description_words``). A class name is not split: a modifier changes the type
    ("sovereign state" is no answer to "the *state* where …"; a KG that says a sovereign state is a state
    says so by ``subclass of``). Empty when the entity has neither."""
    names = {c.strip().casefold() for c in classes if c and c.strip()}
    return description_words(description) | names | set().union(*(_TYPE_IMPLIES.get(n, ()) for n in names))


def greedy_relation_matches(phrases: list[tuple[int, int, str]], sims: np.ndarray, min_cos: float,
                            limit: int) -> list[tuple[int, int, float]]:
    """(phrase index, relation index, cos) pairs, best pair first; a token span is used once, and a relation
    once per distinct phrase text: the same phrase said again names its relation again, one hop each ("the
    parent taxon of the parent taxon of this fish"); pairs below ``min_cos`` are ignored; at most
    ``limit``. ``sims`` is phrases × relations."""
    order = sorted(((float(sims[a, b]), a, b) for a in range(sims.shape[0]) for b in range(sims.shape[1])),
                   key=lambda x: (-x[0], x[1], x[2]))
    used_tokens: set[int] = set()
    used_rel: dict[int, str] = {}
    out = []
    for s, a, b in order:
        if s < min_cos or len(out) >= limit:
            break
        span = set(range(phrases[a][0], phrases[a][1]))
        if (b in used_rel and used_rel[b] != phrases[a][2]) or span & used_tokens:
            continue
        used_tokens |= span
        used_rel[b] = phrases[a][2]
        out.append((a, b, s))
    return out
