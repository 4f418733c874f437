"""Benchmark: the name embedders side by side, on speed and on what the name vectors are for (issue 61).

    OMP_NUM_THREADS=1 python -m bench.embedders [--twin-names 100000] [--speed-names 20000] [--threads 2]

Embedders (one row each, the same names): all-MiniLM-L6-v2 on ONNX fp32 (today's default), ONNX int8, and
static vectors distilled from that same MiniLM by model2vec (kgqa.models.static_encoder) at 384 dimensions
(what the graph's vector index holds) and at 256 and 128 (PCA, as model2vec offers). The distilled models are
taken from ``<models dir>/model2vec/`` and distilled there first when missing (``kgqa encoder distil``).

Figures:

* **names/s**: every embedder encodes ``--speed-names`` twin names (bench/twin.py's generator), best of
  ``--rounds``, ``--threads`` threads for ONNX (model2vec's lookup is single-threaded numpy + the Rust
  tokenizer); the load average is printed beside them.
* **start-entity accuracy** and **candidate recall@K**, on the question sets the app is asked:
  the held-out-template sets (``/work/data/heldout-moredev.jsonl`` over more-dev's KG, ``heldout-demo.jsonl``
  over the demo KG) and more-dev's image questions. The mention is what the app links in the graph-only
  setting: a text question's topic mention (``topic_mention_heuristic``, the fallback without an LLM); for an
  image, the name the reference-image grounder returns (the pictured entity's label). Linking as
  ``KG.link_entities`` does it: label matches first (``label_key`` on names and aliases, names first), then
  the nearest names by cosine (an exact scan here: what the index approximates), K = 10 as VisPath's
  default. Each KG alone, and buried among ``--twin-names`` names: half twin names, half recombined from the KGs'
  own words (what a big graph holds near a mention).
  "vector only" drops the label step: what the embedder alone does.
* **recall@10 of Neo4j's vector index** is measured with ``bench/vector.py --real`` on each 384-d
  embedder's vectors of the same names (``--save-npy`` writes them); 256 and 128 dimensions need another
  index than the schema's.

Prints tables; asserts nothing. Threads and the load average are in the output.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SETS = (  # (name, questions, the KG folder they are asked over)
    ("held-out more-dev", Path("/work/data/heldout-moredev.jsonl"), Path("/work/shared/datasets/more-dev/kg")),
    ("held-out demo", Path("/work/data/heldout-demo.jsonl"), ROOT / "data" / "demo"),
    ("more-dev images", Path("/work/shared/datasets/more-dev/questions.jsonl"),
     Path("/work/shared/datasets/more-dev/kg")),
)
EMBEDDERS = ("onnx", "onnx-int8", "model2vec-384", "model2vec-256", "model2vec-128")
K = 10


def kg_entities(folder: Path) -> list[tuple[str, str, list[str]]]:
    out = []
    for line in (folder / "wikidata5m_entity.txt").read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) > 1 and cols[1].strip():
            out.append((cols[0], cols[1].strip(), [a.strip() for a in cols[2:] if a.strip()]))
    return out


def twin_names(n: int, seed: int = 61) -> list[str]:
    from bench.twin import Names

    names = Names(seed)
    return [names.label() for _ in range(n)]


def confusers(n: int, sets: list, seed: int = 61) -> list[str]:
    """Half twin names, half names recombined from the KGs' own words ("Pernod Tower", "Battersea Ricard"):
    what a big graph holds near a question's mention. None equals a KG name."""
    from kgqa.core.kg import label_key

    rng = np.random.default_rng(seed)
    taken = {label_key(e[1]) for _, _, ents in sets for e in ents}
    words = sorted({w for _, _, ents in sets for e in ents for w in e[1].split() if len(w) > 1})
    out = twin_names(n - n // 2, seed)
    while len(out) < n:
        name = " ".join(words[i] for i in rng.integers(0, len(words), int(rng.integers(1, 4))))
        if label_key(name) not in taken:
            out.append(name)
    return out


def mention(q: dict) -> tuple[str, str]:
    """(what the app links, "text" | "image") for a question."""
    from kgqa.core.question import topic_mention_heuristic

    if q.get("image") or not _names_its_topic(q):
        return q["topic"]["label"], "image"       # the reference-image grounder returns the entity's label
    return topic_mention_heuristic(q["question"]), "text"


def _names_its_topic(q: dict) -> bool:
    words = {w.lower() for w in q["topic"]["label"].split() if len(w) > 2}
    return any(w in q["question"].lower() for w in words)


class Embedder:
    def __init__(self, kind: str, models_dir: Path, threads: int):
        from kgqa.models.encoder import default_model_path, get_encoder

        self.kind, self.threads = kind, threads
        if kind.startswith("model2vec"):
            from kgqa.models.static_encoder import StaticEncoder, distil

            t = time.perf_counter()
            self.enc = StaticEncoder(distil(default_model_path(), models_dir, int(kind.split("-")[1])))
            self.prep_s = time.perf_counter() - t
        else:
            t = time.perf_counter()
            self.enc = get_encoder(backend=kind, threads=threads, cache_dir=models_dir / "onnx")
            self.enc.encode(["warm-up"], threads=threads)
            self.prep_s = time.perf_counter() - t

    def encode(self, texts: list[str]) -> np.ndarray:
        if self.kind.startswith("model2vec"):
            return self.enc.encode(texts)
        return self.enc.encode(texts, batch_size=64, threads=self.threads)


def link(query: str, qvec: np.ndarray, keys: dict, ids: list[str], mat: np.ndarray, labels: bool) -> list[str]:
    """KG.link_entities' order: label matches (names before aliases), then the nearest names."""
    from kgqa.core.kg import label_key

    out = list(keys.get(label_key(query), [])) if labels else []
    seen = set(out)
    scores = mat @ qvec
    top = np.argpartition(-scores, min(K + len(out), len(ids) - 1))[: K + len(out)]
    for j in top[np.argsort(-scores[top])]:
        if ids[j] not in seen:
            seen.add(ids[j])
            out.append(ids[j])
    return out[:K]


def accuracy(emb: Embedder, sets: list, extra: list[str], extra_vecs: np.ndarray | None) -> dict:
    from kgqa.core.kg import label_key

    res = {}
    for name, questions, ents in sets:
        ids = [e[0] for e in ents]
        names = [e[1] for e in ents]
        keys: dict[str, list[str]] = {}
        for eid, label, aliases in ents:       # names before aliases, as the index lookup sorts them
            keys.setdefault(label_key(label), []).insert(0, eid)
        for eid, label, aliases in ents:
            for a in aliases:
                keys.setdefault(label_key(a), []).append(eid)
        mat = emb.encode(names)
        if extra_vecs is not None:
            ids = ids + [f"T{i}" for i in range(len(extra))]
            mat = np.vstack([mat, extra_vecs])
        ms = [mention(q) for q in questions]
        qv = emb.encode([m for m, _ in ms])
        for labels in (True, False):
            hit1 = hitk = 0
            for q, v in zip(questions, qv):
                got = link(mention(q)[0], v, keys, ids, mat, labels)
                hit1 += bool(got) and got[0] == q["topic"]["id"]
                hitk += q["topic"]["id"] in got
            res[(name, labels)] = (100 * hit1 / len(questions), 100 * hitk / len(questions), len(questions))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--twin-names", type=int, default=100_000, help="names the KGs are buried among (half twin "
                    "names, half recombined from the KGs' words)")
    ap.add_argument("--speed-names", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2, help="ONNX threads for names/s (queries use 1)")
    ap.add_argument("--embedders", default=",".join(EMBEDDERS))
    ap.add_argument("--models-dir", type=Path, default=None, help="default: the kgqa data dir's models/")
    ap.add_argument("--save-npy", type=Path, default=None,
                    help="write each 384-d embedder's vectors of the twin names (for bench/vector.py --real)")
    args = ap.parse_args()

    from kgqa.core.config import Settings

    models_dir = args.models_dir or Path(Settings().models_dir)
    sets = []
    for name, qpath, kg in SETS:
        if qpath.exists() and (kg / "wikidata5m_entity.txt").exists():
            sets.append((name, [json.loads(x) for x in qpath.read_text().splitlines() if x.strip()], kg_entities(kg)))
    buried = confusers(args.twin_names, sets)
    speed = twin_names(args.speed_names, seed=62)
    print(f"{len(speed):,} names for speed (mean {np.mean([len(s) for s in speed]):.1f} chars); sets: "
          + ", ".join(f"{n} ({len(q)} questions, {len(e)} entities)" for n, q, e in sets)
          + f"; buried among {len(buried):,} names (half twin, half recombined KG words); {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}; ONNX threads {args.threads} for speed, 1 otherwise", flush=True)
    rows = []
    for kind in args.embedders.split(","):
        emb = Embedder(kind, models_dir, args.threads)
        rates = []
        for _ in range(args.rounds):
            t = time.perf_counter()
            emb.encode(speed)
            rates.append(len(speed) / (time.perf_counter() - t))
        load = os.getloadavg()[0]
        emb.threads = 1
        t = time.perf_counter()
        bv = emb.encode(buried)
        buried_s = time.perf_counter() - t
        if args.save_npy and bv.shape[1] == 384:
            args.save_npy.mkdir(parents=True, exist_ok=True)
            np.save(args.save_npy / f"{kind}.npy", bv.astype(np.float32))
        own = accuracy(emb, sets, [], None)
        deep = accuracy(emb, sets, buried, bv)
        rows.append((kind, max(rates), load, emb.prep_s, buried_s, bv.shape[1], own, deep))
        print(f"{kind}: {max(rates):,.0f} names/s (load {load:.1f}); " + "; ".join(
            f"{n} {'label+vec' if lab else 'vec'}: {own[(n, lab)][0]:.1f}/{own[(n, lab)][1]:.1f} own, "
            f"{deep[(n, lab)][0]:.1f}/{deep[(n, lab)][1]:.1f} buried" for n, _, _ in sets for lab in (True, False)),
            flush=True)

    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"Name embedders · speed on {len(speed):,} twin names ({args.threads} ONNX threads) · start "
                    f"entity @1 / candidates @{K} (%) · each KG alone, then among {len(buried):,} names")
    for c in ("embedder", "dims", "names/s", "load", "prepare s"):
        t.add_column(c, justify="left" if c == "embedder" else "right")
    for n, _, _ in sets:
        t.add_column(f"{n}: label+vec own · buried", justify="right")
        t.add_column(f"{n}: vec only buried", justify="right")
    for kind, rate, load, prep, _, dims, own, deep in rows:
        cells = []
        for n, _, _ in sets:
            cells.append(f"{own[(n, True)][0]:.1f}/{own[(n, True)][1]:.1f} · {deep[(n, True)][0]:.1f}/"
                         f"{deep[(n, True)][1]:.1f}")
            cells.append(f"{deep[(n, False)][0]:.1f}/{deep[(n, False)][1]:.1f}")
        t.add_row(kind, str(dims), f"{rate:,.0f}", f"{load:.1f}", f"{prep:.1f}", *cells)
    Console(width=220).print(t)


if __name__ == "__main__":
    main()
