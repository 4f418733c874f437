"""Distractor generator for bench/scale.py: the demo KG buried in Wikidata-sized hubs.

``generate(demo_dir, n_entities, n_facts, max_out, seed)`` returns the distractor entities,
the relations they add and the distractor facts; ``check_honest`` proves the one property
the bench relies on. How the distractors are made:

* **Entities** (default 200,000): each gets a type (person, place, building, work,
  organisation, thing) and a name in that type's style, built half of the time from the
  words of the demo's own entity names ("Tower", "Museum", "Paris", "Collins", "Falcon" …)
  and otherwise from the syllable words of bench/load.py ("Kamarsen Tower", "Paris Heights",
  "Eileen Torvadi", "University of Ravenna", "Kamarian franc"), so distractor names compete
  with real ones both in entity linking (their SBERT name embeddings go into the same vector
  index) and in the tail part of Eq. 5. No distractor name equals (case-folded) a demo name or
  alias, so no distractor can be mistaken for a gold answer by exact match.
* **Relations**: the demo's 45 real Wikidata properties plus 56 more real ones (id and English
  label as in Wikidata: "residence", "work location", "sibling", "genre" …), so relation names
  compete too. Each relation belongs to the head types it is used with (a person has a
  "place of death", a place "located in time zone", a building "architectural style") and has
  a range type for its tails.
* **Descriptions**: every distractor has one, as Wikidata's entities do ("city in Hane Heights",
  "American architect", "novel by Eileen Torvadi", "star"), with the type nouns the demo questions
  ask for, so VisPath's answer typing meets distractors of the asked type (``make_descriptions``).
* **Facts** (default ~730,000): out-degrees are power-law. Demo entities are the hubs: ranked by
  their degree in the demo KG, the k-th gets ``max_out · k^-0.65`` distractor out-edges
  (France or Paris ≈ 3,000, the median demo entity ≈ 120); distractor heads share the rest
  (Zipf weights over a shuffled order, capped at ``max_out``). A relation is drawn among the
  head type's relations with Zipf weights; a tail is drawn among the distractors of the
  relation's range type with preferential (Zipf) weights; 5 % of distractor-headed facts point
  at a demo entity instead (in-edges, which the path search never follows).
* **Honest**: no distractor fact leaves a demo entity through a relation that a demo fact
  takes from that entity, and no distractor fact joins two demo entities. Every gold path
  (e_0, r_1, e_1, …) follows, at each hop, a relation that e_{i-1} has in the demo KG, so the
  set of entities reachable by the gold relation chain is exactly the demo's: every gold answer
  stays unique and is reachable by the same path. ``check_honest`` asserts this on the output.

Everything is drawn from ``numpy.random.default_rng(seed)`` streams (names and facts from
separate streams, so the name embeddings can be cached across fact changes).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np


GENERATOR_VERSION = 2          # 2: distractors have descriptions (make_descriptions)

# Real Wikidata properties that the demo catalogue lacks (id → English label).
EXTRA_RELATIONS = {
    "P3373": "sibling", "P551": "residence", "P937": "work location", "P102": "member of political party",
    "P39": "position held", "P101": "field of work", "P135": "movement", "P1066": "student of",
    "P737": "influenced by", "P103": "native language", "P1412": "languages spoken, written or signed",
    "P140": "religion", "P172": "ethnic group", "P1038": "relative", "P451": "unmarried partner",
    "P1411": "nominated for", "P1416": "affiliation", "P184": "doctoral advisor", "P1303": "instrument",
    "P264": "record label", "P54": "member of sports team", "P413": "position played on team / speciality",
    "P421": "located in time zone", "P206": "located in or next to body of water", "P610": "highest point",
    "P1589": "lowest point", "P530": "diplomatic relation", "P463": "member of", "P793": "significant event",
    "P149": "architectural style", "P1435": "heritage designation", "P186": "made from material",
    "P127": "owned by", "P527": "has part", "P136": "genre", "P921": "main subject", "P180": "depicts",
    "P195": "collection", "P608": "exhibition history", "P123": "publisher",
    "P407": "language of work or name", "P155": "follows", "P156": "followed by", "P57": "director",
    "P161": "cast member", "P162": "producer", "P86": "composer", "P175": "performer", "P355": "subsidiary",
    "P749": "parent organization", "P1830": "owner of", "P452": "industry", "P398": "child astronomical body",
    "P61": "discoverer or inventor", "P1344": "participant in", "P710": "participant",
}

TYPES = ("person", "place", "building", "work", "org", "thing")
TYPE_SHARE = (0.32, 0.26, 0.10, 0.14, 0.08, 0.10)          # of the distractor entities

# Head-type → relations (demo ids and extra ids), in a fixed order (Zipf weights follow it).
DOMAIN = {
    "person": "P106 P27 P19 P20 P69 P166 P26 P40 P22 P25 P108 P800 P241 P31 P551 P937 P3373 P102 P39 P101 "
              "P135 P1066 P737 P103 P1412 P140 P172 P1038 P451 P1411 P1416 P184 P1303 P264 P54 P413 P463 "
              "P1344 P138",
    "place": "P17 P131 P31 P47 P150 P30 P37 P38 P36 P1376 P190 P421 P206 P610 P1589 P530 P463 P793 P138 "
             "P361 P140 P172 P527 P35 P6",
    "building": "P131 P17 P84 P31 P276 P149 P1435 P186 P127 P88 P547 P793 P527 P361 P138 P166",
    "work": "P50 P170 P136 P31 P495 P276 P921 P180 P195 P608 P123 P407 P135 P155 P156 P57 P161 P162 P86 "
            "P175 P361 P138 P166 P1411",
    "org": "P17 P159 P112 P31 P127 P452 P749 P355 P1830 P463 P138 P166 P108",
    "thing": "P31 P279 P176 P137 P375 P1029 P397 P398 P59 P61 P171 P361 P138 P127 P186 P527 P17 P495 "
             "P793 P1344",
}
DOMAIN = {k: v.split() for k, v in DOMAIN.items()}
# Relation → tail type (range).
RANGE = {}
for _t, _ps in {
    "place": "P19 P20 P27 P551 P937 P17 P131 P36 P47 P30 P1376 P150 P190 P276 P495 P159 P206 P610 P1589 "
             "P530",
    "person": "P26 P22 P25 P40 P3373 P1038 P451 P184 P1066 P737 P50 P170 P84 P112 P35 P6 P57 P161 P162 "
              "P86 P175 P61 P88 P1029 P547 P710",
    "org": "P69 P108 P102 P1416 P264 P54 P463 P123 P127 P749 P355 P176 P137 P195 P608 P241 P1830",
    "work": "P800 P155 P156 P921",
    "building": "P527",
}.items():
    for _p in _ps.split():
        RANGE[_p] = _t
# everything else (occupations, languages, currencies, awards, styles, genres, …) → "thing"
# Single-valued in Wikidata (one birthplace, one father, one capital): at most one fact per head,
# so hubs get their thousands of edges through many-valued relations, as real hubs do.
FUNCTIONAL = set("P19 P20 P22 P25 P36 P1376 P17 P30 P38 P159 P176 P84 P50 P170 P375 P397 P59 P171 P749 "
                 "P155 P156 P610 P1589 P421 P35 P6 P26 P184".split())

_SPECIFIC = {t: set(ps) - {"P31", "P17", "P131", "P361", "P138", "P166", "P463", "P793", "P527", "P127"}
             for t, ps in DOMAIN.items()}

STOP = {"of", "the", "de", "la", "le", "and", "del", "von", "van", "der", "di", "d", "s", "du", "des", "y"}
KIND_WORDS = {
    "place": ("Heights", "Falls", "Springs", "Valley", "Harbour", "Bay", "Hills", "Park", "Island", "Port",
              "County", "Province", "District"),
    "building": ("Tower", "Museum", "Bridge", "Cathedral", "Palace", "Station", "Hall", "Theatre", "Gallery",
                 "Library", "Castle", "Church", "Stadium", "Building", "House", "Monument", "Memorial"),
    "org": ("Company", "Corporation", "University", "Institute", "Records", "FC", "Society", "Academy",
            "Agency", "Industries", "Group", "Observatory"),
    "work": ("film", "novel", "painting", "album", "opera", "poem", "sculpture", "play"),
    "thing": ("language", "franc", "dollar", "award", "Prize", "style", "movement", "rocket", "satellite",
              "telescope", "genus", "people", "dialect", "order"),
}


def read_demo(demo: Path) -> dict:
    names, aliases = {}, {}
    for line in open(demo / "wikidata5m_entity.txt", encoding="utf-8"):
        cols = line.rstrip("\n").split("\t")
        names[cols[0]] = cols[1]
        aliases[cols[0]] = cols[2:]
    rel = {}
    for line in open(demo / "wikidata5m_relation.txt", encoding="utf-8"):
        cols = line.rstrip("\n").split("\t")
        rel[cols[0]] = cols[1]
    facts = []
    for split in ("train", "valid", "test"):
        for line in open(demo / f"wikidata5m_transductive_{split}.txt", encoding="utf-8"):
            h, r, t = line.rstrip("\n").split("\t")
            facts.append((h, r, t))
    return {"names": names, "aliases": aliases, "relations": rel, "facts": facts}


def demo_type(rels: set[str]) -> str:
    best = max(TYPES, key=lambda t: (len(rels & _SPECIFIC[t]), -TYPES.index(t)))
    return best if rels & _SPECIFIC[best] else ("place" if rels & {"P17", "P131"} else "thing")


def _syllable_word(rng) -> str:
    from bench.load import SYLLABLES  # bench/load.py's syllables

    n = int(rng.integers(2, 4))
    return "".join(SYLLABLES[i] for i in rng.integers(0, len(SYLLABLES), n)).capitalize()


def make_names(demo: dict, types: np.ndarray, seed: int) -> list[str]:
    """One name per distractor, in its type's style; half of the words come from demo names."""
    rng = np.random.default_rng(seed)
    taken = {n.casefold() for n in demo["names"].values()}
    taken |= {a.casefold() for al in demo["aliases"].values() for a in al}
    words = sorted({w for n in demo["names"].values() for w in re.findall(r"[A-Za-zÀ-ÿ'’-]{3,}", n)
                    if w.lower() not in STOP and w[0].isupper()})
    dtypes = {}
    by_head = defaultdict(set)
    for h, r, _ in demo["facts"]:
        by_head[h].add(r)
    for e in demo["names"]:
        dtypes[e] = demo_type(by_head.get(e, set()))
    place_names = sorted({demo["names"][e] for e, t in dtypes.items() if t == "place" and "," not in demo["names"][e]})

    def w(p_demo=0.5):
        return words[int(rng.integers(0, len(words)))] if rng.random() < p_demo else _syllable_word(rng)

    out = []
    for t in types:
        t = TYPES[t]
        for _ in range(20):
            r = rng.random()
            if t == "person":
                name = f"{w()} {w()}" if r < 0.85 else f"{w()} {w(0.2)[0]}. {w()}"
            elif t == "place":
                if r < 0.35:
                    name = w(0.3)
                elif r < 0.6:
                    name = f"{w()} {KIND_WORDS['place'][int(rng.integers(0, 13))]}"
                elif r < 0.8:
                    name = f"{w(0.2)}, {place_names[int(rng.integers(0, len(place_names)))]}"
                else:
                    name = f"{('New', 'Port', 'San', 'Saint', 'North', 'Upper')[int(rng.integers(0, 6))]} {w()}"
            elif t in ("building", "org"):
                kw = KIND_WORDS[t][int(rng.integers(0, len(KIND_WORDS[t])))]
                name = f"{w()} {kw}" if r < 0.6 else f"{kw} of {w()}" if r < 0.85 else f"{w()} {w()} {kw}"
            elif t == "work":
                name = (f"The {w()} of {w()}" if r < 0.4 else
                        f"{w()} ({KIND_WORDS['work'][int(rng.integers(0, 8))]})" if r < 0.75 else f"{w()} {w()}")
            else:
                kw = KIND_WORDS["thing"][int(rng.integers(0, len(KIND_WORDS["thing"])))]
                name = f"{w()}ian {kw}" if r < 0.4 else f"{w()} {kw}" if r < 0.8 else f"{w()}-{int(rng.integers(2, 99))}"
            if name.casefold() not in taken:
                break
        out.append(name)
    return out


