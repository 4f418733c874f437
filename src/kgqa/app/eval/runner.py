"""``kgqa eval``'s runner: every question asked independently, scored, a failure recorded and the run goes on."""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable, Protocol

from kgqa.app.eval.metrics import (Encoder, cited_page, detail, document_recall, evidence_recall, exact_match,
                                   gold_path_retained,
                                   gold_path_selected, retention_by_hop, sbert_correct, sbert_cosines, why_wrong)
from kgqa.app.eval.questions import EvalQuestion, SkippedLine
from kgqa.app.eval.records import QuestionResult
from kgqa.app.eval.report import build_report
from kgqa.core.result import CONTEXT_TOKENS, RETAINED_BY_HOP, TIED_WITH


class Answerer(Protocol):
    def answer(self, question: str, image: Path | None = None, entity_id: str | None = None): ...


def _cost_dict(cost) -> dict:
    out = {}
    for role, c in (cost or {}).items():
        d = asdict(c) if hasattr(c, "__dataclass_fields__") else dict(c)
        out[role] = {k: d.get(k, 0) for k in ("calls", "prompt_tokens", "completion_tokens", "seconds")}
    return out


def _one_line(e: BaseException) -> str:
    msg = " ".join(str(e).split()) or type(e).__name__
    return f"{type(e).__name__}: {msg}"[:300]


def run_questions(questions: list[EvalQuestion], pipeline: Answerer, *, gold_start: bool = False,
                  on_result: Callable[[QuestionResult], None] | None = None, drop_edges: float = 0.0,
                  seed: int = 0) -> list[QuestionResult]:
    """Ask every question independently; an exception is recorded and the run goes on.

    ``drop_edges``/``seed``: the incomplete-KG protocol (each topic entity's facts hidden at query time)."""
    results = []
    incomplete = {"drop_edges": drop_edges, "seed": seed} if drop_edges else {}
    for q in questions:
        r = QuestionResult(id=q.id, hops=q.hops if q.hops is not None else (len(q.path) if q.path else None),
                           question=q.question, gold=q.answer)
        entity = q.topic.id if (gold_start and q.topic is not None) else None
        t0 = time.perf_counter()
        try:
            ans = pipeline.answer(q.question, image=q.image_path, entity_id=entity, **incomplete)
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 - one failing question must not stop the run
            r.seconds = time.perf_counter() - t0
            r.error = _one_line(e)
            _score_failed(r, q)
        else:
            r.seconds = time.perf_counter() - t0
            _score_answer(r, q, ans)
        results.append(r)
        if on_result:
            on_result(r)
    return results


def _score_failed(r: QuestionResult, q: EvalQuestion) -> None:
    r.sbert = False
    r.exact_match = False
    r.hits1 = False if q.answer_id else None
    r.start_entity = False if q.topic else None
    r.gold_path = False if q.path else None
    r.why_wrong = "failed"                   # the method raised: none of the causes can be told
    r.doc_recall = False if q.support else None
    r.evidence_recall = False if q.support else None


def _grounds_start(ans) -> bool:
    """Whether the answering method grounds a start entity (mKG-RAG does not: its start metric is skipped)."""
    from kgqa.methods.registry import method_classes

    return getattr(method_classes().get(getattr(ans, "method", None) or ""), "grounds_start_entity", True)


def _score_answer(r: QuestionResult, q: EvalQuestion, ans) -> None:
    pred = ans.answer if isinstance(ans.answer, str) else None
    r.prediction = pred
    r.prediction_id = ans.answer_id
    r.start_entity_id = ans.start_entity_id
    r.trace_id = getattr(ans, "trace_id", None)
    r.abstained = pred is None or not pred.strip()
    r.exact_match = exact_match(pred, q.answer, q.aliases)
    r.hits1 = (ans.answer_id is not None and ans.answer_id == q.answer_id) if q.answer_id else None
    r.start_entity = (ans.start_entity_id == q.topic.id) if q.topic and _grounds_start(ans) else None
    by_hop = detail(ans, RETAINED_BY_HOP)
    if q.path and by_hop is not None:
        # a hop-by-hop method (VisPath): retained means kept at its hop, not only among the answer's evidence
        r.gold_path, r.lost_at_hop = retention_by_hop(q.path, by_hop)
        gold_end = q.path[-1][2]
        r.selected = ((ans.answer_id == gold_end) if ans.answer_id is not None else
                      gold_path_selected(q.path, None, ans.paths or [])) if r.gold_path else None
    else:
        r.gold_path = gold_path_retained(q.path, ans.paths or []) if q.path else None
        r.selected = gold_path_selected(q.path, ans.answer_id, ans.paths or []) if r.gold_path else None
    r.why_wrong = why_wrong(correct=r.exact_match, start_entity=r.start_entity, gold_path=r.gold_path,
                            selected=r.selected)
    if r.why_wrong != "gold_path_not_retained":     # a wrong start (or a right answer) explains itself
        r.lost_at_hop = None
    tied = detail(ans, TIED_WITH)
    if r.why_wrong == "retained_not_selected" and tied and q.path:
        r.tied = q.path[-1][2] in {t.get("id") for t in tied}
    r.doc_recall = document_recall(q.support, ans)
    r.evidence_recall = evidence_recall(q.support, ans)
    r.cited_page = cited_page(q.support, ans, r.exact_match)
    r.context_tokens = detail(ans, CONTEXT_TOKENS)
    r.cost = _cost_dict(getattr(ans, "cost", {}))
    for f in getattr(ans, "fallbacks", None) or []:
        r.fallbacks[f.code] = r.fallbacks.get(f.code, 0) + 1


def score_sbert(results: list[QuestionResult], encoder: Encoder) -> None:
    """Fill in SBERT@0.3 for the questions that ran (one batched encoder call)."""
    ran = [r for r in results if r.error is None]
    cos = sbert_cosines(encoder, [r.prediction for r in ran], [r.gold for r in ran])
    for r, c in zip(ran, cos):
        r.sbert_cosine = None if c is None else round(c, 4)
        r.sbert = sbert_correct(c)



def evaluate(questions: list[EvalQuestion], pipeline: Answerer, encoder: Encoder, *, questions_file: str,
             method: str, skipped: list[SkippedLine] = (), options: dict | None = None,
             gold_start: bool = False, on_result: Callable[[QuestionResult], None] | None = None,
             drop_edges: float = 0.0, seed: int = 0) -> dict:
    """Run, score and summarise; the report is a plain dict (``--json`` prints it as is)."""
    results = run_questions(questions, pipeline, gold_start=gold_start, on_result=on_result, drop_edges=drop_edges,
                            seed=seed)
    score_sbert(results, encoder)
    return build_report(results, questions_file=questions_file, method=method, skipped=skipped,
                        options=options)
