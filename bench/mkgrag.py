"""Benchmark mKG-RAG: ingestion speed, retrieval latency at scale, accuracy vs the chunks-only baseline.

    KGQA_TORCH_THREADS=1 python -m bench.mkgrag ingest [--limit N] [--llm-limit 2] [--replay-cache DIR]
                                                        [--extractor cpu|llm|both]
    KGQA_TORCH_THREADS=1 python -m bench.mkgrag retrieval [--docs 10000]
    KGQA_TORCH_THREADS=1 python -m bench.mkgrag accuracy --replay-cache DIR [--limit N] [--llm]
    KGQA_TORCH_THREADS=1 python -m bench.mkgrag scale [--docs 10000] [--readers rules,learned] [-o KEY=VALUE]
    KGQA_TORCH_THREADS=1 python -m bench.mkgrag latency [--limit N] [--cold 5]

* ``ingest``: ``kgqa load documents`` of the bundled documents (data/docs/corpus, copied to a scratch
  folder, their previous versions removed first), the CPU extractor (``KGQA_CHAT_BACKEND=none`` for its
  row whatever the environment says; every document, or the first ``--limit``) beside the LLM extractor
  (the configured chat backend, SmolLM2-135M when none is: the first ``--llm-limit`` documents; every
  model call live, or replayed from a scratch copy of ``--replay-cache``, where a missing prompt goes to
  the model): documents/min and chunks/min, seconds per stage. The startup (models, tokenizer and
  schema, paid once per process) is timed apart from the documents; "cold" is the rate with it.
* ``retrieval``: adds ``--docs`` synthetic document KGs (ids ``bench-…``: 2 chunks, 6 entities,
  5 relations each, random unit vectors, seeded) to the graph beside the bundled ones, then per
  bundled question times stage 1 (Eq. 2, the document vector index), stage 2 (Kg entities and
  relations over the Kd documents' KGs, computed in Cypher, plus the 1-hop expansion) and, for
  comparison, single-stage graph retrieval over ALL document entities (the docentity_embedding
  vector index, and an exact Cypher scan) — the cost the paper's first stage avoids. The synthetic
  documents are removed at the end (``--keep`` leaves them). Prints p50/p95 ms with threads and load.
* ``accuracy``: ``kgqa eval`` of data/docs/questions.jsonl, side by side in one run: mkgrag with the learned
  reader and with the rule reader, each beside its chunks-only ablation with the same reader (naive RAG), mkgrag with the LLM reader
  (``--llm``: the paper's generation, the configured chat backend, replayed through ``--replay-cache``)
  and VisPath on the demo KG: EM, SBERT@0.3, document recall@Kd, evidence recall, supporting-sentence
  recall, abstentions; over all questions and per fold (d01–d14: the CPU reader's rules were developed
  on them; d15–d28: held out).
* ``ingest`` prints the CPU extractor beside the LLM extractor (``--extractor both``, the default): wall-clock
  and this process's CPU time, so a figure taken on a shared machine can be read (the load average is printed).
* ``scale``: accuracy among distractors (bench/scale.py's for mKG-RAG). In one run, graph-only
  (``KGQA_CHAT_BACKEND=none``), mkgrag with the CPU reader (``--readers rules,learned``: each one) and its
  chunks-only ablation with the same reader answer the bundled questions on the bundled corpus alone, then again after ``--docs``
  distractor documents are added (ids ``bench-…``, removed at the end unless ``--keep``): EM, SBERT@0.3,
  document recall@Kd, evidence recall, supporting-sentence recall, abstentions (as ``accuracy``),
  context tokens, stage 1 / 2 ms p50, and the EM drop in points; then each question whose exact match
  the distractors change, with the rank of its supporting document and the documents recalled above it.
  A distractor (bench/mkgrag_distractors.py) is one distractor entity of bench/scale.py's buried KG and
  five of its generated facts written as sentences ("The manufacturer of Kamarsen Tower is Falcon
  Works."), embedded with the real all-MiniLM-L6-v2 as the loader embeds documents (cached under
  .kgqa/scale/cache); distractors name no bundled document's topic, so none holds a question's
  supporting section. Run it against a server of its own (it writes ~140,000 nodes with vectors).
* ``latency``: seconds per question of ``kgqa ask --method mkgrag`` (graph-only, ``KGQA_CHAT_BACKEND=none``)
  on the bundled questions (data/docs/questions.jsonl; the bundled documents must be loaded), the learned
  reader beside the rule reader: warm (one process, ``Pipeline.answer`` per question after one warm-up
  question: what ``kgqa serve`` and a batch ``kgqa eval`` pay) p50 / p95 / max, and cold (``kgqa ask`` as a new
  process each time, models loaded each time: what one command-line question pays) p50 over ``--cold``
  questions. Threads and load are printed.

Asserts nothing; prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from bench._common import method_options, percentile, read, write

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "data" / "docs"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _settings():
    from kgqa.core.config import Settings

    return Settings()


# --------------------------------------------------------------------------- ingest
def _corpus_files() -> list[Path]:
    """The bundled documents (Markdown and the HTML page), in name order."""
    return sorted(p for p in (DOCS / "corpus").iterdir() if p.is_file())


def bench_ingest(args) -> None:
    """Each row in a process of its own (``--row``), so that its startup is a cold one, as a user's is."""
    if args.row:
        print("ROW " + json.dumps(_ingest_row(args)))
        return
    rows = []
    # the LLM row first, on its sample: the CPU row's KGs (every document) are what stays loaded
    for kind in (("llm", "cpu") if args.extractor == "both" else (args.extractor,)):
        cmd = [sys.executable, __file__, "ingest", "--row", kind, "--llm-limit", str(args.llm_limit)]
        cmd += (["--limit", str(args.limit)] if args.limit else []) + (
            ["--replay-cache", args.replay_cache] if args.replay_cache else [])
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            raise SystemExit(f"ingest row {kind} failed (exit {proc.returncode}): "
                             f"{(proc.stderr.strip().splitlines() or ['no output'])[-1]}")
        for line in proc.stdout.splitlines():
            if line.startswith("ROW "):
                rows.append(json.loads(line[4:]))
            else:
                print(line)
    print(f"\n  {'extractor':<10} {'docs':>5} {'startup s':>10} {'docs s':>7} {'docs/min':>9} {'CPU s':>6} "
          f"{'docs/CPU-min':>13} {'cold docs/min':>14}  load after")
    for r in rows:
        print(f"  {r['kind']:<10} {r['n']:>5} {r['startup']:>10.1f} {r['wall']:>7.1f} {r['rate']:>9.2f} "
              f"{r['cpu']:>6.1f} {r['cpu_rate']:>13.2f} {r['cold']:>14.2f}  {r['load']}")