# Description nouns per distractor type, as Wikidata phrases descriptions ("city in …", "American
# architect", "novel by …"); the nouns the demo questions ask for ("which city", "which country",
# "which star", "the state where", "the museum that") are among them, so a description-based
# answer type check meets distractors of every type as often as real entities.
DESCRIPTION_NOUNS = {
    "place": ("city", "town", "village", "state", "country", "region", "island", "capital", "province",
              "commune"),
    "building": ("museum", "tower", "cathedral", "building", "bridge", "palace", "church", "monument",
                 "stadium"),
    "person": ("astronaut", "architect", "sculptor", "painter", "writer", "composer", "politician",
               "physicist", "actor", "engineer"),
    "work": ("novel", "painting", "film", "poem", "opera", "sculpture", "album", "play"),
    "org": ("company", "university", "agency", "manufacturer", "institute", "record label"),
    "thing": ("star", "planet", "rocket", "currency", "language", "constellation", "award", "spacecraft",
              "moon", "style"),
}
NATIONALITY = ("American", "French", "German", "Italian", "British", "Canadian", "Polish", "Swiss",
               "Austrian", "Danish", "Japanese", "Australian")


def make_descriptions(names: list[str], types: list[str], seed: int) -> list[str]:
    """One description per distractor (its own rng stream, so names and facts do not change): a noun of
    its type (the kind word of its name when it has one: "Kamarsen Tower" → "tower in …") and, for
    places, buildings and organisations, "in <a place distractor>", for works "by <a person distractor>"."""
    rng = np.random.default_rng(seed)
    places = [n for n, t in zip(names, types) if t == "place"] or ["Nowhere"]
    people = [n for n, t in zip(names, types) if t == "person"] or ["Nobody"]
    out = []
    for name, t in zip(names, types):
        nouns = DESCRIPTION_NOUNS[t]
        own = [x for x in nouns if x in name.lower().replace("(", " ").replace(")", " ").split()]
        noun = own[0] if own else nouns[int(rng.integers(0, len(nouns)))]
        if t == "person":
            out.append(f"{NATIONALITY[int(rng.integers(0, len(NATIONALITY)))]} {noun}")
        elif t == "work":
            out.append(f"{noun} by {people[int(rng.integers(0, len(people)))]}")
        elif t == "thing":
            out.append(noun)
        else:
            out.append(f"{noun} in {places[int(rng.integers(0, len(places)))]}")
    return out


