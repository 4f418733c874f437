"""Build the bundled demo multimodal KG (data/demo/) in Wikidata5M format.

Run from the repository root:  .venv/bin/python data/demo/build_demo.py

Everything in data/demo/ except README.md, source/ and this script is generated here,
deterministically, from the tab-separated tables in source/:

* wikidata5m_entity.txt / _relation.txt / _transductive_{train,valid,test}.txt /
  _text.txt and questions.jsonl from relations.tsv, entities.tsv, facts.tsv (written
  by label, resolved to ids) and questions.tsv;
* images/: real photographs shipped by scikit-image (photos.tsv; see README.md for what
  each one shows and its licence) and national flags (flags.tsv) drawn with Pillow to their
  official proportions and colours;
* queries/: perturbed copies of every entity image (crop, rotation, colour shift,
  blur, JPEG) used as query images, so that recognition is not a byte match.

Only facts the author is sure are true are listed. Where an entity's Wikidata
QID is not known for certain it is marked ``?`` in entities.tsv; README.md lists
those (the facts hold either way; only the id may differ from Wikidata's).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "source"

# --------------------------------------------------------------------------- images
FLAG_HEIGHT = 200


def _stripes(ratio, colours, vertical):
    from PIL import Image, ImageDraw

    h = FLAG_HEIGHT
    w = round(h * ratio[1] / ratio[0])
    im = Image.new("RGB", (w, h))
    d = ImageDraw.Draw(im)
    n = len(colours)
    for i, c in enumerate(colours):
        if vertical:
            d.rectangle([round(i * w / n), 0, round((i + 1) * w / n) - 1, h - 1], fill=c)
        else:
            d.rectangle([0, round(i * h / n), w - 1, round((i + 1) * h / n) - 1], fill=c)
    return im


def _nordic(units_w, units_h, field, cross, inner=None):
    """Nordic cross: units_w/units_h are the widths of the stripes along each axis.

    For a bordered cross (Norway) ``inner`` = (colour, border units)."""
    from PIL import Image, ImageDraw

    W, H = sum(units_w), sum(units_h)
    s = FLAG_HEIGHT / H
    im = Image.new("RGB", (round(W * s), FLAG_HEIGHT), field)
    d = ImageDraw.Draw(im)
    x0, x1 = units_w[0], units_w[0] + units_w[1]
    y0, y1 = units_h[0], units_h[0] + units_h[1]
    d.rectangle([round(x0 * s), 0, round(x1 * s) - 1, FLAG_HEIGHT - 1], fill=cross)
    d.rectangle([0, round(y0 * s), im.width - 1, round(y1 * s) - 1], fill=cross)
    if inner:
        colour, b = inner
        d.rectangle([round((x0 + b) * s), 0, round((x1 - b) * s) - 1, FLAG_HEIGHT - 1], fill=colour)
        d.rectangle([0, round((y0 + b) * s), im.width - 1, round((y1 - b) * s) - 1], fill=colour)
    return im


def draw_flag(name):
    from PIL import Image, ImageDraw

    W = "#FFFFFF"
    if name == "France":
        return _stripes((2, 3), ["#0055A4", W, "#EF4135"], True)
    if name == "Italy":
        return _stripes((2, 3), ["#009246", W, "#CE2B37"], True)
    if name == "Germany":
        return _stripes((3, 5), ["#000000", "#DD0000", "#FFCE00"], False)
    if name == "Ireland":
        return _stripes((1, 2), ["#169B62", W, "#FF883E"], True)
    if name == "Belgium":
        return _stripes((13, 15), ["#000000", "#FDDA24", "#EF3340"], True)
    if name == "Netherlands":
        return _stripes((2, 3), ["#AE1C28", W, "#21468B"], False)
    if name == "Luxembourg":
        return _stripes((3, 5), ["#EA141D", W, "#51ADDA"], False)
    if name == "Austria":
        return _stripes((2, 3), ["#C8102E", W, "#C8102E"], False)
    if name == "Poland":
        return _stripes((5, 8), [W, "#DC143C"], False)
    if name == "Indonesia":
        return _stripes((2, 3), ["#FF0000", W], False)
    if name == "Monaco":
        return _stripes((4, 5), ["#CE1126", W], False)
    if name == "Romania":
        return _stripes((2, 3), ["#002B7F", "#FCD116", "#CE1126"], True)
    if name == "Chad":
        return _stripes((2, 3), ["#002664", "#FECB00", "#C60C30"], True)
    if name == "Russia":
        return _stripes((2, 3), [W, "#0039A6", "#D52B1E"], False)
    if name == "Hungary":
        return _stripes((1, 2), ["#CE2939", W, "#477050"], False)
    if name == "Japan":  # white field, red disc of 3/5 of the height, centred
        h = FLAG_HEIGHT
        im = Image.new("RGB", (round(h * 1.5), h), W)
        r = 0.3 * h
        cx, cy = im.width / 2, h / 2
        ImageDraw.Draw(im).ellipse([cx - r, cy - r, cx + r, cy + r], fill="#BC002D")
        return im
    if name == "Switzerland":  # square; on a 32-unit grid the cross spans 6..26, arms 6 wide
        h = FLAG_HEIGHT
        u = h / 32
        im = Image.new("RGB", (h, h), "#DA291C")
        d = ImageDraw.Draw(im)
        d.rectangle([round(13 * u), round(6 * u), round(19 * u) - 1, round(26 * u) - 1], fill=W)
        d.rectangle([round(6 * u), round(13 * u), round(26 * u) - 1, round(19 * u) - 1], fill=W)
        return im
    if name == "Denmark":  # 12-4-21 by 12-4-12
        return _nordic([12, 4, 21], [12, 4, 12], "#C8102E", W)
    if name == "Sweden":  # 5-2-9 by 4-2-4
        return _nordic([5, 2, 9], [4, 2, 4], "#006AA7", "#FECC00")
    if name == "Finland":  # 5-3-10 by 4-3-4
        return _nordic([5, 3, 10], [4, 3, 4], W, "#002F6C")
    if name == "Norway":  # 6-4-12 by 6-4-6: white cross 4 wide holding a blue cross 2 wide
        return _nordic([6, 4, 12], [6, 4, 6], "#BA0C2F", W, inner=("#00205B", 1))
    if name == "Czech Republic":  # white over red, blue triangle to half the length
        h = FLAG_HEIGHT
        im = _stripes((2, 3), [W, "#D7141A"], False)
        ImageDraw.Draw(im).polygon([(0, 0), (im.width / 2, h / 2), (0, h)], fill="#11457E")
        return im
    raise KeyError(name)


def perturb(im, seed: int):
    """A query view of an entity image: crop, rotate, colour shift, blur; never the same pixels."""
    from PIL import Image, ImageEnhance, ImageFilter

    rng = random.Random(seed)
    im = im.convert("RGB")
    w, h = im.size
    f = rng.uniform(0.78, 0.9)
    cw, ch = int(w * f), int(h * f)
    x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
    im = im.crop((x, y, x + cw, y + ch))
    angle = rng.choice([-1, 1]) * rng.uniform(4, 9)
    im = im.rotate(angle, resample=Image.BICUBIC, expand=True, fillcolor=(rng.randint(90, 200),) * 3)
    im = ImageEnhance.Brightness(im).enhance(rng.uniform(0.8, 1.15))
    im = ImageEnhance.Color(im).enhance(rng.uniform(0.75, 1.25))
    im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0.6, 1.2)))
    target = rng.randint(300, 380)
    im = im.resize((target, max(8, round(im.height * target / im.width))), Image.LANCZOS)
    return im



# --------------------------------------------------------------------------- build
# A label shared by look-alike entities means this one in facts.tsv/questions.tsv; the others by QID.
PREFERRED = {"Paris": "Q90"}

def _rows(name: str):
    """The rows of ``source/<name>.tsv`` as lists of stripped cells; ``#`` lines and blank lines skipped."""
    for line in (SOURCE / f"{name}.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            yield [c.strip() for c in line.split("\t")]


def parse():
    relations = {}
    for pid, label, aliases in _rows("relations"):
        assert pid not in relations, f"duplicate relation {pid}"
        relations[pid] = (label, [a for a in aliases.split(";") if a])
    entities = {}
    for qid, label, aliases, desc, conf in _rows("entities"):
        assert qid not in entities, f"duplicate entity {qid}"
        entities[qid] = dict(label=label, aliases=[a for a in aliases.split(";") if a], desc=desc,
                             uncertain=conf == "?")
    by_label: dict[str, list[str]] = {}
    for qid, e in entities.items():
        by_label.setdefault(e["label"], []).append(qid)

    def resolve(x):
        if x in entities:
            return x
        ids = by_label.get(x, [])
        if len(ids) > 1 and x in PREFERRED:
            return PREFERRED[x]
        if len(ids) != 1:
            raise SystemExit(f"cannot resolve {x!r}: {ids or 'no such label'}")
        return ids[0]

    facts, seen = [], set()
    for h, p, t in _rows("facts"):
        assert p in relations, p
        tri = (resolve(h), p, resolve(t))
        if tri in seen:
            raise SystemExit(f"duplicate fact {h}|{p}|{t}")
        seen.add(tri)
        facts.append(tri)
    return relations, entities, facts, resolve


def build() -> None:
    import json

    import numpy as np
    from PIL import Image
    import skimage.data

    relations, entities, facts, resolve = parse()
    used = {e for h, _, t in facts for e in (h, t)}
    unused = sorted(set(entities) - used)
    if unused:
        raise SystemExit(f"entities without facts: {unused}")

    def tsv(name, rows):
        with open(HERE / name, "w", encoding="utf-8", newline="\n") as fh:
            for r in rows:
                fh.write("\t".join(r) + "\n")

    tsv("wikidata5m_relation.txt", ([pid, lab, *al] for pid, (lab, al) in relations.items()))
    tsv("wikidata5m_entity.txt", ([q, e["label"], *e["aliases"]] for q, e in entities.items()))
    tsv("wikidata5m_text.txt", ([q, f"{e['label']}, {e['desc']}."] for q, e in entities.items()))

    # questions first: their gold edges stay in the train split
    qrows, gold = [], set()
    for qid_, stem, text, path in _rows("questions"):
        edges = []
        for edge in path.split(";"):
            h, p, t = edge.split(">")
            tri = (resolve(h), p, resolve(t))
            if tri not in set(facts):
                raise SystemExit(f"{qid_}: gold edge {edge} is not a fact")
            edges.append(list(tri))
            gold.add(tri)
        ans = entities[edges[-1][2]]
        topic = edges[0][0]
        row = {"id": qid_}
        if stem:
            row["image"] = f"queries/{stem}.jpg"
        row.update(question=text, answer=ans["label"], answer_id=edges[-1][2], aliases=ans["aliases"],
                   hops=len(edges), topic={"id": topic, "label": entities[topic]["label"]}, path=edges)
        qrows.append(row)
    with open(HERE / "questions.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        for r in qrows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")

    # transductive split: valid/test hold a few facts whose entities also occur in train
    rng = random.Random(5)
    order = list(range(len(facts)))
    rng.shuffle(order)
    held: dict[str, list] = {"valid": [], "test": []}
    train_idx = set(range(len(facts)))
    for i in order:
        tri = facts[i]
        if tri in gold:
            continue
        rest = [facts[j] for j in train_idx if j != i]
        ents = {e for h, _, t in rest for e in (h, t)}
        if tri[0] in ents and tri[2] in ents:
            split = "valid" if len(held["valid"]) <= len(held["test"]) else "test"
            held[split].append(tri)
            train_idx.discard(i)
            if len(held["valid"]) + len(held["test"]) >= 30:
                break
    tsv("wikidata5m_transductive_train.txt", (list(facts[i]) for i in sorted(train_idx)))
    tsv("wikidata5m_transductive_valid.txt", (list(t) for t in held["valid"]))
    tsv("wikidata5m_transductive_test.txt", (list(t) for t in held["test"]))

    # images
    (HERE / "images").mkdir(exist_ok=True)
    (HERE / "queries").mkdir(exist_ok=True)
    links = []
    for fn, qid, stem, _ in _rows("photos"):
        arr = getattr(skimage.data, fn)()
        im = Image.fromarray(arr if arr.dtype == np.uint8 else (arr * 255).astype(np.uint8)).convert("RGB")
        if max(im.size) > 512:
            im.thumbnail((512, 512), Image.LANCZOS)
        im.save(HERE / "images" / f"{stem}.jpg", quality=88)
        links.append((qid, f"images/{stem}.jpg", stem, im))
    for name, qid in _rows("flags"):
        stem = "flag_" + name.lower().replace(" ", "_")
        im = draw_flag(name)
        im.save(HERE / "images" / f"{stem}.png", optimize=True)
        links.append((qid, f"images/{stem}.png", stem, im))
    for qid, rel, stem, im in links:
        assert qid in entities, qid
        seed = sum(ord(c) for c in stem)
        perturb(im, seed).save(HERE / "queries" / f"{stem}.jpg", quality=rng.randint(55, 75))
    tsv("entity_images.tsv", ([q, rel] for q, rel, _, _ in links))

    n_unc = sum(e["uncertain"] for e in entities.values())
    print(f"{len(entities)} entities ({n_unc} with uncertain QIDs), {len(relations)} relations, "
          f"{len(facts)} facts (train {len(train_idx)}, valid {len(held['valid'])}, test {len(held['test'])}), "
          f"{len(links)} entity images, {len(qrows)} questions")


if __name__ == "__main__":
    if "--uncertain" in sys.argv:  # for README.md: the QIDs not known for certain
        _, ents, _, _ = parse()
        for q, e in ents.items():
            if e["uncertain"]:
                print(f"{q} {e['label']}")
    else:
        build()
