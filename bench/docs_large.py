"""A 5 MB Markdown document loaded with no chat model (``KGQA_CHAT_BACKEND=none``): seconds per
stage and in all, beside the figure issue 26 reported for the same shape before this change
(4.9 MB, 3,271 chunks: 584 s). Generated text (seeded), threads stated.

    KGQA_CHAT_BACKEND=none .venv/bin/python bench/docs_large.py [--mb 5] [--threads 1] [--keep]

Needs the Neo4j of ``KGQA_DATA_DIR`` running; the document (id ``bench-large``) is removed after.
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (KGQA_TORCH_THREADS)")
    ap.add_argument("--keep", action="store_true", help="keep the document in the graph")
    args = ap.parse_args()
    os.environ.setdefault("KGQA_CHAT_BACKEND", "none")
    os.environ["KGQA_TORCH_THREADS"] = str(args.threads)
    from kgqa.app.runtime import open_runtime
    from kgqa.core.config import Settings
    from kgqa.loaders.documents.loader import DocumentLoader
    from kgqa.loaders.documents.options import DocOptions
    from kgqa.loaders.documents.store import remove_document

    s = Settings()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "large"
        d.mkdir()
        f = d / "bench-large.md"
        generate(f, args.mb)
        mb = f.stat().st_size / 1024 / 1024
        with open_runtime(s) as rt:
            remove_document(rt.graph, "bench-large")
            loader = DocumentLoader(rt.graph, rt.models, s, DocOptions(max_bytes=int((args.mb + 1) * 1024 * 1024)))
            loader.count_tokens("warm")                 # the tokenizer loaded before the clock starts
            rt.models.encoder.encode(["warm"])
            t0, c0 = time.perf_counter(), time.process_time()
            rep = loader.load(d)
            total, cpu = time.perf_counter() - t0, time.process_time() - c0
            d0 = rep.as_dict()
            if not args.keep:
                remove_document(rt.graph, "bench-large")
    print(f"bench/docs_large · chat {s.chat_backend} · torch threads {s.torch_threads} · "
          f"cpu count {os.cpu_count()} · python {sys.version.split()[0]}")
    print(f"{'':28}{'MB':>6}{'chunks':>9}{'seconds':>10}{'chunks/s':>10}{'cpu s (this process)':>22}")
    print(f"{'before (' + BASELINE['source'][:19] + ')':28}{BASELINE['mb']:>6.1f}{BASELINE['chunks']:>9,}"
          f"{BASELINE['seconds']:>10.1f}{BASELINE['chunks'] / BASELINE['seconds']:>10.1f}")
    print(f"{'now (this run)':28}{mb:>6.1f}{d0['chunks']:>9,}{total:>10.1f}{d0['chunks'] / total:>10.1f}{cpu:>22.1f}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (a shared machine: "
          "wall seconds stretch with the load; cpu seconds do not count Neo4j's share)")
    print("stages (s): " + " · ".join(f"{k} {v}" for k, v in d0["stages"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