def _zipf_p(n: int, a: float) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** a
    return p / p.sum()


def generate(demo_dir: Path, n_entities: int = 200_000, n_facts: int = 730_000, max_out: int = 3000,
             seed: int = 15) -> dict:
    demo = read_demo(demo_dir)
    rng = np.random.default_rng(seed)
    # --- entities
    demo_q = {int(e[1:]) for e in demo["names"]}
    qids = []
    seen = set(demo_q)
    while len(qids) < n_entities:
        for q in rng.integers(10_000_000, 99_000_000, size=n_entities - len(qids) + 100).tolist():
            if q not in seen and len(qids) < n_entities:
                seen.add(q)
                qids.append(q)
    ids = np.array([f"Q{q}" for q in qids])
    types = rng.choice(len(TYPES), size=n_entities, p=np.asarray(TYPE_SHARE))
    names = make_names(demo, types, seed + 1)

    # --- relation catalogue: demo + extra
    relations = dict(demo["relations"])
    for p, lab in EXTRA_RELATIONS.items():
        relations.setdefault(p, lab)      # a KG in real-PID space (generate_for_kg) may have some already
    for t, ps in DOMAIN.items():
        for p in ps:
            assert p in relations, (t, p)

    # pools of distractors per type, each with preferential (Zipf) tail weights over a shuffled order
    pools = {}
    for k, t in enumerate(TYPES):
        idx = np.flatnonzero(types == k)
        rng.shuffle(idx)
        pools[t] = (idx, np.cumsum(_zipf_p(len(idx), 0.8)))

    def draw_tails(range_type: str, n: int) -> np.ndarray:
        idx, cum = pools[range_type]
        return idx[np.minimum(np.searchsorted(cum, rng.random(n) * cum[-1]), len(idx) - 1)]

    dom_p = {t: _zipf_p(len(ps), 0.9) for t, ps in DOMAIN.items()}

    # --- demo-headed distractor facts: the demo entities are the hubs
    true_rels = defaultdict(set)
    degree = Counter()
    for h, r, t in demo["facts"]:
        true_rels[h].add(r)
        degree[h] += 1
        degree[t] += 1
    demo_ids = sorted(demo["names"], key=lambda e: (-degree[e], e))
    dtype = {e: demo_type(true_rels.get(e, set())) for e in demo_ids}
    H, R, T = [], [], []          # head id (str), relation id (str), tail index into ids
    for k, e in enumerate(demo_ids, 1):
        d = int(max_out * k ** -0.65)
        t = dtype[e]
        allowed = [(p, w) for p, w in zip(DOMAIN[t], dom_p[t]) if p not in true_rels[e]]
        single = [p for p, _ in allowed if p in FUNCTIONAL and rng.random() < 0.7]
        multi = [(p, w) for p, w in allowed if p not in FUNCTIONAL]
        ps = np.array([w for _, w in multi])
        rel_idx = rng.choice(len(multi), size=max(0, d - len(single)), p=ps / ps.sum())
        counts = [(p, 1) for p in single] + [(p, int((rel_idx == ri).sum())) for ri, (p, _) in enumerate(multi)]
        for p, m in counts:
            if m:
                drawn = list(dict.fromkeys(draw_tails(RANGE.get(p, "thing"), 2 * m + 5).tolist()))[:m]
                H += [e] * len(drawn)
                R += [p] * len(drawn)
                T += drawn
    n_demo_headed = len(H)

    # --- distractor-headed facts: single-valued relations at most once per head (with probability 0.6),
    #     the power-law rest through the head type's many-valued relations
    multi_dom = {t: [p for p in DOMAIN[t] if p not in FUNCTIONAL] for t in TYPES}
    multi_p = {t: _zipf_p(len(multi_dom[t]), 0.9) for t in TYPES}
    single_h, single_r = [], []
    for k, t in enumerate(TYPES):
        members = np.flatnonzero(types == k)
        for p in DOMAIN[t]:
            if p in FUNCTIONAL:
                chosen = members[rng.random(len(members)) < 0.6]
                single_h.append(chosen)
                single_r += [p] * len(chosen)
    single_h = np.concatenate(single_h) if single_h else np.zeros(0, dtype=np.int64)
    rest = max(0, int(n_facts * 1.03) - n_demo_headed - len(single_h))  # a little extra: duplicates drop
    order = rng.permutation(n_entities)
    outdeg = np.zeros(n_entities, dtype=np.int64)
    outdeg[order] = np.minimum(rng.multinomial(rest, _zipf_p(n_entities, 0.65)), max_out)
    heads_m = np.repeat(np.arange(n_entities), outdeg)
    htypes = types[heads_m]
    rels_m = np.empty(len(heads_m), dtype=object)
    for k, t in enumerate(TYPES):
        sel = np.flatnonzero(htypes == k)
        rels_m[sel] = np.asarray(multi_dom[t], dtype=object)[rng.choice(len(multi_dom[t]), size=len(sel),
                                                                          p=multi_p[t])]
    heads = np.concatenate([single_h, heads_m])
    rels = np.concatenate([np.asarray(single_r, dtype=object), rels_m])
    tails = np.empty(len(heads), dtype=np.int64)
    to_demo = rng.random(len(heads)) < 0.05
    demo_by_type = defaultdict(list)
    for e in demo_ids:
        demo_by_type[dtype[e]].append(e)
    demo_tail = np.full(len(heads), "", dtype=object)
    rel_range = np.array([RANGE.get(p, "thing") for p in rels], dtype=object)
    for t in TYPES:
        sel = np.flatnonzero(rel_range == t)
        tails[sel] = draw_tails(t, len(sel))
        dsel = sel[to_demo[sel]]
        if demo_by_type[t] and len(dsel):
            demo_tail[dsel] = np.asarray(demo_by_type[t], dtype=object)[rng.integers(0, len(demo_by_type[t]),
                                                                                       len(dsel))]
    # --- assemble, drop self-loops and duplicates, trim to n_facts
    facts: list[tuple[str, str, str]] = []
    seen_f = set()
    for h, r, t in zip(H, R, T):
        key = (h, r, ids[t])
        if key not in seen_f:
            seen_f.add(key)
            facts.append(key)
    shuffled = rng.permutation(len(heads))                  # trim at random, not by head order
    for h, r, t, dt in zip(heads[shuffled].tolist(), rels[shuffled].tolist(), tails[shuffled].tolist(),
                           demo_tail[shuffled].tolist()):
        tail = dt or ids[t]
        if h == t and not dt:
            continue
        key = (ids[h], r, tail)
        if key not in seen_f:
            seen_f.add(key)
            facts.append(key)
        if len(facts) >= n_facts:
            break
    type_names = [TYPES[t] for t in types]
    return {"demo": demo, "ids": ids.tolist(), "names": names, "types": type_names,
            "descriptions": make_descriptions(names, type_names, seed + 2),
            "relations": relations, "facts": facts, "demo_headed": n_demo_headed, "demo_types": dtype}


