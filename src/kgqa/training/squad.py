"""SQuAD-format reading data for the span reader and the passage ranker: the questions of a SQuAD v1.1 file,
article splits, each article's paragraphs and the hard distractors among them, and SQuAD's official metrics
(exact match and token F1 after its answer normalisation)."""

from __future__ import annotations

import gzip
import json
import random
import re
import string
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable


@dataclass
class QA:
    """One question on one passage; ``answers`` are (text, char offset) pairs, the first one is trained on."""

    qid: str
    question: str
    context: str
    answers: list[tuple[str, int]]
    article: str = ""


def load_squad(path: str | Path) -> list[QA]:
    """The questions of a SQuAD v1.1 file (``.json`` or ``.json.gz``), in file order."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8") as f:
        raw = json.load(f)
    out = []
    for art in raw["data"]:
        for para in art["paragraphs"]:
            for qa in para["qas"]:
                out.append(QA(qa["id"], qa["question"], para["context"],
                              [(a["text"], int(a["answer_start"])) for a in qa["answers"]], art.get("title", "")))
    return out


_WORD = re.compile(r"\w+")
#: words too common to say which paragraph a question is about
_STOP = frozenset("a an the of in on at to for by with from as and or is was were are be been what which who whom "
                  "whose when where why how did does do that this these those it its into than their his her".split())


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def distractors(qas: list[QA], k: int) -> list[list[str]]:
    """For each question, the ``k`` other paragraphs of its article (those asked on in ``qas``) most like it
    (most question words shared, stop words aside; file order breaks ties) that hold none of its answers: the
    hard distractors that shared normalisation trains against (Clark and Gardner rank a document's paragraphs
    by TF-IDF; word overlap inside one article is the same idea)."""
    paras = paragraphs_by_article(qas)
    words = {c: content_words(c) for lst in paras.values() for c in lst}
    return [most_like(q.question, others_without_answer(q, paras[q.article]), words)[:k] for q in qas]


def paragraphs_by_article(qas: Iterable[QA]) -> dict[str, list[str]]:
    """Each article's paragraphs (those asked on in ``qas``), in file order."""
    out: dict[str, list[str]] = {}
    for q in qas:
        lst = out.setdefault(q.article, [])
        if q.context not in lst:
            lst.append(q.context)
    return out


def others_without_answer(q: QA, paragraphs: Iterable[str]) -> list[str]:
    """``paragraphs`` other than the question's own that hold none of its answers (case aside), in their order."""
    answers = [a.lower() for a, _ in q.answers]
    return [c for c in paragraphs if c != q.context and not any(a in c.lower() for a in answers)]


def most_like(question: str, paragraphs: list[str], words: dict[str, set[str]]) -> list[str]:
    """``paragraphs`` by the question's words they share (``words``: each paragraph's ``content_words``), most
    first; stable, so file order breaks ties."""
    qw = content_words(question)
    return sorted(paragraphs, key=lambda c: -len(qw & words[c]))


def split_articles(qas: list[QA], holdout: int, seed: int) -> tuple[list[QA], list[QA]]:
    """(train, held out): ``holdout`` whole articles, drawn with ``seed``, are held out."""
    titles = sorted({q.article for q in qas})
    random.Random(seed).shuffle(titles)
    held = set(titles[:holdout])
    return [q for q in qas if q.article not in held], [q for q in qas if q.article in held]


def normalize_squad_answer(s: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles (a, an, the), single spaces."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def exact_match(pred: str | None, golds: Iterable[str]) -> float:
    p = normalize_squad_answer(pred or "")
    return float(any(p == normalize_squad_answer(g) for g in golds))


def f1_score(pred: str | None, golds: Iterable[str]) -> float:
    """Token F1 after normalisation, the best over the gold answers (an abstention scores 0)."""
    pt = normalize_squad_answer(pred or "").split()
    best = 0.0
    for g in golds:
        gt = normalize_squad_answer(g).split()
        same = sum((Counter(pt) & Counter(gt)).values())
        if same:
            prec, rec = same / len(pt), same / len(gt)
            best = max(best, 2 * prec * rec / (prec + rec))
    return best




def em_f1(preds: list[str], qas: list[QA]) -> tuple[float, float]:
    """EM and F1 (in %) of one prediction per question against its answers."""
    golds = [[a for a, _ in q.answers] for q in qas]
    n = max(1, len(qas))
    return (100 * sum(exact_match(p, g) for p, g in zip(preds, golds)) / n,
            100 * sum(f1_score(p, g) for p, g in zip(preds, golds)) / n)


def squad_split(files: list[Path], holdout: int, seed: int, limit: int | None, threads: int,
                say: Callable[[str], None]) -> tuple[list[QA], list[QA]]:
    """(train, held out) of SQuAD-format files: ``holdout`` whole articles held out with ``seed``, the first
    ``limit`` questions of the shuffled rest (all without); says what it trains on."""
    qas = []
    for p in files:
        qas += load_squad(p)
    train, held = split_articles(qas, holdout, seed)
    if limit:
        random.Random(seed).shuffle(train)
        train = train[:limit]
    say(f"training on {len(train)} questions ({len({q.article for q in train})} articles) of "
        f"{', '.join(p.name for p in files)}; {len(held)} held out ({holdout} articles); torch threads "
        f"{threads} (KGQA_TORCH_THREADS)")
    return train, held