def _ingest_row(args) -> dict:
    t_start = time.perf_counter()
    base = _settings()
    if args.row == "cpu":
        s = base.model_copy(update={"doc_extractor": "cpu", "chat_backend": "none", "model_cache_dir": None})
        return _ingest_one(s, "cpu", _corpus_files()[: args.limit], None, t_start)
    cache = None
    if args.replay_cache:                          # a scratch copy: a prompt it lacks is cached there, not in it
        cache = Path(tempfile.mkdtemp(prefix="kgqa-replay-"))
        shutil.copytree(args.replay_cache, cache, dirs_exist_ok=True)
    s = base.model_copy(update={"doc_extractor": "llm", "model_cache_dir": cache,
                                "chat_backend": base.chat_backend if base.chat_backend != "none" else "local"})
    try:
        return _ingest_one(s, "llm", _corpus_files()[: args.llm_limit], cache, t_start)
    finally:
        if cache is not None:
            shutil.rmtree(cache, ignore_errors=True)


def _ingest_one(s, kind: str, files: list[Path], replayed, t_start: float) -> dict:
    """``kgqa load documents`` of ``files`` (copied to a scratch folder, their previous versions removed
    first): the startup (models and tokenizer loaded, the graph's schema) timed apart from the documents."""
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.loader import DocumentLoader
    from kgqa.loaders.documents.options import DocOptions
    from kgqa.loaders.documents.store import remove_document
    from kgqa.models import build_models

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "corpus"
        shutil.copytree(DOCS / "corpus" / "images", d / "images")
        for f in files:
            shutil.copyfile(f, d / f.name)
        with Graph(s) as g:
            t = time.perf_counter()
            for f in files:
                remove_document(g, f.stem)
            t_start += time.perf_counter() - t                   # the previous versions' removal is not startup
            loader = DocumentLoader(g, build_models(s, g), s, DocOptions())
            loader.count_tokens("warm-up")            # tokenizer and encoder loaded before the clock starts
            loader.models.encoder.encode(["warm-up"])
            loader.models.encoder.encode_passages(["warm-up"])
            g.apply_schema()
            startup = time.perf_counter() - t_start
            t0, c0 = time.perf_counter(), time.process_time()
            rep = loader.load(d).as_dict()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    n = len(files)
    print(f"ingest · extractor {kind} · {n} documents · torch threads {s.torch_threads} · load threads "
          f"{s.embed_threads} · load {_load()} · chat {rep['chat']} · visual {rep['visual']} · "
          f"replay cache {'yes (a scratch copy): replayed replies take no model time' if replayed else 'no (live)'}")
    print(f"  startup (imports, models, tokenizer, schema; once per process) {startup:.1f} s")
    print(f"  {rep['chunks']} chunks, {rep['entities']} entities, {rep['relations']} relations, {rep['regions']} "
          f"regions in {wall:.1f} s wall → {n / wall * 60:.2f} documents/min, {rep['chunks'] / wall * 60:.2f} "
          f"chunks/min; this process's CPU time {cpu:.1f} s → {n / max(cpu, 1e-9) * 60:.2f} documents per "
          "CPU-minute (Neo4j's own work not counted)")
    print("  stages (s): " + " · ".join(f"{k} {v}" for k, v in rep["stages"].items()))
    if rep["fallbacks"]:
        print(f"  fallbacks: {rep['fallbacks']}")
    return {"kind": kind, "n": n, "startup": startup, "wall": wall, "rate": n / wall * 60, "cpu": cpu,
            "cpu_rate": n / max(cpu, 1e-9) * 60, "cold": n / (startup + wall) * 60, "load": _load()}


