"""A seeded twin of Wikidata5M in the release's own file formats, at full size or smaller.

    python -m bench.twin OUT --entities 1000000          # the quick size
    python -m bench.twin OUT --entities 4600000          # the whole release's size (4,594,485 in the real one)

Files (what ``kgqa load wikidata5m --path OUT`` reads, kgqa.loaders.wikidata5m.files):

* ``wikidata5m_entity.txt``    ``QID<TAB>label<TAB>alias…`` (0–6 aliases, Zipf-distributed; ~5 % of labels
  repeat an earlier label, as "John Smith" and "Springfield" repeat in Wikidata);
* ``wikidata5m_relation.txt``  822 relations ``PID<TAB>label<TAB>alias…``;
* ``wikidata5m_transductive_{train,valid,test}.txt``  ``head<TAB>PID<TAB>tail``, ~4.5 facts per entity
  (20,614,279 / 4,594,485 in the release), valid and test ~5,000 facts each as in the release;
* ``wikidata5m_text.txt``  ``QID<TAB>description`` (one short sentence each: the release's are Wikipedia
  paragraphs, so its file is larger; the loader reads both alike);
* ``entity_images.tsv`` + ``images/``: small PNGs for ``--images`` entities (default 1,000).

The degree shape of the release: every entity is ``instance of`` a class, and 45 % of them of "human"
(one hub with ~2M in-edges at full size); ~200 countries are the tails of "country" / "country of
citizenship" with Zipf weights (the first holds ~10^5–10^6 in-edges); the other 819 relations are
drawn Zipf-wise, their tails by preferential attachment over a fixed shuffle of the entities
(power-law in-degrees, hubs spread over the id range). Out-degrees are heavy-tailed (log-normal).

Streamed: entities are written a block at a time (``BLOCK`` entities, their names, descriptions and
out-edges), so memory stays at a few hundred MB whatever the size: only the hub names and a short
pool of recent labels are kept. The same ``--seed`` and size give the same files byte for byte.
Prints the counts, the degree figures and the seconds taken.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

from bench.load import KINDS, REL_FORMS, REL_WORDS, SYLLABLES

#: entities per generated block (names, descriptions and their out-edges)
BLOCK = 50_000
N_RELATIONS = 822
N_COUNTRIES = 200
N_CLASSES = 2_000
#: the release's mean facts per entity (20,614,279 / 4,594,485)
FACTS_PER_ENTITY = 4.49
#: share of facts in valid and in test: the release's 5,163 of 20.6M each
HELD_OUT_SHARE = 5_163 / 20_614_279
HUMAN_SHARE = 0.45
COUNTRY_FACT_SHARE = 0.5    # facts per entity through "country" / "country of citizenship"

# fixed relation ids: instance of, subclass of, country, country of citizenship
P_INSTANCE, P_SUBCLASS, P_COUNTRY, P_CITIZEN = "P31", "P279", "P17", "P27"
FIXED_RELATIONS = {P_INSTANCE: ["instance of", "is a", "type"], P_SUBCLASS: ["subclass of"],
                   P_COUNTRY: ["country", "sovereign state"], P_CITIZEN: ["country of citizenship",
                                                                            "citizenship", "nationality"]}


def qid(i: np.ndarray | int):
    """Entity index → its QID number: sparse and increasing, as the release's ids are (index 0 is Q5, "human")."""
    return 5 + np.asarray(i, dtype=np.int64) * 17 + (np.asarray(i, dtype=np.int64) * 7_919) % 17


