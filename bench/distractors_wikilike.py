"""A second distractor generator, written apart from bench/scale_distractors.py: a KG buried the way
Wikidata buries it — heavy-tailed in- *and* out-degrees, thousands of *incoming* edges to the KG's own
entities through the very relations the questions ask about, distractors typed and described as the
answers the questions ask for.

``generate(kg_dir, questions, n_entities, seed)`` works on any Wikidata5M-format KG (the demo KG,
more-dev's KG with its local relation ids) and returns the shape bench/yardstick.py imports
(``ids, names, descriptions, relations, facts`` and the KG itself as ``demo``); ``check`` asserts the
properties the bench relies on. How the distractors are made:

* **Kinds.** A KG relation r defines a kind, "what r points to" (the countries of ``country``, the
  architects of ``architect``). Each distractor gets a kind; kinds are weighted by how often their
  relation occurs in the KG plus a floor, so every asked type has its crowd. 10 % are of a generic
  kind (filler relations only).
* **Names.** A distractor's name is a KG entity name of its kind with one word replaced (a word of
  another KG name or a made-up one: "Pont de Bir-Hakeim" → "Pont de Ravenholt"), so names compete in
  entity linking; none equals (case-folded) a KG name, alias, gold answer or gold alias.
* **Descriptions.** "<type noun> in|of <another distractor>", the type noun from the kind's relation
  label ("country", "architect", "currency") or from the questions' own answer types ("which *river*
  …") for questions ending in that relation — distractors of the asked types, as on Wikidata.
* **Out-degrees.** Per distractor a discrete Pareto draw (α = 1.1, capped at ``max_degree``):
  most have 1–3 facts, a few thousands. The relations are those the KG's entities of that kind take
  (so an architect-kind distractor has a ``place of birth``), plus filler relations (ids P97xxx, real
  Wikidata labels the KG lacks). Tails: preferential attachment (Zipf popularity inside each kind),
  so in-degrees are heavy-tailed too.
* **Incoming edges to the KG.** For each KG fact (h, r, t), distractors of h's kind get the same
  relation into t: the KG's tails ranked by in-degree, the k-th receives ``max_in · k^-0.7`` of them
  ("people born in Paris", "places whose country is France").
* **Out-edges from the KG.** KG entities are hubs of out-edges too (``max_out · k^-0.65`` by KG
  degree), through relations they do not have in the KG — often asked relations ("architect" from a
  bridge that has none in the KG) — into distractors of the relation's kind.
* **Honest** (``check``): no distractor fact leaves a KG entity through a relation it has in the KG,
  none joins two KG entities, so following a question's gold relation chain from its topic reaches
  exactly the KG's own answer set; every gold answer is reachable and its string is no distractor's
  name. Asserted on the output before anything is written.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

GENERATOR_VERSION = 1

# Real Wikidata property labels used as filler (ids local to this generator, P97xxx); a label the KG
# already has is skipped (its own relation then serves).
FILLER = ("different from", "said to be the same as", "named after", "significant event", "shares border with",
          "located in the administrative territorial entity", "part of", "has part", "owned by", "sponsor",
          "described by source", "on focus list of Wikimedia project", "category for people born here",
          "topic's main category", "maintained by", "partner town", "twinned administrative body",
          "heritage designation", "archives at", "member of")
_SYLL = ("ka", "ren", "vo", "lin", "dar", "mi", "sel", "tor", "ba", "quen", "ho", "las", "ne", "vik", "ul",
         "stra", "mon", "pe", "gri", "za")
# words of a relation label that are not its head noun ("place of birth" → place, "award received" → award)
_NOT_NOUN = frozenset("located in on at of or to the a next by has have is was said be named different followed follows "
                      "described instance subclass notable parent received held significant main topic s part "
                      "administrative territorial entity".split())
_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)


def read_kg(kg_dir: Path) -> dict:
    """A Wikidata5M-format directory: names and aliases, relation labels, facts (all splits)."""
    names, aliases, rels, facts = {}, {}, {}, []
    for line in open(kg_dir / "wikidata5m_entity.txt", encoding="utf-8"):
        c = line.rstrip("\n").split("\t")
        names[c[0]], aliases[c[0]] = c[1], c[2:]
    for line in open(kg_dir / "wikidata5m_relation.txt", encoding="utf-8"):
        c = line.rstrip("\n").split("\t")
        rels[c[0]] = c[1]
    for split in ("train", "valid", "test"):
        f = kg_dir / f"wikidata5m_transductive_{split}.txt"
        if f.exists():
            facts += [tuple(line.rstrip("\n").split("\t")) for line in open(f, encoding="utf-8") if line.strip()]
    return {"names": names, "aliases": aliases, "relations": rels, "facts": facts}


def _answer_nouns(question: str) -> list[str]:
    """The answer's type noun of a question, read simply: the word after "which"/"what" when it is not a verb."""
    m = re.search(r"\b(?:which|what)\s+([a-z]+)", question.lower())
    return [m.group(1)] if m and m.group(1) not in {"is", "was", "are", "were", "does", "did", "do", "has"} else []