# --------------------------------------------------------------------------- retrieval
def _synthetic(n: int, dim: int, seed: int) -> list[dict]:
    import numpy as np

    rng = np.random.default_rng(seed)

    def unit(k):
        v = rng.standard_normal((k, dim)).astype(np.float32)
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).tolist()

    docs = []
    for i in range(n):
        did = f"bench-{seed}-{i:06d}"
        vecs = unit(1 + 2 + 6 + 5)
        chunks = [{"id": f"{did}#c{k}", "order": k, "text": f"synthetic chunk {k} of {did}", "tokens": 60,
                   "embedding": vecs[1 + k]} for k in range(2)]
        ents = [{"id": f"{did}:e:{k}", "name": f"Entity {k} of {did}", "description": "synthetic",
                 "chunk_ids": [chunks[k % 2]["id"]], "embedding": vecs[3 + k]} for k in range(6)]
        rels = [{"id": f"{did}:r:{k}", "head_id": ents[k]["id"], "tail_id": ents[k + 1]["id"], "summary": "synthetic",
                 "chunk_ids": [chunks[k % 2]["id"]], "embedding": vecs[9 + k]} for k in range(5)]
        docs.append({"id": did, "title": f"Synthetic {i}", "embedding": vecs[0], "chunks": chunks, "entities": ents,
                     "relations": rels})
    return docs


