"""The reader on a public reading benchmark: SQuAD v1.1 dev (never trained or tuned on).

    KGQA_TORCH_THREADS=1 python -m bench.squad reading [--limit N] [--squad DIR] [--checkpoint FILE]
                                                   [--readers learned,typed,rules]
    KGQA_TORCH_THREADS=1 python -m bench.squad heldout --checkpoints A,B [--distractors K]
    KGQA_TORCH_THREADS=1 python -m bench.squad open [--heldout] [--load [--load-only]] [--articles N] [--limit N]
                                                [--ask FROM:TO] [-o KEY=VALUE] [--dump FILE] [--verbose]
    python -m bench.squad abstain --answerable A.jsonl --unanswerable B.jsonl [--thresholds -2,-1,-0.5,0]

* ``reading``: each question with its own paragraph. EM and F1 with the official normalisation (lower case,
  no punctuation, no articles a/an/the, single spaces; the best over the gold answers; an abstention
  scores 0) for
  - the learned span reader alone (``kgqa.models.heads.span_reader``: its best span, never abstaining), the
    figure comparable with published readers;
  - the same reader as mKG-RAG uses it (``kgqa.methods.mkgrag.learned_reader``: the paragraph as a retrieved chunk,
    typed by the question, abstaining below the checkpoint's threshold);
  - today's rule reader (``kgqa.methods.mkgrag.rule_reader``) on the same chunk;
  - the published DrQA document reader (Chen, Fisch, Weston and Bordes, "Reading Wikipedia to Answer
    Open-Domain Questions", ACL 2017: 69.5 / 78.8, trained on all 87,599 train questions), quoted.
  ``--limit N`` reads N questions spread evenly over the file (every k-th), for quick runs.
* ``open``: the 48 dev articles as Markdown documents (one per article: its title as heading, its paragraphs),
  written to ``.kgqa/squad/articles`` and loaded with ``kgqa load documents`` (``--load``; graph-only,
  ``KGQA_CHAT_BACKEND=none``); then every question (or ``--limit N`` of them, spread evenly) asked without its
  paragraph through mKG-RAG and its chunks-only ablation, both with the learned reader: EM, F1, document
  recall@Kd (the question's article among the recalled documents), abstentions.
  Per question also chunk recall (the sentence holding the gold answer inside a chunk that reaches the
  reader), and a per-stage table (document recall → chunk recall → EM given the chunk) for both systems;
  ``--ask FROM:TO`` asks only the questions of those loaded articles (choose on 0:4, report on 4:8),
  ``-o KEY=VALUE`` passes an mkgrag option to both, ``--dump FILE`` writes one JSON line per question.
  ``--heldout``: the training sample's 4 held-out articles (``kgqa train reader``'s split, never trained on)
  instead of dev, written to ``.kgqa/squad/heldout-articles`` and loaded beside whatever the server holds: where
  mkgrag's options are chosen before dev is read.

* ``abstain``: what abstaining by the passage ranker (mkgrag's ``rank_abstain``) would cost and catch, from two
  ``open --dump`` files of the same questions: ``--answerable`` asked with their articles loaded and
  ``--unanswerable`` asked on a server from which those articles were removed (``kgqa docs rm``). Per system and
  threshold: EM on the answerable questions (an answer whose best ranker score is below the threshold becomes
  an abstention) and the share of the unanswerable ones still answered (each such answer is wrong).

* ``heldout``: checkpoints on the training sample's held-out articles (never trained on, not dev): the best
  span on each question's own paragraph, and by margin over it and its K most similar other paragraphs of the
  article (whether span scores compare across passages; shared normalisation is meant for that).

Prints the settings (threads, checkpoint and what it was trained on) and the tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from bench._common import method_options

REPO = Path(__file__).resolve().parent.parent
SQUAD = REPO.parent / "shared" / "datasets" / "squad"
DRQA = (69.5, 78.8)


def _spread(items: list, limit: int | None) -> list:
    if not limit or limit >= len(items):
        return items
    step = len(items) / limit
    return [items[int(i * step)] for i in range(limit)]


def _threads() -> int:
    import torch

    n = int(os.environ.get("KGQA_TORCH_THREADS", "1"))
    torch.set_num_threads(n)
    return torch.get_num_threads()


def _scores(preds: list[str | None], qas) -> tuple[float, float, float]:
    from kgqa.training.squad import exact_match, f1_score

    n = max(len(qas), 1)
    em = sum(exact_match(p, [a for a, _ in q.answers]) for p, q in zip(preds, qas))
    f1 = sum(f1_score(p, [a for a, _ in q.answers]) for p, q in zip(preds, qas))
    return 100 * em / n, 100 * f1 / n, 100 * sum(p is None for p in preds) / n


def _chunk(q, k: int):
    from kgqa.methods.mkgrag.records import Chunk

    doc = re.sub(r"\W+", "_", q.article.lower()).strip("_")
    return Chunk(f"{doc}#p{k}", doc, q.article.replace("_", " "), q.context)


def _request(question: str, c):
    """mKG-RAG's reading request for ``question`` over the chunk ``c`` alone (its document the subject)."""
    from kgqa.methods.mkgrag.reading import ReadRequest
    from kgqa.methods.mkgrag.records import Document

    return ReadRequest(question, [c], [], [Document(c.doc_id, c.title, 0.0)])


