"""How much Neo4j's store (its ``data/`` folder: stores, indexes, transaction logs) grows per byte of a
Wikidata5M input loaded over Bolt, and per entity vector: the factors behind the "about N MB needed" of a full
store (``kgqa.loaders.wikidata5m.load.STORE_BYTES_PER_INPUT_BYTE``, ``STORE_BYTES_PER_VECTOR_FLOAT``).

A server of its own whose ``data/`` is a tmpfs (root: ``mount -t tmpfs``), two synthetic inputs of ``--entities``
entities (two facts each): the first loaded without embeddings, the second (other ids) with them; the store's
bytes in use measured (``du``) before and after each, once the server's checkpoint has run (``kgqa neo4j stop``
flushes it)::

    .venv/bin/python -m bench.store_growth --entities 3000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KGQA = str(Path(sys.executable).with_name("kgqa"))


def _input(root: Path, n: int, first: int) -> Path:
    d = root / f"wd5m-{first}"
    d.mkdir()
    ids = range(first, first + n)
    (d / "wikidata5m_relation.txt").write_text("P1\tlinked to\nP2\tpart of\nP3\tnamed after\n", encoding="utf-8")
    (d / "wikidata5m_entity.txt").write_text("".join(f"Q{i}\tentity number {i}\tthing {i}\n" for i in ids),
                                             encoding="utf-8")
    (d / "wikidata5m_transductive_train.txt").write_text(
        "".join(f"Q{i}\tP{1 + i % 3}\tQ{first + (i * 7) % n}\n" for i in ids)
        + "".join(f"Q{i}\tP1\tQ{first + (i + 1) % n}\n" for i in ids), encoding="utf-8")
    for split in ("valid", "test"):
        (d / f"wikidata5m_transductive_{split}.txt").write_text("", encoding="utf-8")
    return d


def _used(store: Path) -> int:
    return int(subprocess.run(["du", "-sb", str(store)], capture_output=True, text=True, check=True).stdout.split()[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entities", type=int, default=3000)
    ap.add_argument("--bolt-port", type=int, default=39787)
    ap.add_argument("--http-port", type=int, default=39574)
    a = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kgqa-store-growth-"))
    store = root / "kgqa" / "neo4j" / "data"
    store.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1g", "tmpfs", str(store)], check=True)
    env = {**os.environ, "KGQA_DATA_DIR": str(root / "kgqa"), "KGQA_NEO4J_BOLT_PORT": str(a.bolt_port),
           "KGQA_NEO4J_HTTP_PORT": str(a.http_port), "NEO4J_URI": f"bolt://127.0.0.1:{a.bolt_port}",
           "KGQA_CHAT_BACKEND": "none"}

    def kgqa(*args: str) -> None:
        p = subprocess.run([KGQA, *args], env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(p.stderr[-2000:])

    try:
        kgqa("neo4j", "start")
        kgqa("neo4j", "init")
        rows = []
        for first, embed in ((1, False), (1_000_001, True)):
            folder = _input(root, a.entities, first)
            size = sum(f.stat().st_size for f in folder.iterdir())
            kgqa("neo4j", "stop")
            before = _used(store)
            kgqa("neo4j", "start")
            kgqa("load", "wikidata5m", "--path", str(folder), "--json", *(() if embed else ("--no-embeddings",)))
            kgqa("neo4j", "stop")
            after = _used(store)
            kgqa("neo4j", "start")
            rows.append((embed, size, after - before))
            print(f"{'with' if embed else 'without'} embeddings: input {size:,} B, store +{after - before:,} B "
                  f"({(after - before) / size:.1f} B per input byte)")
        (_, s0, g0), (_, s1, g1) = rows
        per_byte = g0 / s0
        per_vector = (g1 - per_byte * s1) / a.entities
        print(f"store bytes per input byte: {per_byte:.1f}; per entity vector: {per_vector:,.0f} B "
              f"({per_vector / 384:.1f} B per float of a 384-float vector)")
    finally:
        subprocess.run([KGQA, "neo4j", "stop"], env=env, capture_output=True)
        subprocess.run(["umount", str(store)], capture_output=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