def generate_for_kg(kg_dir: Path, demo_dir: Path, tmp: Path, **kw) -> dict:
    """``generate`` over any Wikidata5M-format KG whose relations may have local ids (more-dev: P9001
    "country" …): its relations are first renamed to the real PIDs of the same label (the demo's
    catalogue and EXTRA_RELATIONS), the missing real ones added, the distractors generated, and every id
    renamed back, so a distractor ``country`` fact uses the KG's own ``country`` relation. Returns
    ``generate``'s dict with ``demo`` = the KG as it is."""
    kg = read_demo(kg_dir)
    real = {**read_demo(demo_dir)["relations"], **EXTRA_RELATIONS}
    by_label = {v.casefold(): k for k, v in real.items()}
    to_real = {k: by_label.get(v.casefold(), k) for k, v in kg["relations"].items()}
    assert len(set(to_real.values())) == len(to_real), "two KG relations share a label"
    back = {v: k for k, v in to_real.items()}
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "wikidata5m_entity.txt").write_text((kg_dir / "wikidata5m_entity.txt").read_text(encoding="utf-8"),
                                               encoding="utf-8")
    rels = {to_real[k]: v for k, v in kg["relations"].items()}
    for k, v in real.items():
        rels.setdefault(k, v)
    (tmp / "wikidata5m_relation.txt").write_text("".join(f"{k}\t{v}\n" for k, v in rels.items()), encoding="utf-8")
    (tmp / "wikidata5m_transductive_train.txt").write_text(
        "".join(f"{h}\t{to_real[r]}\t{t}\n" for h, r, t in kg["facts"]), encoding="utf-8")
    for split in ("valid", "test"):
        (tmp / f"wikidata5m_transductive_{split}.txt").write_text("", encoding="utf-8")
    g = generate(tmp, **kw)
    g["facts"] = [(h, back.get(r, r), t) for h, r, t in g["facts"]]
    g["relations"] = {back.get(k, k): (kg["relations"][back[k]] if k in back else v)
                      for k, v in g["relations"].items()}
    g["demo"] = kg
    return g


