"""The per-question metrics of ``kgqa eval`` (``kgqa.app.eval`` defines each)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Iterable, Optional, Protocol

from kgqa.app.eval.questions import Support
from kgqa.core.result import CHUNK_SECTIONS, DOCUMENT_IDS, ChunkEvidence

#: VisPath's open-ended semantic accuracy threshold (Section V-B).
SBERT_THRESHOLD = 0.3

METRICS = ("sbert@0.3", "exact_match", "hits@1", "start_entity", "gold_path", "selected")

#: Why a wrong answer was wrong, first cause first (``why_wrong``): the start entity was not the topic; the gold
#: path was not among the retained paths; it was retained but the answer is another path's end; the gold path was
#: chosen (the answer is its end entity) but the answer string matches neither the gold answer nor an alias;
#: ``failed``: the method raised.
WHY_WRONG = ("start_wrong", "gold_path_not_retained", "retained_not_selected", "selected_answer_differs", "failed")


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = re.compile(r"[^\w\s]|_")


def normalize_answer(s: str | None) -> str:
    """Accents stripped, case folded, punctuation and English articles removed, spaces collapsed."""
    if not s:
        return ""
    s = unicodedata.normalize("NFKD", s)
    s = "".join(c for c in s if not unicodedata.combining(c))
    s = s.casefold()
    s = _PUNCT.sub(" ", s)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(prediction: str | None, gold: str, aliases: Iterable[str] = ()) -> bool:
    pred = normalize_answer(prediction)
    if not pred:
        return False
    return any(pred == normalize_answer(g) for g in (gold, *aliases) if normalize_answer(g))


class Encoder(Protocol):
    def encode(self, texts: list[str]) -> Any: ...


def sbert_cosines(encoder: Encoder, predictions: list[str | None], golds: list[str]) -> list[float | None]:
    """cos(SBERT(prediction), SBERT(gold)) per pair; None for an empty prediction (scored wrong)."""
    import numpy as np

    idx = [i for i, p in enumerate(predictions) if p is not None and p.strip()]
    out: list[float | None] = [None] * len(predictions)
    if not idx:
        return out
    texts = [predictions[i] for i in idx] + [golds[i] for i in idx]
    vecs = np.asarray(encoder.encode(texts), dtype=np.float32)
    a, b = vecs[: len(idx)], vecs[len(idx):]
    a = a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)
    b = b / np.maximum(np.linalg.norm(b, axis=1, keepdims=True), 1e-12)
    cos = (a * b).sum(axis=1)
    for k, i in enumerate(idx):
        out[i] = float(cos[k])
    return out


def sbert_correct(cosine: float | None, threshold: float = SBERT_THRESHOLD) -> bool:
    return cosine is not None and cosine >= threshold


def path_triples(answer_path) -> list[tuple[str, str, str]]:
    """A ``kgqa.core.result.Path`` (or a dict of one) as (head, PID, tail) triples."""
    steps = answer_path.steps if hasattr(answer_path, "steps") else answer_path.get("steps", [])
    out = []
    for s in steps:
        if isinstance(s, dict):
            out.append((s["head_id"], s["relation_id"], s["tail_id"]))
        else:
            out.append((s.head_id, s.relation_id, s.tail_id))
    return out


def gold_path_retained(gold: list[tuple[str, str, str]], retained_paths) -> bool:
    g = [tuple(e) for e in gold]
    return any(path_triples(p) == g for p in retained_paths)


def gold_path_selected(gold: list[tuple[str, str, str]], answer_id: str | None, retained_paths) -> bool:
    """The gold path was kept *and* chosen: it is among the retained paths and the answer is its end entity
    (when the method names no answer entity: the gold path is the first retained path)."""
    g = [tuple(e) for e in gold]
    if not g or not gold_path_retained(g, retained_paths):
        return False
    if answer_id is not None:
        return answer_id == g[-1][2]
    first = next(iter(retained_paths), None)
    return first is not None and path_triples(first) == g


def retention_by_hop(gold: list[tuple[str, str, str]], by_hop) -> tuple[bool, int | None]:
    """Whether a hop-by-hop method retained the gold path, and where it lost it: ``by_hop`` is the method's
    retained paths per hop (``Answer.details["retained_by_hop"]``: hop i's paths, each a list of
    [head, PID, tail]). The gold path is retained when hop len(gold) kept it; otherwise the hop at which
    its prefix was first dropped (1-based; a hop the method did not run counts as dropping it)."""
    g = [tuple(e) for e in gold]
    for i in range(1, len(g) + 1):
        kept = by_hop[i - 1] if i <= len(by_hop) else []
        if not any([tuple(e) for e in p] == g[:i] for p in kept):
            return False, i
    return bool(g), None


def why_wrong(*, correct: bool | None, start_entity: bool | None, gold_path: bool | None,
              selected: bool | None) -> str | None:
    """The first cause of a wrong answer among ``WHY_WRONG``; None for a right answer or when the question
    lacks the gold fields that tell the causes apart (no topic and no path)."""
    if correct or correct is None:
        return None
    if start_entity is False:
        return "start_wrong"
    if gold_path is None:
        return None
    if not gold_path:
        return "gold_path_not_retained"
    if not selected:
        return "retained_not_selected"
    return "selected_answer_differs"


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=np.float64), q))



def detail(ans, key: str):
    """One of the ``kgqa.core.result.Details`` keys out of an answer's ``details`` (None when not set)."""
    return (getattr(ans, "details", None) or {}).get(key)