class Names:
    """Labels, aliases and descriptions from one seeded ``random.Random`` (faster per call than numpy's)."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.pool: list[str] = []

    def word(self) -> str:
        r = self.r
        return "".join(r.choice(SYLLABLES) for _ in range(r.randint(2, 3))).capitalize()

    def label(self) -> str:
        r = self.r
        if self.pool and r.random() < 0.05:
            return r.choice(self.pool)
        x = r.random()
        if x < 0.40:
            name = f"{self.word()} {self.word()}"
        elif x < 0.65:
            name = self.word()
        elif x < 0.78:
            name = f"{self.word()} ({r.choice(KINDS)})"
        elif x < 0.90:
            name = f"{self.word()} {self.word().lower()}"
        else:
            name = f"The {self.word()} of {self.word()}"
        if len(self.pool) < 10_000:
            self.pool.append(name)
        else:
            self.pool[r.randrange(10_000)] = name
        return name

    def aliases(self, name: str) -> list[str]:
        k = min(int(1 / (1 - self.r.random()) ** 0.5) - 1, 6)      # Zipf-like: most none, a few many
        out = [f"{name[0]}. {name.split(' ')[-1]}" if " " in name else name.lower()][:k]
        return out + [self.word() for _ in range(k - len(out))]


def _relations(names: Names, rng: np.random.Generator) -> list[tuple[str, list[str]]]:
    rows = [(p, list(a)) for p, a in FIXED_RELATIONS.items()]
    used = {a[0] for _, a in rows}
    pids = iter(int(p) for p in rng.permutation(np.arange(32, 12_000))[: N_RELATIONS * 2])
    while len(rows) < N_RELATIONS:
        form, w = names.r.choice(REL_FORMS), names.r.choice(REL_WORDS)
        label = form.format(w=w if names.r.random() < 0.5 else f"{w} {names.word().lower()}")
        if label not in used:
            used.add(label)
            rows.append((f"P{next(pids)}", [label] + ([form.format(w=names.word().lower())]
                                                       if names.r.random() < 0.3 else [])))
    return rows


def _zipf_cdf(n: int, a: float) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1) ** a
    return np.cumsum(w / w.sum())


class Edges:
    """Out-edges of a block of heads, vectorised: (head index, relation index, tail index) arrays."""

    def __init__(self, n: int, rng: np.random.Generator):
        self.n, self.rng = n, rng
        self.country_cdf = _zipf_cdf(N_COUNTRIES, 1.1)
        self.class_cdf = _zipf_cdf(N_CLASSES - 1, 1.2)
        self.rel_cdf = _zipf_cdf(N_RELATIONS - 4, 1.0)
        # preferential attachment over a fixed shuffle: rank → entity by an affine bijection mod n
        self.mult = next(m for m in range(max(2, int(n * 0.618)), 4 * n + 3) if np.gcd(m, n) == 1)
        self.offset = int(rng.integers(0, n))

    def _ranked_tail(self, size: int) -> np.ndarray:
        rank = np.floor(self.n * self.rng.random(size) ** 2.2).astype(np.int64)   # density ∝ rank^-0.55
        return (rank * self.mult + self.offset) % self.n

    def block(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng, m = self.rng, hi - lo
        heads = np.arange(lo, hi, dtype=np.int64)
        # instance of: "human" (index 0) or a class (indices 1 + N_COUNTRIES …), Zipf over the classes
        cls = np.where((rng.random(m) < HUMAN_SHARE) & (heads > N_COUNTRIES + N_CLASSES), 0,
                       1 + N_COUNTRIES + np.minimum(np.searchsorted(self.class_cdf, rng.random(m)), N_CLASSES - 2))
        h = [heads]
        r = [np.zeros(m, dtype=np.int64)]
        t = [cls.astype(np.int64)]
        # country / citizenship: Zipf over the countries (indices 1 … N_COUNTRIES)
        has = rng.random(m) < COUNTRY_FACT_SHARE
        k = int(has.sum())
        h.append(heads[has])
        r.append(np.where(cls[has] == 0, 3, 2))
        t.append(1 + np.minimum(np.searchsorted(self.country_cdf, rng.random(k)), N_COUNTRIES - 1).astype(np.int64))
        # the rest: heavy-tailed counts, mean FACTS_PER_ENTITY - 1 - COUNTRY_FACT_SHARE
        rest = np.minimum(np.floor(rng.lognormal(0.76, 1.0, m)).astype(np.int64), 2_000)
        total = int(rest.sum())
        h.append(np.repeat(heads, rest))
        r.append(4 + np.minimum(np.searchsorted(self.rel_cdf, rng.random(total)), N_RELATIONS - 5).astype(np.int64))
        t.append(self._ranked_tail(total))
        h, r, t = (np.concatenate(x) for x in (h, r, t))
        keep = h != t
        h, r, t = h[keep], r[keep], t[keep]
        key = (h - lo) * (N_RELATIONS * self.n) + r * self.n + t        # < 2^63 for m ≤ BLOCK, n ≤ 5M
        _, first = np.unique(key, return_index=True)
        first.sort()
        return h[first], r[first], t[first]


def _png(path: Path, seed: int) -> None:
    from PIL import Image

    rng = np.random.default_rng(seed)
    cells = rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)
    Image.fromarray(cells).resize((64, 64), Image.NEAREST).save(path)


def generate(dst: Path, entities: int, seed: int = 61, images: int = 1_000, progress=None) -> dict:
    """Write the twin into ``dst``; returns its counts and degree figures."""
    if entities < N_COUNTRIES + N_CLASSES + 10:
        raise ValueError(f"--entities {entities}: at least {N_COUNTRIES + N_CLASSES + 10} (the hubs and classes)")
    dst.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    names = Names(seed)
    relations = _relations(names, rng)
    with open(dst / "wikidata5m_relation.txt", "w", encoding="utf-8") as fh:
        fh.writelines("\t".join([p, *labels]) + "\n" for p, labels in relations)
    pids = [p for p, _ in relations]
    edges = Edges(entities, rng)
    in_deg = np.zeros(entities, dtype=np.int64)
    n_facts = {"train": 0, "valid": 0, "test": 0}
    max_out = 0
    img_every = max(1, entities // max(images, 1)) if images else 0
    (dst / "images").mkdir(exist_ok=True) if images else None
    hub_names = {0: ("human", "common name of Homo sapiens")}
    files = {s: open(dst / f"wikidata5m_transductive_{s}.txt", "w") for s in n_facts}
    with open(dst / "wikidata5m_entity.txt", "w", encoding="utf-8") as ent, \
            open(dst / "wikidata5m_text.txt", "w", encoding="utf-8") as text, \
            open(dst / "entity_images.tsv", "w") as tsv:
        for lo in range(0, entities, BLOCK):
            hi = min(lo + BLOCK, entities)
            q = qid(np.arange(lo, hi))
            ent_lines, text_lines = [], []
            for i in range(lo, hi):
                if i in hub_names:
                    name, desc = hub_names[i]
                    aliases = ["person", "people"]
                elif i <= N_COUNTRIES:
                    name, desc = f"{names.word()}ia", "sovereign state"
                    aliases = [f"Republic of {name}", name[:3].upper()]
                elif i <= N_COUNTRIES + N_CLASSES:
                    name, desc = names.word().lower() + " " + names.r.choice(KINDS), "class of things"
                    aliases = []
                else:
                    name = names.label()
                    aliases = names.aliases(name)
                    desc = f"{names.r.choice(KINDS)} of {names.word()}"
                qi = f"Q{q[i - lo]}"
                ent_lines.append("\t".join([qi, name, *aliases]) + "\n")
                text_lines.append(f"{qi}\t{name} is a {desc}.\n")
                if img_every and i % img_every == img_every // 2 and i // img_every < images:
                    _png(dst / "images" / f"{qi}.png", seed * 1_000_003 + i)
                    tsv.write(f"{qi}\timages/{qi}.png\n")
            ent.writelines(ent_lines)
            text.writelines(text_lines)
            h, r, t = edges.block(lo, hi)
            in_deg += np.bincount(t, minlength=entities)
            if len(h):
                max_out = max(max_out, int(np.bincount(h - lo).max()))
            split = rng.random(len(h))
            qh, qt = qid(h), qid(t)
            lines = np.array([f"Q{a}\t{pids[b]}\tQ{c}\n" for a, b, c in zip(qh.tolist(), r.tolist(), qt.tolist())],
                             dtype=object)
            for name, mask in (("valid", split < HELD_OUT_SHARE),
                               ("test", (split >= HELD_OUT_SHARE) & (split < 2 * HELD_OUT_SHARE)),
                               ("train", split >= 2 * HELD_OUT_SHARE)):
                files[name].writelines(lines[mask])
                n_facts[name] += int(mask.sum())
            if progress:
                progress(hi, entities)
    for fh in files.values():
        fh.close()
    if not images:
        (dst / "entity_images.tsv").unlink()
    top = np.sort(in_deg)[::-1]
    return {"entities": entities, "relations": len(relations), "triples": sum(n_facts.values()), **n_facts,
            "facts_per_entity": round(sum(n_facts.values()) / entities, 2), "images": min(images, entities),
            "in_degree_top5": top[:5].tolist(), "entities_with_1e5_in": int((in_deg >= 100_000).sum()),
            "entities_with_1e4_in": int((in_deg >= 10_000).sum()), "max_out_degree": max_out}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder to write (created)")
    ap.add_argument("--entities", type=int, default=1_000_000, help="1000000 (quick) or 4600000 (full size)")
    ap.add_argument("--seed", type=int, default=61)
    ap.add_argument("--images", type=int, default=1_000, help="entities given a small PNG (0: none)")
    args = ap.parse_args(argv)
    if args.entities < N_COUNTRIES + N_CLASSES + 10:
        sys.exit(f"bench/twin.py: --entities {args.entities}: at least {N_COUNTRIES + N_CLASSES + 10}")
    t0 = time.perf_counter()
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter() - t0
        if now - last[0] > 30 or done == total:
            last[0] = now
            eta = now / done * (total - done)
            print(f"  {done:,} / {total:,} entities, {now:.0f} s, ETA {eta:.0f} s", flush=True)

    stats = generate(args.out, args.entities, seed=args.seed, images=args.images, progress=progress)
    secs = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"twin written to {args.out} in {secs:.1f} s ({size / 2**30:.2f} GiB, peak memory {peak:.0f} MiB): {stats}")


if __name__ == "__main__":
    main()