def check_honest(demo: dict, facts: list[tuple[str, str, str]]) -> dict:
    """Assert: no distractor fact leaves a demo entity through one of its demo relations, or joins two
    demo entities; every gold path of questions.jsonl stays the only chain of its relations."""
    true_rels = defaultdict(set)
    for h, r, _ in demo["facts"]:
        true_rels[h].add(r)
    demo_ids = set(demo["names"])
    for h, r, t in facts:
        if h in demo_ids:
            assert r not in true_rels[h], f"distractor {h} {r} {t} shares a true relation of {h}"
            assert t not in demo_ids, f"distractor {h} {r} {t} joins two demo entities"
    outs = Counter(h for h, _, _ in facts)
    return {"max_out_degree": max(outs.values()) if outs else 0,
            "demo_max_out": max((outs[e] for e in demo_ids), default=0),
            "demo_median_out": int(np.median([outs[e] for e in demo_ids]))}


def gold_chains_unique(demo: dict, facts: list[tuple[str, str, str]], questions: list[dict]) -> int:
    """Follow every question's gold relation chain over demo + distractor facts: the end set must be the
    demo KG's own. Returns how many questions were checked."""
    out = defaultdict(lambda: defaultdict(set))
    for h, r, t in demo["facts"]:
        out[h][r].add(t)
    base = {h: {r: set(ts) for r, ts in rs.items()} for h, rs in out.items()}
    for h, r, t in facts:
        out[h][r].add(t)
    n = 0
    for q in questions:
        if not q.get("path"):
            continue
        front_all, front_demo = {q["path"][0][0]}, {q["path"][0][0]}
        for _, r, _ in q["path"]:
            front_all = {t for e in front_all for t in out[e].get(r, ())}
            front_demo = {t for e in front_demo for t in base.get(e, {}).get(r, ())}
        assert front_all == front_demo, f"{q['id']}: distractors add answers {sorted(front_all - front_demo)[:5]}"
        assert q["path"][-1][2] in front_all, f"{q['id']}: gold answer unreachable"
        n += 1
    return n
