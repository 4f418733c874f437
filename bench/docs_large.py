"""A 5 MB Markdown document loaded with no chat model (``KGQA_CHAT_BACKEND=none``): seconds per
stage and in all, beside two baselines: the figure issue 26 reported before any change (4.9 MB,
3,271 chunks: 584 s) and, in this same run, a smaller document (``--baseline-mb``, 0.5 MB) loaded
with the chunks embedded in fp32 as before (``KGQA_ENCODER_PASSAGES=fp32``; 0 skips it). Generated
text (seeded); torch threads (queries) and load threads (the embedding workers) stated.

    KGQA_CHAT_BACKEND=none .venv/bin/python -m bench.docs_large [--mb 5] [--threads 1] [--load-threads 2]

Needs the Neo4j of ``KGQA_DATA_DIR`` running; the documents (ids ``bench-large``, ``bench-base``) are
removed after.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

BASELINE = {"mb": 4.9, "chunks": 3271, "seconds": 584.0, "source": "issue 26, item 4 (before this change)"}
WORDS = ("the river city bridge tower station museum engine rocket flag island mountain forest king queen "
         "treaty harbour railway painter composer novel theorem planet orbit satellite empire republic "
         "festival cathedral library garden market canal valley glacier desert volcano").split()


def generate(path: Path, mb: float, seed: int = 0) -> None:
    """Markdown of ``mb`` MB: a title, a heading every ~30 paragraphs, sentences of 8-20 words."""
    rng = random.Random(seed)
    target = int(mb * 1024 * 1024)
    out, size, sec = ["# Bench Large\n\n"], 0, 0
    while size < target:
        if sec % 30 == 0:
            out.append(f"## Section {sec // 30}\n\n")
        sents = []
        for _ in range(rng.randint(3, 7)):
            w = [rng.choice(WORDS) for _ in range(rng.randint(8, 20))]
            sents.append(" ".join(w).capitalize() + ".")
        para = " ".join(sents) + "\n\n"
        out.append(para)
        size += len(para)
        sec += 1
    path.write_text("".join(out), encoding="utf-8")


def _load(mb: float, doc_id: str, passages: str, max_mb: float) -> tuple[dict, float, float, float, str]:
    """Load a generated ``mb`` MB document; (report, wall s, cpu s, its MB, the encoder's passages mode)."""
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings
    from kgqa.loaders.documents.loader import DocumentLoader
    from kgqa.loaders.documents.options import DocOptions
    from kgqa.loaders.documents.store import remove_document

    s = Settings(encoder_passages=passages)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "large"
        d.mkdir()
        f = d / f"{doc_id}.md"
        generate(f, mb)
        size = f.stat().st_size / 1024 / 1024
        with open_runtime(s) as rt:
            remove_document(rt.graph, doc_id)
            loader = DocumentLoader(rt.graph, rt.models, s, DocOptions(max_bytes=int((max_mb + 1) * 1024 * 1024)))
            loader.count_tokens("warm")                 # the tokenizer and encoders loaded before the clock starts
            rt.models.encoder.encode(["warm"])
            rt.models.encoder.encode_passages(["warm"])
            mode = "bf16" if getattr(rt.models.encoder, "passages_bf16", False) else "fp32"
            t0, c0 = time.perf_counter(), time.process_time()
            rep = loader.load(d)
            total, cpu = time.perf_counter() - t0, time.process_time() - c0
            remove_document(rt.graph, doc_id)
    return rep.as_dict(), total, cpu, size, mode


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--baseline-mb", type=float, default=0.5, help="the fp32 baseline's size (0: none)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (KGQA_TORCH_THREADS)")
    ap.add_argument("--load-threads", type=int, default=0,
                    help="embedding workers of the load (KGQA_LOAD_THREADS; 0: every core)")
    args = ap.parse_args()
    os.environ.setdefault("KGQA_CHAT_BACKEND", "none")
    os.environ["KGQA_TORCH_THREADS"] = str(args.threads)
    os.environ["KGQA_LOAD_THREADS"] = str(args.load_threads)
    from kgqa.core.config import Settings

    s = Settings()
    runs = []
    if args.baseline_mb > 0:
        runs.append((f"fp32 chunks ({args.baseline_mb:g} MB)", *_load(args.baseline_mb, "bench-base", "fp32", args.mb)))
    runs.append(("now (this run)", *_load(args.mb, "bench-large", "auto", args.mb)))
    print(f"bench/docs_large · chat {s.chat_backend} · torch threads {s.torch_threads} · load threads "
          f"{s.embed_threads} · cpu count {os.cpu_count()} · python {sys.version.split()[0]}")
    print(f"{'':28}{'MB':>6}{'chunks':>9}{'seconds':>10}{'chunks/s':>10}{'cpu s (this process)':>22}  chunks in")
    print(f"{'before (' + BASELINE['source'][:19] + ')':28}{BASELINE['mb']:>6.1f}{BASELINE['chunks']:>9,}"
          f"{BASELINE['seconds']:>10.1f}{BASELINE['chunks'] / BASELINE['seconds']:>10.1f}")
    for name, d0, total, cpu, mb, mode in runs:
        print(f"{name:28}{mb:>6.1f}{d0['chunks']:>9,}{total:>10.1f}{d0['chunks'] / total:>10.1f}{cpu:>22.1f}  {mode}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (a shared machine: "
          "wall seconds stretch with the load; cpu seconds do not count Neo4j's share)")
    for name, d0, *_ in runs:
        print(f"stages (s), {name}: " + " · ".join(f"{k} {v}" for k, v in d0["stages"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