def bench_reading(args) -> None:
    from kgqa.methods.mkgrag.learned_reader import LearnedReader
    from kgqa.models.heads.span_reader import default_checkpoint, load_span_reader
    from kgqa.training.squad import load_squad
    from kgqa.core.config import Settings

    threads = _threads()
    qas = _spread(load_squad(Path(args.squad) / "dev-v1.1.json.gz"), args.limit)
    ckpt = Path(args.checkpoint) if args.checkpoint else default_checkpoint(Settings())
    which = set(args.readers.split(","))
    reader = load_span_reader(ckpt) if which & {"learned", "learned-fp32", "typed", "onnx"} else None
    m = reader.meta if reader else {}
    print(f"SQuAD v1.1 dev, reading setting · {len(qas)} questions · torch threads {threads} · load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if reader:
        print(f"learned reader: {ckpt} ({ckpt.stat().st_size / 1e6:.1f} MB) trained on "
              f"{m.get('trained_on', {}).get('files')} ({m.get('examples')} questions + {m.get('no_answer_pairs')} "
              f"no-answer pairs, {m.get('epochs_done')} epochs, {m.get('train_seconds')} s, seed {m.get('seed')}, "
              f"max_length {m.get('max_length')}, stride {m.get('doc_stride')}); abstention threshold "
              f"{m.get('threshold')} (held-out training articles)")
    print(f"seconds per row include tokenising; q/s = questions per second on {threads} thread(s)")
    rows = []
    base_preds = None
    if "learned" in which:
        t = time.perf_counter()
        best = reader.read_many([q.question for q in qas], [q.context for q in qas], top=1)
        dt = time.perf_counter() - t
        base_preds = [g[0].text if g else None for g in best]
        rows.append(("learned span reader (best span)", *_scores(base_preds, qas), dt))
    if "learned-fp32" in which:
        t = time.perf_counter()
        best = reader.read_many([q.question for q in qas], [q.context for q in qas], top=1, bf16=False)
        preds = [g[0].text if g else None for g in best]
        rows.append(("learned span reader, torch fp32 (best span)", *_scores(preds, qas), time.perf_counter() - t))
    for rt in ("onnx",):
        if rt not in which:
            continue
        t = time.perf_counter()
        other = load_span_reader(ckpt, backend="onnx", cache_dir=REPO / ".kgqa" / "onnx", threads=threads)
        onnx_file = other.model.path
        t_export = time.perf_counter() - t
        t = time.perf_counter()
        best = other.read_many([q.question for q in qas], [q.context for q in qas], top=1)
        dt = time.perf_counter() - t
        preds = [g[0].text if g else None for g in best]
        same = (f", same answer as the torch row on {100 * sum(a == b for a, b in zip(preds, base_preds)) / len(qas):.1f} %"
                if base_preds else "")
        print(f"{rt}: {onnx_file.name} ({onnx_file.stat().st_size / 1e6:.1f} MB), export+load {t_export:.1f} s{same}")
        rows.append((f"learned span reader, {rt} (best span)", *_scores(preds, qas), dt))
    chunks = {}
    for q in qas:
        chunks.setdefault(q.context, _chunk(q, len(chunks)))
    if "typed" in which:
        t = time.perf_counter()
        typed = LearnedReader(reader)
        preds = [typed.read(_request(q.question, chunks[q.context])).answer for q in qas]
        rows.append(("learned, as mKG-RAG reads (typed, abstains)", *_scores(preds, qas), time.perf_counter() - t))
    if "rules" in which:
        import numpy as np

        from kgqa.methods.mkgrag.rule_reader import RuleReader
        from kgqa.models.encoder import get_encoder

        enc = get_encoder(Settings().encoder_model, device="cpu", threads=threads)

        def embed(texts):
            v = np.asarray(enc.encode(list(texts)), dtype=np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)

        t = time.perf_counter()
        rules = RuleReader(embed)
        preds = [rules.read(_request(q.question, chunks[q.context])).answer for q in qas]
        rows.append(("rule reader (today's CPU reader)", *_scores(preds, qas), time.perf_counter() - t))
    print(f"  {'reader':<46} {'EM':>6} {'F1':>6} {'abst. %':>8} {'q/s':>7}")
    for label, em, f1, ab, sec in rows:
        print(f"  {label:<46} {em:6.2f} {f1:6.2f} {ab:8.1f} {len(qas) / max(sec, 1e-9):7.1f}")
    print(f"  {'DrQA document reader (published, full train)':<46} {DRQA[0]:6.1f} {DRQA[1]:6.1f} {'-':>8} {'-':>7}")


# ----------------------------------------------------------------------------------- held-out training articles
def bench_heldout(args) -> None:
    """Each checkpoint on the training sample's held-out articles (never trained on; where checkpoints are
    compared without touching dev): the best span on each question's own paragraph, and the best span by
    margin (as mKG-RAG ranks) over the paragraph and its ``--distractors`` most similar other paragraphs."""
    from kgqa.models.heads.span_reader import load_span_reader
    from kgqa.training.span_reader import best_span_scores, multi_passage_scores
    from kgqa.training.squad import load_squad, split_articles

    threads = _threads()
    _, held = split_articles(load_squad(args.data), args.holdout, args.seed)
    titles = sorted({q.article for q in held})
    print(f"held-out training articles of {Path(args.data).name} ({len(held)} questions: {', '.join(titles)}) · "
          f"torch threads {threads} · load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"  {'checkpoint':<52} {'own EM':>7} {'F1':>6} {f'+{args.distractors} EM':>7} {'F1':>6} {'s':>6}")
    for path in args.checkpoints.split(","):
        reader = load_span_reader(path, backend=args.backend, cache_dir=REPO / ".kgqa" / "onnx", threads=threads)
        if sorted(reader.meta.get("trained_on", {}).get("holdout_articles") or titles) != titles:
            print(f"  {path}: held out other articles ({reader.meta['trained_on']['holdout_articles']}); skipped")
            continue
        t = time.perf_counter()
        em, f1 = best_span_scores(reader, held)
        em_k, f1_k = multi_passage_scores(reader, held, args.distractors)
        sn = " (shared-norm)" if reader.shared_norm else ""
        print(f"  {(path + sn)[-52:]:<52} {em:7.2f} {f1:6.2f} {em_k:7.2f} {f1_k:6.2f} {time.perf_counter() - t:6.0f}")


# ------------------------------------------------------------------------------------------------ open setting
def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")


def write_articles(qas, out: Path) -> dict[str, str]:
    """One Markdown document per article (its title as heading, its paragraphs); article → file stem."""
    out.mkdir(parents=True, exist_ok=True)
    from kgqa.training.squad import paragraphs_by_article

    stems = {}
    for art, ps in paragraphs_by_article(qas).items():
        stem = _slug(art)
        stems[art] = stem
        (out / f"{stem}.md").write_text(f"# {art.replace('_', ' ')}\n\n" + "\n\n".join(ps) + "\n", encoding="utf-8")
    return stems


def rt_docs(s) -> list:
    from kgqa.core.graph import Graph

    with Graph(s) as g:
        return g.read("docs_list")


def _norm(text: str) -> str:
    return " ".join(text.split())


def answer_sentence(q) -> str:
    """The sentence of the question's paragraph that holds its (first) gold answer, whitespace-normalised: a
    chunk holding it holds the answer's evidence, whether the paragraph is a chunk of its own, one of several
    in a chunk, or split over chunks."""
    text, start = q.context, q.answers[0][1]
    lo = max((text.rfind(x, 0, start) for x in (". ", "? ", "! ")), default=-1)
    lo = 0 if lo < 0 else lo + 2
    ends = [k for k in (text.find(x, start + len(q.answers[0][0])) for x in (". ", "? ", "! ")) if k >= 0]
    hi = min(ends) + 1 if ends else len(text)
    return _norm(text[lo:hi])


def chunk_recalled(q, chunk_texts: list[str]) -> bool:
    """Is the question's evidence among the chunks that reach the reader: its answer's sentence (see
    ``answer_sentence``) inside one of them."""
    sent = answer_sentence(q)
    return any(sent in _norm(t) for t in chunk_texts)


def stage_table(rows: list[dict]) -> list[tuple[str, str]]:
    """Where answers are lost, stage by stage: (label, value) rows over per-question records with ``doc``,
    ``chunk``, ``em``, ``f1``, ``abstained``."""
    n = max(len(rows), 1)
    doc = [r for r in rows if r["doc"]]
    ch = [r for r in rows if r["chunk"]]
    miss = [r for r in rows if not r["chunk"]]

    def pct(k: int, d: int) -> str:
        return f"{100 * k / d:5.1f} ({k:g}/{d})" if d else "    - (0/0)"

    return [("document recall@Kd", pct(len(doc), n)),
            ("chunk recall (answer's sentence read)", pct(len(ch), n)),
            ("chunk recall | document recalled", pct(sum(r["chunk"] for r in doc), len(doc))),
            ("EM | chunk recalled", pct(sum(r["em"] for r in ch), len(ch))),
            ("abstained | chunk recalled", pct(sum(r["abstained"] for r in ch), len(ch))),
            ("EM | chunk not recalled", pct(sum(r["em"] for r in miss), len(miss))),
            ("EM (all)", pct(sum(r["em"] for r in rows), n))]


def bench_open(args) -> None:
    import json

    from kgqa.app.pipeline import Pipeline
    from kgqa.core.config import Settings
    from kgqa.training.squad import exact_match, f1_score, load_squad

    os.environ["KGQA_CHAT_BACKEND"] = "none"
    threads = _threads()
    if args.heldout:                       # the training sample's held-out articles: where options are chosen
        from kgqa.training.squad import split_articles

        _, all_qas = split_articles(load_squad(args.data), 4, 0)
        source = f"the held-out articles of {Path(args.data).name} (never trained on)"
    else:
        all_qas = load_squad(Path(args.squad) / "dev-v1.1.json.gz")
        source = "SQuAD v1.1 dev"
    articles = list(dict.fromkeys(q.article for q in all_qas))
    if args.articles:                      # the first N articles of the file only (a quicker, smaller corpus)
        articles = articles[:args.articles]
        all_qas = [q for q in all_qas if q.article in set(articles)]
    folder = REPO / ".kgqa" / "squad" / ("heldout-articles" if args.heldout else
                                         f"articles-{args.articles}" if args.articles else "articles")
    stems = write_articles(all_qas, folder)
    if args.load:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kgqa.app.cli", "load", "documents", str(folder)], check=True)
        print(f"loaded {len(stems)} articles in {time.perf_counter() - t:.0f} s")
        if args.load_only:
            return
    asked = all_qas
    if args.ask:                           # questions of a slice of the loaded articles only ("0:4", "4:8")
        lo, sep, hi = args.ask.partition(":")
        if not sep:
            raise SystemExit(f"--ask {args.ask!r}: expected FROM:TO (article positions, e.g. 4:8)")
        part = set(articles[int(lo or 0):int(hi) if hi else None])
        asked = [q for q in all_qas if q.article in part]
    qas = _spread(asked, args.limit)
    extra = method_options(args.option or [])
    s = Settings()
    docs = len(rt_docs(s))
    print(f"{source}, open setting · {len(stems)} articles loaded as documents ({docs} documents in the "
          f"graph) · {len(qas)} questions of {len({q.article for q in qas})} articles asked without their "
          f"paragraph · {extra.get('reader', 'learned')} reader · torch threads {threads} · load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}" + (f" · options {extra}" if extra else ""))
    from kgqa.models.heads.span_reader import default_checkpoint, load_span_reader

    ckpt = extra.get("reader_checkpoint") or default_checkpoint(s)
    sn = load_span_reader(ckpt).meta.get("shared_norm")
    print(f"learned reader: {ckpt}" + (f" (shared normalisation, {sn.get('distractors')} distractors: spans ranked "
                                       "by raw score; budget and chunk share: the shared_norm_ options)" if sn else ""))
    rd = {"rules": "rule", "cpu": "rule"}.get(extra.get("reader", "learned"), extra.get("reader", "learned"))
    systems = ((f"mkgrag + {rd} reader", {"reader": "learned", **extra}),
               (f"chunks-only + {rd} reader", {"reader": "learned", **extra, "chunks_only": True}))
    results = []
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None
    try:
        for label, opts in systems:
            pipe = Pipeline(s, method="mkgrag", options=opts, write_trace=False)
            rows, secs, preds = [], [], []
            try:
                for q in qas:
                    t = time.perf_counter()
                    a = pipe.answer(q.question)
                    secs.append(time.perf_counter() - t)
                    golds = [x for x, _ in q.answers]
                    ids = set(a.details.get("chunk_ids") or [])
                    texts = [e.text for e in a.evidence if getattr(e, "kind", "") == "chunk" and e.chunk_id in ids]
                    docs_r = a.details.get("document_ids") or []
                    row = {"system": label, "qid": q.qid, "article": q.article, "question": q.question,
                           "gold": golds, "answer": a.answer,
                           "doc": any(d == stems[q.article] or d.endswith(stems[q.article]) for d in docs_r),
                           "chunk": chunk_recalled(q, texts), "chunks": len(texts),
                           "em": exact_match(a.answer, golds), "f1": f1_score(a.answer, golds),
                           "abstained": a.answer is None, "why": a.stop_reason,
                           "context_tokens": a.details.get("context_tokens"),
                           "rank_best": max((a.details.get("chunk_rank_scores") or {}).values(), default=None),
                           "reader_score": a.details.get("reader_score")}
                    rows.append(row)
                    preds.append(a.answer)
                    if dump:
                        dump.write(json.dumps(row) + "\n")
                    if args.verbose:
                        print(f"  [{'D' if row['doc'] else '-'}{'C' if row['chunk'] else '-'}"
                              f"{'=' if row['em'] else ' '}] {q.question[:60]!r} -> {a.answer!r} (gold {golds[0]!r})")
            finally:
                pipe.close()
            secs.sort()
            results.append((label, rows, preds, secs))
    finally:
        if dump:
            dump.close()
    print(f"  {'system':<30} {'EM':>6} {'F1':>6} {'doc R':>6} {'chunk R':>8} {'abst. %':>8} {'chunks':>7} "
          f"{'s/q p50':>8}")
    for label, rows, preds, secs in results:
        em, f1, ab = _scores(preds, qas)
        n = max(len(rows), 1)
        print(f"  {label:<30} {em:6.1f} {f1:6.1f} {100 * sum(r['doc'] for r in rows) / n:6.1f} "
              f"{100 * sum(r['chunk'] for r in rows) / n:8.1f} {ab:8.1f} {sum(r['chunks'] for r in rows) / n:7.1f} "
              f"{secs[len(secs) // 2]:8.2f}")
    print("  where answers are lost (per stage):")
    tables = [dict(stage_table(rows)) for _, rows, _, _ in results]
    print(f"  {'stage':<40} " + " ".join(f"{label.split(' +')[0]:>16}" for label, *_ in results))
    for k in tables[0]:
        print(f"  {k:<40} " + " ".join(f"{t[k]:>16}" for t in tables))


def bench_abstain(args) -> None:
    """EM on answerable questions and answers given to unanswerable ones, per ranker threshold (module doc)."""
    import json

    def rows(path):
        return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]

    def kept(r, t):                 # the answer survives abstention at threshold t (no ranker score: kept)
        return not r["abstained"] and (t is None or r.get("rank_best") is None or r["rank_best"] >= t)

    ans, una = rows(args.answerable), rows(args.unanswerable)
    ts = [None] + [float(x) for x in args.thresholds.split(",")]
    print(f"abstention by the passage ranker's best score · answerable: {args.answerable} · unanswerable: "
          f"{args.unanswerable}")
    print(f"  {'system':<30} {'threshold':>9} {'EM answerable':>14} {'answered unanswerable':>22}")
    for system in dict.fromkeys(r["system"] for r in ans):
        a = [r for r in ans if r["system"] == system]
        u = [r for r in una if r["system"] == system]
        for t in ts:
            em = 100.0 * sum(r["em"] for r in a if kept(r, t)) / max(len(a), 1)
            answered = 100.0 * sum(kept(r, t) for r in u) / max(len(u), 1)
            print(f"  {system:<30} {'off' if t is None else f'{t:+.2f}':>9} {em:>8.2f} ({len(a)}) "
                  f"{answered:>15.1f} % ({len(u)})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("reading")
    a.add_argument("--limit", type=int, default=None, help="N questions spread evenly over dev (default: all)")
    a.add_argument("--squad", default=str(SQUAD), help="the folder of dev-v1.1.json.gz")
    a.add_argument("--checkpoint", default=None, help="the span reader (default: what mkgrag loads)")
    a.add_argument("--readers", default="learned,typed,rules", help="rows to compute: learned (best span; torch, "
                   "bf16 autocast where the CPU has it), learned-fp32 (torch without autocast: a CPU without native bf16), onnx (the same checkpoint through onnxruntime, "
                   "fp32: KGQA_READER_BACKEND=onnx), typed (as mKG-RAG reads), rules (the rule reader, the slowest)")
    b = sub.add_parser("open")
    b.add_argument("--load", action="store_true", help="write and load the 48 articles first")
    b.add_argument("--load-only", action="store_true", help="with --load: stop after loading")
    b.add_argument("--limit", type=int, default=None, help="N questions spread evenly over dev (default: all)")
    b.add_argument("--squad", default=str(SQUAD))
    b.add_argument("--heldout", action="store_true", help="the training sample's 4 held-out articles (as kgqa "
                   "train reader's default split; never trained on) instead of dev: where mkgrag options are chosen")
    b.add_argument("--data", default=str(SQUAD / "train-sample-44.json.gz"), help="the training sample (--heldout)")
    b.add_argument("--articles", type=int, default=None, help="only the first N dev articles (loaded and asked)")
    b.add_argument("--ask", default=None, help="FROM:TO: ask only the questions of these loaded articles (by "
                   "position, e.g. 0:4 to choose settings on, 4:8 to report on)")
    b.add_argument("-o", "--option", action="append", help="KEY=VALUE: an mkgrag option for both systems")
    b.add_argument("--dump", default=None, help="write one JSON line per question and system here")
    b.add_argument("--verbose", action="store_true", help="print each question's outcome")
    d = sub.add_parser("abstain")
    d.add_argument("--answerable", required=True, help="an open --dump of questions asked with their articles")
    d.add_argument("--unanswerable", required=True, help="an open --dump of questions asked without them")
    d.add_argument("--thresholds", default="-2,-1,-0.75,-0.5,-0.25,0", help="ranker-score thresholds")
    c = sub.add_parser("heldout")
    c.add_argument("--checkpoints", required=True, help="comma-separated span-reader checkpoints")
    c.add_argument("--data", default=str(SQUAD / "train-sample-44.json.gz"), help="the training sample")
    c.add_argument("--holdout", type=int, default=4, help="held-out articles (as kgqa train reader --holdout)")
    c.add_argument("--seed", type=int, default=0, help="the split's seed (as kgqa train reader --seed)")
    c.add_argument("--backend", choices=("torch", "onnx"), default="torch", help="the readers' runtime "
                   "(KGQA_READER_BACKEND; onnx: fp32, exported once into .kgqa/onnx)")
    c.add_argument("--distractors", type=int, default=2, help="other paragraphs of the article read beside each")
    args = ap.parse_args()
    {"reading": bench_reading, "open": bench_open, "heldout": bench_heldout, "abstain": bench_abstain}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