def bench_retrieval(args) -> None:
    from kgqa.methods.mkgrag.algorithm import MKGRAG, MKGRAGOptions
    from kgqa.core.graph import Graph
    from kgqa.core.kg import KG
    from kgqa.models.encoder import get_encoder

    s = _settings()
    enc = get_encoder(s.encoder_model, device=s.device, threads=s.torch_threads)
    questions = [json.loads(x) for x in (DOCS / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x]
    with Graph(s) as g:
        t0 = time.perf_counter()
        written = 0
        for start in range(0, args.docs, args.batch):
            batch = _synthetic(min(args.batch, args.docs - start), 384, seed=start + 1)
            write(g, "bench_docs_synthetic", docs=batch)
            written += len(batch)
        g.await_indexes(timeout_s=1800)
        write_s = time.perf_counter() - t0
        total_docs = len(g.read("docs_list"))

        ctx = type("Ctx", (), {})()
        ctx.settings, ctx.graph, ctx.kg = s, g, KG(g, enc)
        ctx.models = type("M", (), {"chat": None, "vision": None, "encoder": enc})()
        m = MKGRAG(ctx, MKGRAGOptions())
        m.count_tokens = lambda text: len(text.split())     # the budget's tokenizer is not what is timed
        st1, st2, single_idx, single_scan = [], [], [], []
        for q in questions:
            qtext = q["question"]
            m.kg.embed([qtext])
            r = m.retrieve(qtext)                            # text only: the image step is not timed here
            st1.append(r.timings["stage1"] * 1000)
            st2.append(r.timings["stage2"] * 1000)
            vec = m.kg.embed([qtext])[0].tolist()
            t = time.perf_counter()
            read(g, "bench_docentity_index_search", vector=vec, k=10)
            single_idx.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            read(g, "bench_docentity_scan", vector=vec, k=10)
            single_scan.append((time.perf_counter() - t) * 1000)
        if not args.keep:
            while write(g, "bench_docs_synthetic_rm", limit=2000)[0]["removed"]:
                pass
    print(f"retrieval · {total_docs:,} documents in the graph ({written:,} synthetic written in {write_s:.0f} s) · "
          f"{len(questions)} questions · torch threads {s.torch_threads} · load {_load()}")
    print(f"  {'step':<58} {'p50 ms':>8} {'p95 ms':>8}")
    for name, v in (("stage 1: top Kd=10 documents (document vector index)", st1),
                    ("stage 2: Kg=10 over the Kd documents' KGs + 1-hop expansion", st2),
                    ("single stage: top 10 of ALL entities (docentity vector index)", single_idx),
                    ("single stage: top 10 of ALL entities (exact Cypher scan)", single_scan)):
        print(f"  {name:<58} {percentile(v, 50):8.1f} {percentile(v, 95):8.1f}")


# --------------------------------------------------------------------------- accuracy
#: the fold the CPU reader's rules were developed on; the other fold is reported apart (held out)
DEV_FOLD = {f"d{i:02d}" for i in range(1, 15)}


def _evaluate(s, enc, qs, method: str, opts: dict, replay_cache=None) -> tuple[dict, list[dict], list[float], list[float]]:
    """``kgqa eval``'s evaluation of ``method`` with ``opts`` on ``qs``: (report, answers' details in question
    order, stage 1 ms, stage 2 ms per question)."""
    from kgqa.app.eval.runner import evaluate
    from kgqa.app.pipeline import Pipeline

    pipe = Pipeline(s, method=method, options=opts, replay_cache=replay_cache, write_trace=False)
    st1, st2, details = [], [], {}
    if method == "mkgrag":
        retrieve = pipe.method.retrieve

        def timed(*a, **kw):
            r = retrieve(*a, **kw)
            st1.append(r.timings.get("stage1", 0) * 1000)
            st2.append(r.timings.get("stage2", 0) * 1000)
            return r

        pipe.method.retrieve = timed
        solve = pipe.method.solve

        def keep(query):
            a = solve(query)
            details[query.question] = a.details
            return a

        pipe.method.solve = keep
    try:
        rep = evaluate(qs, pipe, enc, questions_file=str(DOCS / "questions.jsonl"), method=method, options=opts)
    finally:
        pipe.close()
    return rep, [details.get(q.question, {}) for q in qs], st1, st2


def sentence_recall(q, details: dict) -> bool | None:
    """Supporting-sentence recall: the sentence the answer cites is in the supporting document's supporting
    section (chunk sections) and holds the gold answer or an alias (normalised). None without support."""
    from kgqa.app.eval.metrics import normalize_answer

    if q.support is None:
        return None
    sup = details.get("support") or {}
    sent = normalize_answer(sup.get("sentence") or "")
    if not sent or sup.get("doc_id") != q.support.document:
        return False
    sections = {c["id"]: c.get("sections") or [] for c in details.get("chunk_sections") or []}
    if q.support.section and sup.get("section") not in (q.support.section, None) \
            and q.support.section not in sections.get(sup.get("chunk_id"), []):
        return False
    golds = [normalize_answer(g) for g in [q.answer, *(q.aliases or [])]]
    return any(g and f" {g} " in f" {sent} " for g in golds)


def _row(qs, rep: dict, details: list[dict], ids: set[str] | None) -> dict:
    keep = [i for i, q in enumerate(qs) if ids is None or q.id in ids]
    per = {r["id"]: r for r in rep["questions"]}

    def pct(vals):
        vals = [v for v in vals if v is not None]
        return f"{100 * sum(vals) / len(vals):.0f}%" if vals else "-"

    return {
        "n": len(keep),
        "EM": pct([per[qs[i].id]["exact_match"] for i in keep]),
        "SBERT": pct([per[qs[i].id]["sbert"] for i in keep]),
        "doc R": pct([per[qs[i].id].get("doc_recall") for i in keep]),
        "evid. R": pct([per[qs[i].id].get("evidence_recall") for i in keep]),
        "sent. R": pct([sentence_recall(qs[i], details[i]) if details[i] else None for i in keep]),
        "abst.": str(sum(1 for i in keep if per[qs[i].id]["abstained"])),
    }


def bench_accuracy(args) -> None:
    from kgqa.app.eval.questions import load_questions
    from kgqa.models.encoder import get_encoder

    s = _settings()
    qs, _ = load_questions(DOCS / "questions.jsonl")
    if args.limit:
        qs = qs[: args.limit]
    enc = get_encoder(s.encoder_model, device=s.device, threads=s.torch_threads)
    extra = method_options(args.option or [])
    # each row's own reader and chunks_only win over -o (a row named "rule reader" reads with the rules)
    systems = [("mkgrag + learned reader", "mkgrag", {**extra, "reader": "learned", "chunks_only": False}),
               ("chunks-only + learned reader (naive RAG)", "mkgrag", {**extra, "reader": "learned", "chunks_only": True}),
               ("mkgrag + rule reader", "mkgrag", {**extra, "reader": "rules", "chunks_only": False}),
               ("chunks-only + rule reader (naive RAG)", "mkgrag", {**extra, "reader": "rules", "chunks_only": True})]
    if args.llm:
        systems.append((f"mkgrag + LLM reader ({s.chat_backend})", "mkgrag", {**extra, "reader": "llm", "chunks_only": False}))
    if not args.no_vispath:
        systems.append(("VisPath (demo KG)", "vispath", {}))
    runs = [(label, *_evaluate(s, enc, qs, method, opts, args.replay_cache)[:2]) for label, method, opts in systems]
    print(f"accuracy · {len(qs)} questions (data/docs/questions.jsonl) · torch threads {s.torch_threads} · "
          f"load {_load()} · replay cache {args.replay_cache or 'none (live)'} · chat {s.chat_backend}"
          + (f" · mkgrag options {extra}" if extra else ""))
    print("  EM = exact match (aliases), SBERT@0.3, doc R = document recall@Kd, evid. R = a chunk of the "
          "supporting section in context, sent. R = the cited sentence is in the supporting section and holds the "
          "answer; dev = d01–d14 (the CPU reader's rules were developed on these), held-out = d15–d28")
    cols = ("n", "EM", "SBERT", "doc R", "evid. R", "sent. R", "abst.")
    print(f"  {'system':<40} {'fold':<9} " + " ".join(f"{c:>7}" for c in cols))
    for label, rep, details in runs:
        for fold, ids in (("all", None), ("dev", DEV_FOLD), ("held-out", {q.id for q in qs} - DEV_FOLD)):
            r = _row(qs, rep, details, ids)
            print(f"  {label if fold == 'all' else '':<40} {fold:<9} " + " ".join(f"{r[c]:>7}" for c in cols))


def scale_systems(readers: list[str]) -> list[tuple[str, dict]]:
    """The systems of ``scale``: per CPU reader (``rules``, the default CPU reader, and/or ``learned``, the span
    reader), mkgrag and its chunks-only ablation with that reader."""
    return [x for r in readers for x in ((f"mkgrag + {r} reader", {"reader": r}),
                                         (f"chunks-only + {r} reader", {"reader": r, "chunks_only": True}))]


def _scale_run(s, enc, qs, systems: list[tuple[str, dict]]) -> list[dict]:
    """Each system evaluated on the graph as it is: its report, answers' details, the accuracy row (``_row``),
    EM in %, mean context tokens, stage 1 / 2 ms p50."""
    out = []
    for label, opts in systems:
        rep, details, st1, st2 = _evaluate(s, enc, qs, "mkgrag", opts)
        em = rep["overall"]["exact_match"]
        out.append({"label": label, "rep": rep, "details": details, "row": _row(qs, rep, details, None),
                    "em": 100 * em["correct"] / max(em["n"], 1),
                    "tokens": rep["overall"]["context_tokens"]["mean"], "p1": percentile(st1, 50), "p2": percentile(st2, 50)})
    return out


def _flips(qs, small: dict, big: dict) -> list[str]:
    """One line per question whose exact match differs between the two runs of a system: the answers, the
    supporting document's rank among the recalled documents, and the documents recalled above it."""
    before = {r["id"]: r for r in small["rep"]["questions"]}
    after = {r["id"]: r for r in big["rep"]["questions"]}
    lines = []
    for q, d in zip(qs, big["details"]):
        a, b = before[q.id], after[q.id]
        if bool(a["exact_match"]) == bool(b["exact_match"]):
            continue
        docs = d.get("documents") or []
        gold = q.support.document if q.support else None
        rank = next((i for i, x in enumerate(docs, 1) if x["id"] == gold), None)
        above = [f"{x['id']} {x['title']!r} ({x['cos']:.2f})" for x in docs[:(rank or len(docs)) - 1][:3]] \
            if rank != 1 else []
        lines.append(f"    {q.id} {'lost' if a['exact_match'] else 'gained'}: {a['prediction']!r} -> "
                     f"{b['prediction']!r} (gold {q.answer!r}); {gold} "
                     f"{f'recalled at rank {rank}' if rank else 'not recalled'} of {len(docs)}"
                     + (f"; above it: {', '.join(above)}" if above else ""))
    return lines


def bench_scale(args) -> None:
    from kgqa.app.eval.questions import load_questions
    from kgqa.core.graph import Graph
    from kgqa.models.encoder import get_encoder

    os.environ["KGQA_CHAT_BACKEND"] = "none"                 # graph-only: the CPU reader, no model served
    s = _settings()
    enc = get_encoder(s.encoder_model, device=s.device, threads=s.torch_threads)
    qs, _ = load_questions(DOCS / "questions.jsonl")
    extra = method_options(args.option or [])                 # -o: every row, under its own reader and ablation
    systems = [(label, {**extra, **opts}) for label, opts in scale_systems(args.readers.split(","))]
    if extra:
        print(f"mkgrag options for every row: {extra}")

    with Graph(s) as g:
        while write(g, "bench_docs_synthetic_rm", limit=2000)[0]["removed"]:
            pass
        bundled = len(g.read("docs_list"))
        if not bundled:
            raise SystemExit("no documents loaded: kgqa load documents data/docs/corpus --replay-cache data/docs/replay")
        small = _scale_run(s, enc, qs, systems)
        load_small = _load()
        from bench.mkgrag_distractors import distractor_docs

        docs = distractor_docs(args.docs, args.seed, enc, REPO / ".kgqa" / "scale" / "cache")
        t0 = time.perf_counter()
        for i in range(0, len(docs), args.batch):
            write(g, "bench_docs_synthetic", docs=docs[i:i + args.batch])
        g.await_indexes(timeout_s=1800)
        write_s = time.perf_counter() - t0
        try:
            big = _scale_run(s, enc, qs, systems)
        finally:
            if not args.keep:
                while write(g, "bench_docs_synthetic_rm", limit=2000)[0]["removed"]:
                    pass
    print(f"scale · {len(qs)} questions (data/docs/questions.jsonl), graph-only (KGQA_CHAT_BACKEND=none, CPU "
          f"reader) · {bundled} bundled documents, then + {len(docs):,} distractor documents (written in "
          f"{write_s:.0f} s) · torch threads {s.torch_threads} · load {load_small} (bundled), {_load()} (end)")
    print("  EM = exact match (aliases), SBERT@0.3, doc R = document recall@Kd, evid. R = a chunk of the "
          "supporting section in context, sent. R = the cited sentence is in the supporting section and holds the "
          "answer; EM drop = points below the same system on the bundled documents alone")
    cols = ("n", "EM", "SBERT", "doc R", "evid. R", "sent. R", "abst.")
    print(f"  {'corpus':<22} {'system':<26} " + " ".join(f"{c:>7}" for c in cols)
          + f" {'ctx tok':>8} {'stage 1 ms':>11} {'stage 2 ms':>11} {'EM drop':>8}")
    for corpus, rows in (("bundled", small), (f"+ {len(docs):,} distractors", big)):
        for k, r in enumerate(rows):
            drop = f"{small[k]['em'] - r['em']:.1f}" if rows is big else "-"
            tok = f"{r['tokens']:.0f}" if r["tokens"] is not None else "-"
            print(f"  {corpus:<22} {r['label']:<26} " + " ".join(f"{r['row'][c]:>7}" for c in cols)
                  + f" {tok:>8} {r['p1']:11.1f} {r['p2']:11.1f} {drop:>8}")
    for a, b in zip(small, big):
        lines = _flips(qs, a, b)
        print(f"  {a['label']}: {len(lines)} questions change exact match with the distractors"
              + (":" if lines else ""))
        for line in lines:
            print(line)


def bench_latency(args) -> None:
    from kgqa.app.eval.questions import load_questions
    from kgqa.app.pipeline import Pipeline

    os.environ["KGQA_CHAT_BACKEND"] = "none"
    s = _settings()
    qs, _ = load_questions(DOCS / "questions.jsonl")
    if args.limit:
        qs = qs[: args.limit]
    print(f"kgqa ask --method mkgrag latency · {len(qs)} questions (data/docs/questions.jsonl) · graph-only "
          f"(KGQA_CHAT_BACKEND=none) · torch threads {s.torch_threads} · {os.cpu_count()} cores · load {_load()}")
    print(f"  {'reader':<16} {'warm p50 s':>10} {'p95 s':>7} {'max s':>7} {'first s':>8} {'cold p50 s':>11} "
          f"{'cold n':>6}")
    kgqa = str(Path(sys.executable).with_name("kgqa"))
    for reader in ("learned", "rules"):
        t = time.perf_counter()
        pipe = Pipeline(s, method="mkgrag", options={"reader": reader}, write_trace=False)
        try:
            pipe.answer(qs[0].question)                     # models loaded, caches warm
            first = time.perf_counter() - t
            warm = []
            for q in qs:
                t = time.perf_counter()
                a = pipe.answer(q.question)
                warm.append(time.perf_counter() - t)
                if reader == "learned" and a.details.get("cpu_reader") != "learned":
                    raise SystemExit(f"the learned reader did not answer ({a.details.get('cpu_reader')}): "
                                     "is its checkpoint there?")
        finally:
            pipe.close()
        cold = []
        for q in qs[: args.cold]:
            t = time.perf_counter()
            p = subprocess.run([kgqa, "ask", q.question, "--method", "mkgrag", "-o", f"reader={reader}"],
                               capture_output=True, text=True)
            cold.append(time.perf_counter() - t)
            if p.returncode != 0:
                raise SystemExit(f"kgqa ask failed: {p.stderr.strip().splitlines()[-1:]}")
        print(f"  {reader:<16} {percentile(warm, 50):10.2f} {percentile(warm, 95):7.2f} {max(warm):7.2f} {first:8.1f} "
              f"{percentile(cold, 50) if cold else float('nan'):11.2f} {len(cold):6d}")
    print("  warm: one process, per question after a warm-up one; first: process's pipeline + models + first "
          "question; cold: `kgqa ask` as a new process per question (its trace written, as a user's is)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("ingest")
    a.add_argument("--limit", type=int, default=None, help="the CPU row's documents (default: all)")
    a.add_argument("--llm-limit", type=int, default=2, help="the LLM row's documents (the first N)")
    a.add_argument("--replay-cache", default=None, help="the LLM row's model replies (copied first)")
    a.add_argument("--extractor", choices=("cpu", "llm", "both"), default="both")
    a.add_argument("--row", choices=("cpu", "llm"), default=None, help=argparse.SUPPRESS)
    b = sub.add_parser("retrieval")
    b.add_argument("--docs", type=int, default=10_000)
    b.add_argument("--batch", type=int, default=250)
    b.add_argument("--keep", action="store_true")
    c = sub.add_parser("accuracy")
    c.add_argument("--replay-cache", default=None)
    c.add_argument("--limit", type=int, default=None)
    c.add_argument("--llm", action="store_true", help="also mkgrag with the LLM reader (the paper's generation)")
    c.add_argument("--no-vispath", action="store_true", help="leave out VisPath's row (the demo KG)")
    c.add_argument("-o", "--option", action="append", help="KEY=VALUE: an mkgrag option for every mkgrag row")
    d = sub.add_parser("scale")
    d.add_argument("--docs", type=int, default=10_000)
    d.add_argument("--batch", type=int, default=250)
    d.add_argument("--seed", type=int, default=15, help="the distractor generator's seed (bench/scale.py's)")
    d.add_argument("--keep", action="store_true")
    d.add_argument("-o", "--option", action="append", help="KEY=VALUE: an mkgrag option for every row")
    d.add_argument("--readers", default="rules", help="CPU readers, comma-separated: rules (the default CPU "
                   "reader) and/or learned (the span reader)")
    e = sub.add_parser("latency")
    e.add_argument("--limit", type=int, default=None, help="the first N bundled questions (default: all 28)")
    e.add_argument("--cold", type=int, default=5, help="questions asked as a new `kgqa ask` process each")
    args = ap.parse_args()
    {"ingest": bench_ingest, "retrieval": bench_retrieval, "accuracy": bench_accuracy,
     "scale": bench_scale, "latency": bench_latency}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
