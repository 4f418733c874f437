"""``kgqa eval``: run a method over a question set and measure answers, paths and cost.

Input is JSON lines, one question per line (image paths relative to the file)::

    {"id": "q001", "image": "queries/q001.jpg", "question": "…", "answer": "Rome",
     "answer_id": "Q220", "aliases": ["Roma"], "hops": 3,
     "topic": {"id": "Q243", "label": "Eiffel Tower"},
     "path": [["Q243","P17","Q142"], ["Q142","P36","Q90"], ["Q90","P190","Q220"]]}

Only ``id``, ``question`` and ``answer`` are required; a metric that needs a missing field
is skipped for that question (its denominator counts only the questions that have it).

Metrics, overall and per hop count, micro-averaged over questions:

* **SBERT@0.3**, as the VisPath paper (arXiv 2609.20843, Section V-B "Metrics") defines it: a
  prediction is correct when the cosine similarity of its all-MiniLM-L6-v2 sentence
  embedding and that of the gold answer is at least 0.3. Only the gold answer string is
  compared (not the aliases), as in the paper. An abstention or empty prediction is wrong.
* **exact match** after normalisation (Unicode accents stripped, case folded, punctuation
  removed, English articles a/an/the dropped, whitespace collapsed) against the gold answer
  or any alias.
* **Hits@1** on answer ids: the predicted ``answer_id`` equals the gold ``answer_id``.
* **start-entity accuracy**: the method's start entity equals ``topic.id``.
* **gold-path recall**: the gold path, as a sequence of (head, PID, tail) triples, is one of
  the paths the method retained.
* **fallbacks** taken, counted by code (``schema``: no valid JSON after retries,
  ``declined``, ``graph_only``, ``empty``, ``graph``; see ``kgqa.core.result.Fallback``), so a
  run shows how often its models were actually used;
* **abstentions** (no answer), **failures** (the method raised — a model server that cannot
  be reached is a failure, never a fallback; the run goes on), **cost**
  per role per question (model calls, prompt and completion tokens, seconds; mean over the
  questions that ran) and **latency** p50/p95 (wall seconds per question; linear
  interpolation between order statistics, numpy's default).

A failed question counts as a wrong answer in every accuracy it would have entered.
"""

from __future__ import annotations

import json
import re
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Protocol

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from kgqa.core.errors import InvalidInput, cap
from kgqa.app.pipeline import MAX_QUESTION_CHARS

#: VisPath's open-ended semantic accuracy threshold (Section V-B).
SBERT_THRESHOLD = 0.3

METRICS = ("sbert@0.3", "exact_match", "hits@1", "start_entity", "gold_path")


# --------------------------------------------------------------------------- input
class Topic(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    label: Optional[str] = None


class Support(BaseModel):
    """Where the answer is written (document QA, mKG-RAG): a loaded document's id and a section heading."""

    model_config = ConfigDict(extra="forbid")
    document: str = Field(min_length=1)
    section: Optional[str] = None


class EvalQuestion(BaseModel):
    """One line of a question file. Unknown extra fields are ignored."""

    model_config = ConfigDict(extra="ignore")
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    image: Optional[str] = None
    answer_id: Optional[str] = None
    aliases: list[str] = Field(default_factory=list)
    hops: Optional[int] = Field(default=None, ge=1)
    topic: Optional[Topic] = None
    support: Optional[Support] = None
    path: Optional[list[tuple[str, str, str]]] = None

    # resolved by load_questions (relative to the question file), never read from the file
    _image_path: Optional[Path] = PrivateAttr(default=None)

    @property
    def image_path(self) -> Optional[Path]:
        return self._image_path

    @field_validator("id", "question", "answer")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v

    @field_validator("path")
    @classmethod
    def _path_ok(cls, v):
        if v is None:
            return v
        if not v:
            raise ValueError("must hold at least one [head, relation, tail] edge")
        for i, (h, r, t) in enumerate(v):
            if not (h and r and t):
                raise ValueError(f"edge {i}: head, relation and tail must be non-empty")
        for i, (a, b) in enumerate(zip(v, v[1:]), 1):
            if a[2] != b[0]:
                raise ValueError(f"edge {i} starts at {b[0]} but edge {i - 1} ends at {a[2]}")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        if self.path is not None and self.hops is not None and len(self.path) != self.hops:
            raise ValueError(f"hops is {self.hops} but path has {len(self.path)} edges")
        if self.path is not None and self.topic is not None and self.path[0][0] != self.topic.id:
            raise ValueError(f"path starts at {self.path[0][0]} but topic.id is {self.topic.id}")
        if self.path is not None and self.answer_id is not None and self.path[-1][2] != self.answer_id:
            raise ValueError(f"path ends at {self.path[-1][2]} but answer_id is {self.answer_id}")
        return self


@dataclass
class SkippedLine:
    line: int
    why: str


def _why(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ()) if x != "__root__")
    msg = err.get("msg", "invalid").removeprefix("Value error, ")
    more = f" (+{len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
    return f"{loc}: {msg}{more}" if loc else f"{msg}{more}"