def document_recall(support: Optional[Support], ans) -> Optional[bool]:
    """Document recall@Kd (mKG-RAG): the supporting document is among the documents the method recalled
    (``details["document_ids"]``). None when the question has no support or the method recalls no documents."""
    ids = detail(ans, DOCUMENT_IDS)
    if support is None or ids is None:
        return None
    return support.document in ids


def _chunk_pages(ans) -> dict[str, tuple[int, int]]:
    """The page span of each chunk the answer's evidence shows (PDFs: ``ChunkEvidence.pages``), by chunk id."""
    return {e.chunk_id: (e.pages[0], e.pages[-1]) for e in getattr(ans, "evidence", None) or []
            if isinstance(e, ChunkEvidence) and e.pages}


def _overlaps(span: tuple[int, int] | None, pages: tuple[int, int]) -> bool:
    return span is not None and span[0] <= pages[1] and pages[0] <= span[1]


def evidence_recall(support: Optional[Support], ans) -> Optional[bool]:
    """Evidence recall (mKG-RAG): a chunk of the supporting document that covers the supporting section (and, when
    the support names a page, lies on it) is in the context (``details["chunk_sections"]``: [{id, doc_id,
    sections}]; a chunk's pages from its evidence). None when not applicable."""
    chunks = detail(ans, CHUNK_SECTIONS)
    if support is None or chunks is None:
        return None
    pages, spans = support.page_range, _chunk_pages(ans) if support.page_range else {}
    return any(c.get("doc_id") == support.document
               and (support.section is None or support.section in (c.get("sections") or []))
               and (pages is None or _overlaps(spans.get(c.get("id")), pages)) for c in chunks)


def cited_page(support: Optional[Support], ans, correct: Optional[bool]) -> Optional[bool]:
    """Of a right answer whose support names a page: the page its citation gives (the ``ChunkEvidence`` holding the
    supporting sentence) is one of the supporting pages of the supporting document. None for a wrong answer, a
    support without a page, or a method that cites no chunk; an answer given without a citation is False."""
    if not correct or support is None or support.page_range is None:
        return None
    cited = [e for e in getattr(ans, "evidence", None) or [] if isinstance(e, ChunkEvidence) and e.sentence]
    if not any(isinstance(e, ChunkEvidence) for e in getattr(ans, "evidence", None) or []):
        return None
    first, last = support.page_range
    return any(e.document_id == support.document and e.page is not None and first <= e.page <= last for e in cited)