def _pareto(rng, n: int, alpha: float, cap: int) -> np.ndarray:
    return np.minimum(np.floor(rng.pareto(alpha, n) + 1).astype(np.int64), cap)


def generate(kg_dir: Path, questions: list[dict], n_entities: int = 200_000, max_degree: int = 3000,
             max_in: int = 3000, max_out: int = 2000, seed: int = 23) -> dict:
    kg = read_kg(kg_dir)
    rng = np.random.default_rng(seed)
    kg_ids = set(kg["names"])
    out_rels = defaultdict(set)                  # KG entity → relations it has (honesty)
    degree, indeg = Counter(), Counter()
    tails_of = defaultdict(list)                 # relation → KG tails (a kind's name models)
    kinds_of = defaultdict(set)                  # KG entity → kinds (the relations pointing at it)
    for h, r, t in kg["facts"]:
        out_rels[h].add(r)
        degree[h] += 1
        degree[t] += 1
        indeg[t] += 1
        tails_of[r].append(t)
        kinds_of[t].add(r)
    # --- relation catalogue: the KG's own and filler labels it lacks
    relations = dict(kg["relations"])
    by_label = {v.casefold(): k for k, v in relations.items()}
    filler = []
    for i, lab in enumerate(FILLER):
        rid = by_label.get(lab.casefold()) or f"P97{i:03d}"
        relations.setdefault(rid, lab)
        filler.append(rid)
    # --- kinds: one per KG relation (what it points to), plus "generic" (-1)
    kinds = sorted(tails_of)
    kind_w = np.array([len(tails_of[r]) for r in kinds], dtype=np.float64)
    kind_w = 0.9 * (kind_w + kind_w.sum() * 0.02) / (kind_w + kind_w.sum() * 0.02).sum()
    kind = rng.choice(len(kinds) + 1, size=n_entities, p=np.append(kind_w, 0.1)) - 0  # last index = generic
    kind[kind == len(kinds)] = -1
    # relations a kind takes: those leaving the KG entities of that kind
    takes = {}
    for k, r in enumerate(kinds):
        rs = sorted({r2 for t in tails_of[r] for r2 in out_rels.get(t, ())})
        takes[k] = rs + filler
    takes[-1] = list(filler)
    # --- names and descriptions
    taken = {n.casefold() for n in kg["names"].values()} | {a.casefold() for al in kg["aliases"].values() for a in al}
    for q in questions:
        taken |= {a.casefold() for a in [q["answer"], *q.get("aliases", [])]}
    words = sorted({w for n in kg["names"].values() for w in _WORD.findall(n) if len(w) > 2})
    all_names = sorted(kg["names"].values())

    def made_up() -> str:
        return "".join(_SYLL[i] for i in rng.integers(0, len(_SYLL), int(rng.integers(2, 4)))).capitalize()

    ids, names = [], []
    qn = 90_000_000
    for k in kind.tolist():
        models = [kg["names"][t] for t in tails_of[kinds[k]]] if k >= 0 else all_names
        for _ in range(30):
            base = models[int(rng.integers(0, len(models)))].split()
            j = int(rng.integers(0, len(base)))
            new = words[int(rng.integers(0, len(words)))] if rng.random() < 0.5 else made_up()
            if len(base) == 1:
                base.insert(int(rng.integers(0, 2)), new)      # a one-word name gains a word
            else:
                base[j] = new
            name = " ".join(base) if rng.random() < 0.8 else f"{' '.join(base)} {made_up()}"
            if name.casefold() not in taken:
                break
        else:
            name = f"{made_up()} {made_up()} {made_up()}"
        names.append(name)
        ids.append(f"Q{qn}")
        qn += 1
    nouns = {}
    asked = defaultdict(list)
    for q in questions:
        if q.get("path"):
            asked[q["path"][-1][1]] += _answer_nouns(q["question"])
    for k, r in enumerate(kinds):
        label_noun = [w for w in re.findall(r"[a-z]+", relations[r].lower()) if w not in _NOT_NOUN][:1] or ["item"]
        nouns[k] = sorted(set(label_noun + asked.get(r, [])))
    nouns[-1] = ["item", "entity", "concept", "place", "work"]
    descriptions = []
    for i, k in enumerate(kind.tolist()):
        noun = nouns[k][int(rng.integers(0, len(nouns[k])))]
        other = names[int(rng.integers(0, n_entities))]
        descriptions.append(f"{noun} {'in' if rng.random() < 0.6 else 'of'} {other}")
    # --- pools per kind with preferential (Zipf) popularity: heavy-tailed in-degrees
    pools = {}
    for k in [*range(len(kinds)), -1]:
        idx = np.flatnonzero(kind == k)
        if len(idx) == 0:
            idx = np.flatnonzero(kind == -1)
        rng.shuffle(idx)
        w = 1.0 / np.arange(1, len(idx) + 1) ** 0.9
        pools[k] = (idx, np.cumsum(w / w.sum()))

    def draw(k: int, n: int) -> np.ndarray:
        idx, cum = pools[k]
        return idx[np.minimum(np.searchsorted(cum, rng.random(n)), len(idx) - 1)]

    range_kind = {r: k for k, r in enumerate(kinds)}          # a relation's tails: its own kind (filler: generic)
    facts: list[tuple[str, str, str]] = []
    seen = set(kg["facts"])

    def add(h: str, r: str, t: str) -> None:
        if h != t and (h, r, t) not in seen:
            seen.add((h, r, t))
            facts.append((h, r, t))

    # --- distractor-headed facts: Pareto out-degrees, relations of the head's kind, preferential tails
    outdeg = _pareto(rng, n_entities, 1.1, max_degree)
    for i in np.flatnonzero(outdeg).tolist():
        rs = takes[int(kind[i])]
        chosen = [rs[j] for j in rng.integers(0, len(rs), int(outdeg[i]))]
        for r, c in Counter(chosen).items():
            for t in draw(range_kind.get(r, -1), c).tolist():
                add(ids[i], r, ids[t])
    # --- incoming edges to KG entities through the KG's own relations, hubs by KG in-degree
    kg_tails = sorted(indeg, key=lambda e: (-indeg[e], e))
    head_kind = {}
    for h, r, t in kg["facts"]:
        head_kind.setdefault((r, t), [range_kind[k2] for k2 in sorted(kinds_of.get(h, ()))] or [-1])
    n_in = 0
    for rank, t in enumerate(kg_tails, 1):
        m = int(max_in * rank ** -0.7)
        rs = sorted({r for h, r, tt in kg["facts"] if tt == t})
        for r in rs:
            for hk in head_kind[(r, t)]:
                for h in draw(hk, max(1, m // (len(rs) * len(head_kind[(r, t)])))).tolist():
                    add(ids[h], r, t)
                    n_in += 1
    # --- out-edges from KG entities through relations they lack, hubs by KG degree
    n_out = 0
    for rank, e in enumerate(sorted(kg_ids, key=lambda x: (-degree[x], x)), 1):
        ks = sorted(kinds_of.get(e, ())) or [None]
        pool = sorted({r for k2 in ks for r in (takes[range_kind[k2]] if k2 else filler)} - out_rels[e])
        if not pool:
            continue
        for r in rng.choice(pool, size=int(max_out * rank ** -0.65)).tolist():
            add(e, r, ids[int(draw(range_kind.get(r, -1), 1)[0])])
            n_out += 1
    return {"demo": kg, "ids": ids, "names": names, "descriptions": descriptions, "relations": relations,
            "facts": facts, "demo_headed": n_out, "kg_incoming": n_in,
            "kinds": len(kinds), "generator": f"wikilike v{GENERATOR_VERSION}"}


def check(g: dict, questions: list[dict]) -> dict:
    """Assert honesty (module docstring) and that every gold answer stays unique; return degree figures."""
    kg = g["demo"]
    kg_ids = set(kg["names"])
    own = defaultdict(set)
    for h, r, _ in kg["facts"]:
        own[h].add(r)
    for h, r, t in g["facts"]:
        if h in kg_ids:
            assert r not in own[h], f"distractor {h} {r} {t} leaves a KG entity through a relation it has"
            assert t not in kg_ids, f"distractor {h} {r} {t} joins two KG entities"
    dnames = {n.casefold() for n in g["names"]}
    out = defaultdict(lambda: defaultdict(set))
    base = defaultdict(lambda: defaultdict(set))
    for h, r, t in kg["facts"]:
        out[h][r].add(t)
        base[h][r].add(t)
    for h, r, t in g["facts"]:
        out[h][r].add(t)
    n = 0
    for q in questions:
        for a in [q["answer"], *q.get("aliases", [])]:
            assert a.casefold() not in dnames, f"{q['id']}: a distractor is named {a!r}"
        if not q.get("path"):
            continue
        every, own_only = {q["path"][0][0]}, {q["path"][0][0]}
        for _, r, _ in q["path"]:
            every = {t for e in every for t in out[e].get(r, ())}
            own_only = {t for e in own_only for t in base[e].get(r, ())}
        assert every == own_only, f"{q['id']}: distractors add answers {sorted(every - own_only)[:5]}"
        assert q["path"][-1][2] in every, f"{q['id']}: gold answer unreachable"
        n += 1
    outs = Counter(h for h, _, _ in g["facts"])
    ins = Counter(t for _, _, t in g["facts"])
    return {"gold_chains_checked": n, "max_out_degree": max(outs.values(), default=0),
            "max_in_degree": max(ins.values(), default=0),
            "demo_max_out": max((outs[e] for e in kg_ids), default=0),
            "demo_median_out": int(np.median([outs[e] for e in kg_ids])),
            "kg_max_in": max((ins[e] for e in kg_ids), default=0)}