def load_questions(path: str | Path, lenient: bool = False) -> tuple[list[EvalQuestion], list[SkippedLine]]:
    """Read and validate a question file.

    Strict (default): the first bad line raises ``InvalidInput("file:line: why")``.
    Lenient: bad lines are skipped and returned with their reason.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError as e:
        raise InvalidInput(f"{p}: question file not found") from e
    except OSError as e:
        raise InvalidInput(f"{p}: cannot read question file ({e.strerror})") from e
    questions: list[EvalQuestion] = []
    skipped: list[SkippedLine] = []
    seen: dict[str, int] = {}

    def bad(lineno: int, why: str):
        if not lenient:
            raise InvalidInput(f"{p}:{lineno}: {why}")
        skipped.append(SkippedLine(lineno, why))

    for lineno, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            bad(lineno, f"not UTF-8 (byte {e.start})")
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            bad(lineno, f"not valid JSON ({e.msg} at column {e.colno})")
            continue
        if not isinstance(obj, dict):
            bad(lineno, f"expected a JSON object, got {type(obj).__name__}")
            continue
        try:
            q = EvalQuestion.model_validate(obj)
        except ValidationError as e:
            bad(lineno, _why(e))
            continue
        if q.id in seen:
            bad(lineno, f"id {q.id!r} already used on line {seen[q.id]}")
            continue
        if len(q.question.strip()) > MAX_QUESTION_CHARS:
            bad(lineno, f"question: {len(q.question.strip()):,} characters, over the "
                        f"{MAX_QUESTION_CHARS:,}-character limit")
            continue
        if q.image is not None:
            img = Path(q.image)
            img = img if img.is_absolute() else p.parent / img
            # an image path may not leave the question file's folder (``../../etc/passwd``)
            if not img.resolve().is_relative_to(p.parent.resolve()):
                bad(lineno, f"image: {cap(q.image)} leaves the question file's folder {p.parent}")
                continue
            if not img.is_file():
                bad(lineno, f"image: {cap(q.image)} not found (relative to {p.parent})")
                continue
            q._image_path = img
        seen[q.id] = lineno
        questions.append(q)
    if not questions and not skipped:
        raise InvalidInput(f"{p}: no questions in the file")
    return questions, skipped


# --------------------------------------------------------------------------- metrics
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


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


# --------------------------------------------------------------------------- runner
class Answerer(Protocol):
    def answer(self, question: str, image: Path | None = None, entity_id: str | None = None): ...


@dataclass
class QuestionResult:
    id: str
    hops: Optional[int]
    question: str
    gold: str
    prediction: Optional[str] = None
    prediction_id: Optional[str] = None
    start_entity_id: Optional[str] = None
    error: Optional[str] = None           # the method raised: recorded, the run went on
    abstained: bool = False
    sbert_cosine: Optional[float] = None
    # None = metric skipped for this question (a field it needs is missing)
    sbert: Optional[bool] = None
    exact_match: Optional[bool] = None
    hits1: Optional[bool] = None
    start_entity: Optional[bool] = None
    gold_path: Optional[bool] = None
    doc_recall: Optional[bool] = None        # document QA: supporting document among the recalled ones
    evidence_recall: Optional[bool] = None   # document QA: supporting section among the context's chunks
    context_tokens: Optional[int] = None     # document QA: tokens of the retrieved context
    seconds: Optional[float] = None
    cost: dict = field(default_factory=dict)   # role -> {calls, prompt_tokens, completion_tokens, seconds}
    fallbacks: dict = field(default_factory=dict)  # fallback code -> how many times this question took it
    trace_id: Optional[str] = None


def _cost_dict(cost) -> dict:
    out = {}
    for role, c in (cost or {}).items():
        d = asdict(c) if hasattr(c, "__dataclass_fields__") else dict(c)
        out[role] = {k: d.get(k, 0) for k in ("calls", "prompt_tokens", "completion_tokens", "seconds")}
    return out


def _one_line(e: BaseException) -> str:
    msg = " ".join(str(e).split()) or type(e).__name__
    return f"{type(e).__name__}: {msg}"[:300]


def document_recall(support: Optional[Support], ans) -> Optional[bool]:
    """Document recall@Kd (mKG-RAG): the supporting document is among the documents the method recalled
    (``details["document_ids"]``). None when the question has no support or the method recalls no documents."""
    ids = (getattr(ans, "details", None) or {}).get("document_ids")
    if support is None or ids is None:
        return None
    return support.document in ids


def evidence_recall(support: Optional[Support], ans) -> Optional[bool]:
    """Evidence recall (mKG-RAG): a chunk of the supporting document that covers the supporting section is in
    the context (``details["chunk_sections"]``: [{id, doc_id, sections}]). None when not applicable."""
    chunks = (getattr(ans, "details", None) or {}).get("chunk_sections")
    if support is None or chunks is None:
        return None
    return any(c.get("doc_id") == support.document and (support.section is None or support.section in
                                                          (c.get("sections") or [])) for c in chunks)


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
    r.gold_path = gold_path_retained(q.path, ans.paths or []) if q.path else None
    r.doc_recall = document_recall(q.support, ans)
    r.evidence_recall = evidence_recall(q.support, ans)
    r.context_tokens = (getattr(ans, "details", None) or {}).get("context_tokens")
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


# --------------------------------------------------------------------------- report
def _rate(values: list[Optional[bool]]) -> dict:
    vals = [v for v in values if v is not None]
    n = len(vals)
    k = sum(1 for v in vals if v)
    return {"correct": k, "n": n, "accuracy": (k / n) if n else None}


def _mean_tokens(ran: list[QuestionResult]) -> dict:
    toks = [r.context_tokens for r in ran if r.context_tokens is not None]
    return {"mean": (sum(toks) / len(toks)) if toks else None, "n": len(toks)}


def summarize(results: list[QuestionResult]) -> dict:
    ran = [r for r in results if r.error is None]
    secs = [r.seconds for r in ran if r.seconds is not None]
    roles: dict[str, dict[str, float]] = {}
    for r in ran:
        for role, c in r.cost.items():
            acc = roles.setdefault(role, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0})
            for k in acc:
                acc[k] += c.get(k, 0) or 0
    per_q = {role: {k: v / len(ran) for k, v in acc.items()} for role, acc in sorted(roles.items())} if ran else {}
    fallbacks: dict[str, int] = {}
    for r in ran:
        for code, n in r.fallbacks.items():
            fallbacks[code] = fallbacks.get(code, 0) + n
    return {
        "n": len(results),
        "failed": len(results) - len(ran),
        "abstained": sum(1 for r in ran if r.abstained),
        "sbert@0.3": _rate([r.sbert for r in results]),
        "exact_match": _rate([r.exact_match for r in results]),
        "hits@1": _rate([r.hits1 for r in results]),
        "start_entity": _rate([r.start_entity for r in results]),
        "gold_path": _rate([r.gold_path for r in results]),
        "doc_recall": _rate([r.doc_recall for r in results]),
        "evidence_recall": _rate([r.evidence_recall for r in results]),
        "context_tokens": _mean_tokens(ran),
        "latency_s": {"p50": percentile(secs, 50), "p95": percentile(secs, 95),
                      "mean": (sum(secs) / len(secs)) if secs else None},
        "cost_per_question": per_q,
        "fallbacks": dict(sorted(fallbacks.items())),
        "questions_with_fallbacks": sum(1 for r in ran if r.fallbacks),
    }


def build_report(results: list[QuestionResult], *, questions_file: str, method: str,
                 skipped: list[SkippedLine] = (), options: dict | None = None) -> dict:
    by_hops: dict[str, list[QuestionResult]] = {}
    for r in results:
        by_hops.setdefault(str(r.hops) if r.hops is not None else "unknown", []).append(r)
    order = sorted(by_hops, key=lambda k: (k == "unknown", int(k) if k.isdigit() else 0))
    return {
        "questions_file": questions_file,
        "method": method,
        "options": options or {},
        "sbert_threshold": SBERT_THRESHOLD,
        "skipped_lines": [asdict(s) for s in skipped],
        "overall": summarize(results),
        "by_hops": {k: summarize(by_hops[k]) for k in order},
        "questions": [asdict(r) for r in results],
    }


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


# --------------------------------------------------------------------------- table
def _pct(m: dict) -> str:
    return "–" if not m["n"] else f"{100 * m['accuracy']:.1f}"


def _sec(v) -> str:
    return "–" if v is None else f"{v:.1f}"


def render_tables(report: dict, console) -> None:
    """The report as rich tables: metrics overall and per hop count, cost per role, failures."""
    from rich import box
    from rich.table import Table

    t = Table(title=f"kgqa eval · {report['method']} · {report['questions_file']}", box=box.SIMPLE_HEAD)
    t.add_column("hops")
    for col in ("n", "SBERT@0.3", "EM", "Hits@1", "start", "path", "abst.", "fail", "p50 s", "p95 s"):
        t.add_column(col, justify="right")
    rows = [(f"{k}-hop" if k.isdigit() else k, v) for k, v in report["by_hops"].items()]
    rows.append(("overall", report["overall"]))
    for i, (name, m) in enumerate(rows):
        t.add_row(name, str(m["n"]), _pct(m["sbert@0.3"]), _pct(m["exact_match"]), _pct(m["hits@1"]),
                  _pct(m["start_entity"]), _pct(m["gold_path"]), str(m["abstained"]), str(m["failed"]),
                  _sec(m["latency_s"]["p50"]), _sec(m["latency_s"]["p95"]), end_section=(i == len(rows) - 2))
    console.print(t)
    chat = (report.get("options") or {}).get("chat")
    if chat:
        console.print(f"chat: {chat}", markup=False, soft_wrap=True)
    render_document_metrics(report["overall"], console)
    console.print("accuracies in % over the questions that have the gold field each needs (counts: --json); "
                  "EM = exact match after normalisation, aliases accepted; start = start-entity accuracy; "
                  "path = gold path among the retained paths; p50/p95 = seconds per question",
                  markup=False, soft_wrap=True)
    replay = (report.get("options") or {}).get("replay_cache")
    if replay:
        console.print(f"--replay-cache {replay}: replies found there were replayed, so seconds and latency "
                      "exclude their generation time (calls and tokens are the recorded ones)",
                      markup=False, soft_wrap=True)
    cost = report["overall"]["cost_per_question"]
    if cost:
        c = Table(title="cost per question (mean over questions that ran)")
        for col in ("role", "calls", "prompt tokens", "completion tokens", "seconds"):
            c.add_column(col, justify="right" if col != "role" else "left")
        for role, v in cost.items():
            c.add_row(role, f"{v['calls']:.1f}", f"{v['prompt_tokens']:.0f}", f"{v['completion_tokens']:.0f}",
                      f"{v['seconds']:.2f}")
        console.print(c)
    fb = report["overall"].get("fallbacks") or {}
    if fb:
        console.print(f"fallbacks taken: {sum(fb.values())} in {report['overall']['questions_with_fallbacks']} "
                      f"question(s) — by code: " + ", ".join(f"{k} {v}" for k, v in fb.items()),
                      markup=False, soft_wrap=True)
    failed = [q for q in report["questions"] if q["error"]]
    for q in failed:
        console.print(f"failed {q['id']}: {q['error']}", soft_wrap=True, markup=False)
    if report["skipped_lines"]:
        console.print(f"skipped {len(report['skipped_lines'])} bad line(s) (--lenient): "
                      + "; ".join(f"line {s['line']}: {s['why']}" for s in report["skipped_lines"][:5])
                      + (" …" if len(report["skipped_lines"]) > 5 else ""), soft_wrap=True, markup=False)


def render_document_metrics(m: dict, console) -> None:
    """Document QA (mKG-RAG): document recall@Kd, evidence recall, context tokens — when the questions have
    a ``support`` and the method reports recalled documents."""
    dr, er = m.get("doc_recall") or {}, m.get("evidence_recall") or {}
    if not dr.get("n") and not er.get("n"):
        return
    tok = (m.get("context_tokens") or {}).get("mean")
    console.print(f"document recall@Kd {_pct(dr)} ({dr.get('correct')}/{dr.get('n')}) · evidence recall {_pct(er)} "
                  f"({er.get('correct')}/{er.get('n')}) · context tokens {'-' if tok is None else f'{tok:.0f}'} "
                  "(mean)", markup=False, soft_wrap=True)


def render_comparison(reports: dict[str, dict], console) -> None:
    """Several methods on the same questions: one row per method, overall metrics side by side."""
    from rich import box
    from rich.table import Table

    first = next(iter(reports.values()))
    t = Table(title=f"kgqa eval · side by side · {first['questions_file']}", box=box.SIMPLE_HEAD)
    t.add_column("method")
    for col in ("n", "SBERT@0.3", "EM", "Hits@1", "start", "path", "abst.", "fail", "calls/q", "p50 s", "fallbacks"):
        t.add_column(col, justify="right")
    for name, rep in reports.items():
        m = rep["overall"]
        calls = sum(c["calls"] for role, c in m["cost_per_question"].items() if role != "encoder")
        t.add_row(name, str(m["n"]), _pct(m["sbert@0.3"]), _pct(m["exact_match"]), _pct(m["hits@1"]),
                  _pct(m["start_entity"]), _pct(m["gold_path"]), str(m["abstained"]), str(m["failed"]),
                  f"{calls:.1f}", _sec(m["latency_s"]["p50"]), str(sum((m.get("fallbacks") or {}).values())))
    console.print(t)
    console.print("calls/q = model calls per question except the encoder", markup=False)
