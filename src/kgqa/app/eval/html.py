"""``kgqa eval --report DIR``'s page: one self-contained HTML file (no script, no file or address it loads).

What it shows, for the methods of one run (and a baseline report when given):

* exact match per hop count, one bar per method (and the baseline) side by side;
* document QA: document and evidence recall, and the share of right answers cited on their supporting page;
* the why-wrong breakdown (``metrics.WHY_WRONG``: the first cause of each wrong answer) per method;
* each wrong question: the question, gold and predicted answers, its cause, the hop that lost the gold
  path, and the link that opens its reasoning trace in Neo4j Browser (when the run stored traces).

Every text taken from the questions, the graph or a model is escaped (``html.escape``).
"""

from __future__ import annotations

from html import escape
from typing import Callable, Optional

from kgqa.app.eval.metrics import WHY_WRONG

#: bar colours, one per series (method, then the baseline in grey)
COLOURS = ("#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280")
BASELINE_COLOUR = "#a0aec0"

WHY_TEXT = {
    "start_wrong": "wrong start entity",
    "gold_path_not_retained": "gold path not retained",
    "retained_not_selected": "gold path retained, another chosen",
    "selected_answer_differs": "gold path chosen, answer text differs",
    "failed": "the method raised",
}

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#1a202c}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e2e8f0}
.meta{color:#4a5568;font-size:13px}.legend span{display:inline-block;margin-right:16px}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.hop{display:grid;grid-template-columns:90px 1fr;gap:4px 10px;margin:10px 0}
.hop .lab{font-weight:600}.bar{display:flex;align-items:center;gap:8px;height:20px}
.fill{height:16px;border-radius:2px;min-width:1px}.num{font-size:12px;color:#2d3748;white-space:nowrap}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:4px 8px;
border-bottom:1px solid #edf2f7;vertical-align:top}th{background:#f7fafc}td.n{text-align:right}
.why{display:inline-block;padding:1px 6px;border-radius:8px;background:#fed7d7;font-size:12px}
"""


def _pct(m: dict | None) -> Optional[float]:
    return None if not m or not m.get("n") else 100.0 * m["accuracy"]


def _series(reports: dict[str, dict], baseline: dict | None) -> list[tuple[str, dict, str]]:
    out = [(name, r, COLOURS[i % len(COLOURS)]) for i, (name, r) in enumerate(reports.items())]
    if baseline is not None:
        out.append((f"baseline: {baseline.get('method', '?')}", baseline, BASELINE_COLOUR))
    return out


def _hop_bars(series: list[tuple[str, dict, str]]) -> str:
    hops: list[str] = []
    for _, r, _ in series:
        for h in r.get("by_hops", {}):
            if h not in hops:
                hops.append(h)
    hops.sort(key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0))
    rows = []
    for h in ["all", *hops]:
        bars = []
        for name, r, colour in series:
            m = r.get("overall") if h == "all" else r.get("by_hops", {}).get(h)
            p = _pct((m or {}).get("exact_match"))
            n = (m or {}).get("n", 0)
            text = "–" if p is None else f"{p:.1f} % of {n}"
            bars.append(f'<div class="bar" title="{escape(name)}"><div class="fill" style="width:{(p or 0) * 0.8:.1f}%;'
                        f'background:{colour}"></div><span class="num">{escape(name)} · {text}</span></div>')
        label = "all" if h == "all" else (f"{h}-hop" if h.isdigit() else h)
        rows.append(f'<div class="hop"><div class="lab" style="grid-row:1 / span {len(bars)}">{escape(label)}</div>'
                    f'{"".join(bars)}</div>')
    return "\n".join(rows)


def _why_table(series: list[tuple[str, dict, str]]) -> str:
    head = "".join(f"<th>{escape(name)}</th>" for name, _, _ in series)
    rows = []
    for k in WHY_WRONG:
        counts = [(r.get("overall") or {}).get("why_wrong", {}).get(k, 0) for _, r, _ in series]
        if any(counts):
            rows.append(f"<tr><td>{escape(WHY_TEXT.get(k, k))} <code>{escape(k)}</code></td>"
                        + "".join(f'<td class="n">{c}</td>' for c in counts) + "</tr>")
    wrong = [sum(1 for q in r.get("questions", []) if q.get("exact_match") is False) for _, r, _ in series]
    rows.append("<tr><td><b>wrong answers</b> (not an exact match)</td>"
                + "".join(f'<td class="n"><b>{c}</b></td>' for c in wrong) + "</tr>")
    return f"<table><tr><th>first cause</th>{head}</tr>{''.join(rows)}</table>"


def _document_table(series: list[tuple[str, dict, str]]) -> str:
    """Document QA: document recall@Kd, evidence recall and, of the right answers whose support names a page, the
    share cited on that page; empty when no series has a question with a ``support``."""
    keys = (("doc_recall", "document recall@Kd"), ("evidence_recall", "evidence recall"),
            ("cited_page", "cited page right (of the right answers with a supporting page)"))
    if not any(((r.get("overall") or {}).get("doc_recall") or {}).get("n") for _, r, _ in series):
        return ""
    head = "".join(f"<th>{escape(name)}</th>" for name, _, _ in series)
    rows = []
    for key, label in keys:
        cells = []
        for _, r, _ in series:
            m = (r.get("overall") or {}).get(key) or {}
            p = _pct(m)
            text = "–" if p is None else f"{p:.1f} % ({m['correct']}/{m['n']})"
            cells.append(f'<td class="n">{text}</td>')
        rows.append(f"<tr><td>{escape(label)}</td>{''.join(cells)}</tr>")
    return f"<h2>Documents: recall and cited pages</h2><table><tr><th></th>{head}</tr>{''.join(rows)}</table>"


def _wrong_table(name: str, report: dict, link: Callable[[str], Optional[str]]) -> str:
    rows = []
    for q in report.get("questions", []):
        if q.get("exact_match") is not False:
            continue
        pred = q.get("error") or ("(abstained)" if q.get("abstained") else q.get("prediction"))
        why = q.get("why_wrong")
        lost = f" at hop {q['lost_at_hop']}" if q.get("lost_at_hop") else ""
        url = link(q["trace_id"]) if q.get("trace_id") else None
        trace = (f'<a href="{escape(url, quote=True)}">{escape(q["trace_id"])}</a>' if url else
                 "no trace (run with --traces)")
        rows.append(f"<tr><td>{escape(str(q.get('id')))}</td><td class=\"n\">{escape(str(q.get('hops') or '–'))}</td>"
                    f"<td>{escape(q.get('question') or '')}</td><td>{escape(q.get('gold') or '')}</td>"
                    f"<td>{escape(str(pred))}</td><td>" + (f'<span class="why">{escape(WHY_TEXT.get(why, why))}'
                                                           f'{escape(lost)}</span>' if why else "–")
                    + f"</td><td>{trace}</td></tr>")
    if not rows:
        return f"<p>{escape(name)}: every answer is an exact match.</p>"
    return (f"<h3>{escape(name)}: {len(rows)} wrong</h3><table><tr><th>id</th><th>hops</th><th>question</th>"
            f"<th>gold</th><th>answer</th><th>why wrong</th><th>trace</th></tr>{''.join(rows)}</table>")


def render_html(reports: dict[str, dict], *, questions_file: str, chat: str = "", baseline: dict | None = None,
                link: Callable[[str], Optional[str]] = lambda trace_id: None) -> str:
    """The page for the reports of one run (method name → ``build_report``'s dict); ``baseline`` another
    run's report drawn beside them; ``link`` a trace id's Neo4j Browser address."""
    series = _series(reports, baseline)
    legend = "".join(f'<span><i class="sw" style="background:{c}"></i>{escape(n)}</span>' for n, _, c in series)
    summary = " · ".join(
        f"{escape(n)}: EM {(_pct(r['overall']['exact_match']) or 0):.1f} %, SBERT@0.3 "
        f"{(_pct(r['overall']['sbert@0.3']) or 0):.1f} %, n = {r['overall']['n']}" for n, r, _ in series)
    wrong = "\n".join(_wrong_table(name, r, link) for name, r in reports.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kgqa eval · {escape(questions_file)}</title>
<style>{CSS}</style></head><body>
<h1>kgqa eval · {escape(questions_file)}</h1>
<div class="meta">{escape(chat)}</div>
<div class="meta">{summary}</div>
<h2>Exact match per hop count</h2>
<div class="legend">{legend}</div>
{_hop_bars(series)}
{_document_table(series)}
<h2>Why wrong: the first cause of each wrong answer</h2>
{_why_table(series)}
<h2>Wrong questions</h2>
{wrong}
</body></html>
"""
