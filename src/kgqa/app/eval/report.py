"""``kgqa eval``'s report: the summary overall and per hop count (the JSON of ``--json``), and its tables."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import TYPE_CHECKING, Optional

from kgqa.app.eval.metrics import SBERT_THRESHOLD, WHY_WRONG, percentile
from kgqa.app.eval.questions import SkippedLine

if TYPE_CHECKING:
    from kgqa.app.eval.records import QuestionResult


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
        # selection given retained: over the questions whose gold path was retained, the share where it was chosen
        "selected": _rate([r.selected for r in results if r.gold_path]),
        "why_wrong": {k: n for k in WHY_WRONG if (n := sum(1 for r in results if r.why_wrong == k))},
        # wrong answers whose gold path a hop-by-hop method dropped, by the hop that dropped it
        # (the runner keeps lost_at_hop only on answers whose cause is gold_path_not_retained)
        "lost_at_hop": {str(h): n for h, n in sorted(Counter(r.lost_at_hop for r in results if r.lost_at_hop).items())},
        # of the retained-but-not-selected: the gold answer's path scored exactly as the given answer's (a tie)
        "tied": sum(1 for r in results if r.tied),
        "doc_recall": _rate([r.doc_recall for r in results]),
        "evidence_recall": _rate([r.evidence_recall for r in results]),
        # of the right answers whose support names a page: the share cited on that page
        "cited_page": _rate([r.cited_page for r in results]),
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
    for col in ("n", "SBERT@0.3", "EM", "Hits@1", "start", "path", "selected", "abst.", "fail", "p50 s", "p95 s"):
        t.add_column(col, justify="right")
    rows = [(f"{k}-hop" if k.isdigit() else k, v) for k, v in report["by_hops"].items()]
    rows.append(("overall", report["overall"]))
    for i, (name, m) in enumerate(rows):
        t.add_row(name, str(m["n"]), _pct(m["sbert@0.3"]), _pct(m["exact_match"]), _pct(m["hits@1"]),
                  _pct(m["start_entity"]), _pct(m["gold_path"]), _pct(m["selected"]), str(m["abstained"]),
                  str(m["failed"]),
                  _sec(m["latency_s"]["p50"]), _sec(m["latency_s"]["p95"]), end_section=(i == len(rows) - 2))
    console.print(t)
    chat = (report.get("options") or {}).get("chat")
    if chat:
        console.print(f"chat: {chat}", markup=False, soft_wrap=True)
    render_document_metrics(report["overall"], console)
    console.print("accuracies in % over the questions that have the gold field each needs (counts: --json); "
                  "EM = exact match after normalisation, aliases accepted; start = start-entity accuracy; "
                  "path = gold path among the retained paths; selected = of those, the gold path chosen (the answer is its "
                  "end entity); p50/p95 = seconds per question", markup=False, soft_wrap=True)
    render_why_wrong(report, console)
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


_WHY_WORDS = {"start_wrong": "start wrong", "gold_path_not_retained": "gold path not retained",
              "retained_not_selected": "retained but not selected",
              "selected_answer_differs": "selected but the answer string differs", "failed": "failed"}


_WRONG_LINES = 20


def render_why_wrong(report: dict, console) -> None:
    """Why the wrong answers were wrong: the count per cause, then one line per wrong question."""
    why = report["overall"].get("why_wrong") or {}
    if not why:
        return
    lost = report["overall"].get("lost_at_hop") or {}
    causes = [f"{_WHY_WORDS[k]} {n}" + (" (lost at hop " + ", ".join(f"{h}: {m}" for h, m in lost.items()) + ")"
                                        if k == "gold_path_not_retained" and lost else "")
              + (f" (a tie with the gold answer: {report['overall']['tied']})"
                 if k == "retained_not_selected" and report["overall"].get("tied") else "")
              for k, n in why.items()]
    console.print("wrong answers by cause: " + ", ".join(causes), markup=False, soft_wrap=True)
    wrong = [q for q in report["questions"] if q.get("why_wrong") and q["why_wrong"] != "failed"]
    for q in wrong[:_WRONG_LINES]:
        where = (" (a tie: the gold answer scored exactly as the one given)" if q.get("tied") else
                 f" (lost at hop {q['lost_at_hop']})" if q.get("lost_at_hop") else "")
        console.print(f"wrong {q['id']}: {_WHY_WORDS[q['why_wrong']]}{where} (answered {q['prediction']!r}, "
                      f"gold {q['gold']!r})", markup=False, soft_wrap=True)
    if len(wrong) > _WRONG_LINES:
        console.print(f"… {len(wrong) - _WRONG_LINES} more wrong answer(s): --json has each question's why_wrong",
                      markup=False, soft_wrap=True)


def render_document_metrics(m: dict, console) -> None:
    """Document QA (mKG-RAG): document recall@Kd, evidence recall, context tokens — when the questions have
    a ``support`` and the method reports recalled documents."""
    dr, er, cp = m.get("doc_recall") or {}, m.get("evidence_recall") or {}, m.get("cited_page") or {}
    if not dr.get("n") and not er.get("n"):
        return
    tok = (m.get("context_tokens") or {}).get("mean")
    page = (f" · cited page right {_pct(cp)} ({cp.get('correct')}/{cp.get('n')} right answers with a supporting "
            "page)" if cp.get("n") else "")
    console.print(f"document recall@Kd {_pct(dr)} ({dr.get('correct')}/{dr.get('n')}) · evidence recall {_pct(er)} "
                  f"({er.get('correct')}/{er.get('n')}){page} · context tokens {'-' if tok is None else f'{tok:.0f}'} "
                  "(mean)", markup=False, soft_wrap=True)


def render_comparison(reports: dict[str, dict], console) -> None:
    """Several methods on the same questions: one row per method, overall metrics side by side."""
    from rich import box
    from rich.table import Table

    first = next(iter(reports.values()))
    t = Table(title=f"kgqa eval · side by side · {first['questions_file']}", box=box.SIMPLE_HEAD)
    t.add_column("method")
    for col in ("n", "SBERT@0.3", "EM", "Hits@1", "start", "path", "selected", "abst.", "fail", "calls/q", "p50 s",
                "fallbacks"):
        t.add_column(col, justify="right")
    for name, rep in reports.items():
        m = rep["overall"]
        calls = sum(c["calls"] for role, c in m["cost_per_question"].items() if role != "encoder")
        t.add_row(name, str(m["n"]), _pct(m["sbert@0.3"]), _pct(m["exact_match"]), _pct(m["hits@1"]),
                  _pct(m["start_entity"]), _pct(m["gold_path"]), _pct(m["selected"]), str(m["abstained"]),
                  str(m["failed"]),
                  f"{calls:.1f}", _sec(m["latency_s"]["p50"]), str(sum((m.get("fallbacks") or {}).values())))
    console.print(t)
    console.print("calls/q = model calls per question except the encoder", markup=False)
