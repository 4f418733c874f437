"""Distractor documents for bench/mkgrag.py scale: document KGs made of text, embedded for real.

Each is one distractor entity of bench/scale.py's buried KG (bench/scale_distractors.py, the same
generator and seed: names built from the demo's own words, "Collins Apollo", "Falcon Heights") with five
of its generated facts written as sentences ("The manufacturer of Kamarsen Tower is Falcon Works."):
2 chunks, 6 entities (the subject and the five tails), 5 relations, as the rows of the
``bench_docs_synthetic`` query (ids ``bench-scale-…``). Texts are embedded as the loader embeds a
document's (document: title + text; chunk: its text; entity: "name: description"; relation: "head tail:
summary").
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent

from bench.scale_distractors import generate


def distractor_docs(n: int, seed: int, encoder, cache_dir: Path) -> list[dict]:
    """``n`` distractor document KGs made of text (see the module doc), embedded with ``encoder``; the vectors
    are cached in ``cache_dir`` under a hash of the texts."""
    g = generate(REPO / "data" / "demo", n_entities=200_000, n_facts=730_000, max_out=3000, seed=seed)  # bench/scale.py's
    name = dict(zip(g["ids"], g["names"]))
    rel_name = g["relations"]
    by_head: dict[str, list[tuple[str, str]]] = {}
    for h, r, t in g["facts"]:
        if h in name and t in name:
            by_head.setdefault(h, []).append((r, t))
    heads = [h for h in g["ids"] if len(by_head.get(h, ())) >= 5][:n]
    if len(heads) < n:
        raise SystemExit(f"only {len(heads)} distractor entities have 5 facts; ask for fewer --docs")
    docs, texts = [], []
    for i, h in enumerate(heads):
        did = f"bench-scale-{i:06d}"
        facts = by_head[h][:5]
        sent = [f"The {rel_name.get(r, r)} of {name[h]} is {name[t]}." for r, t in facts]
        chunks = [{"id": f"{did}#c0", "order": 0, "text": f"{name[h]}. " + " ".join(sent[:3]), "tokens": 40},
                  {"id": f"{did}#c1", "order": 1, "text": " ".join(sent[3:]), "tokens": 30}]
        ents = [{"id": f"{did}:e:0", "name": name[h], "description": f"the subject of {name[h]}",
                 "chunk_ids": [chunks[0]["id"]]}]
        ents += [{"id": f"{did}:e:{k + 1}", "name": name[t], "description": f"{rel_name.get(r, r)} of {name[h]}",
                  "chunk_ids": [chunks[0 if k < 3 else 1]["id"]]} for k, (r, t) in enumerate(facts)]
        rels = [{"id": f"{did}:r:{k}", "head_id": ents[0]["id"], "tail_id": ents[k + 1]["id"],
                 "summary": sent[k], "chunk_ids": [chunks[0 if k < 3 else 1]["id"]]} for k in range(5)]
        doc = {"id": did, "title": name[h], "chunks": chunks, "entities": ents, "relations": rels}
        texts += ([f"{doc['title']}. " + " ".join(c["text"] for c in chunks)] + [c["text"] for c in chunks]
                  + [f"{e['name']}: {e['description']}" for e in ents]
                  + [f"{name[h]} {ents[k + 1]['name']}: {x['summary']}" for k, x in enumerate(rels)])
        docs.append(doc)
    key = hashlib.sha256("\n".join(texts).encode()).hexdigest()[:16]
    cache = cache_dir / f"mkgrag_distractors_{key}.npy"
    if cache.exists():
        vecs = np.load(cache)
    else:
        t0 = time.perf_counter()
        vecs = np.asarray(encoder.encode(texts, batch_size=256), dtype=np.float32)
        print(f"  embedded {len(texts):,} distractor texts in {time.perf_counter() - t0:.0f} s", flush=True)
        cache_dir.mkdir(parents=True, exist_ok=True)
        np.save(cache, vecs)
    k = 0
    for doc in docs:
        doc["embedding"] = vecs[k].tolist()
        k += 1
        for part in ("chunks", "entities", "relations"):
            for x in doc[part]:
                x["embedding"] = vecs[k].tolist()
                k += 1
    return docs
