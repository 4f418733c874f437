"""Entity images (Wikidata P18-style) for Wikidata5M entities.

Two sources, both optional:

* an images folder holding ``<QID>.<jpg|jpeg|png|webp>`` files (``--images DIR``);
* an ``entity_images.tsv`` in the Wikidata5M folder: ``QID<TAB>relative/path`` per line,
  the path relative to the folder holding the TSV.

Every file is validated with ``kgqa.core.images.load_image`` (Pillow, size and pixel
limits), content-addressed by sha256, and stored as
``(:Image {sha256, path (absolute), width, height, mime})-[:DEPICTS]->(:Entity)``.
Validation happens for all images before anything is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from kgqa.core.errors import InvalidInput, cap_repr
from kgqa.core.ids import QID
from kgqa.core.images import IMAGE_SUFFIXES, load_image

ENTITY_IMAGES_TSV = "entity_images.tsv"


@dataclass(frozen=True)
class ImageRef:
    """One claimed image of an entity, and where the claim comes from (for error messages)."""

    entity: str
    path: Path
    where: str  # "file" or "tsv:line"


@dataclass(frozen=True)
class EntityImage:
    """A validated image ready to write."""

    entity: str
    sha256: str
    path: str
    width: int
    height: int
    mime: str

    def row(self) -> dict:
        return {"entity": self.entity, "sha256": self.sha256, "path": self.path,
                "width": self.width, "height": self.height, "mime": self.mime}


def discover(images_dir: Path | None, tsv: Path | None,
             reject: Callable[[str, str, str], None]) -> list[ImageRef]:
    """Image references from a folder of ``<QID>.<ext>`` files and/or an entity_images.tsv.

    ``reject(where, why, raw)`` is called for a bad reference; in strict mode it raises.
    """
    refs: list[ImageRef] = []
    if images_dir is not None:
        d = Path(images_dir)
        if not d.is_dir():
            raise InvalidInput(f"{d}: images folder not found")
        for p in sorted(d.iterdir()):
            if not p.is_file() or p.name.startswith("."):
                continue
            if p.suffix.lower() not in IMAGE_SUFFIXES:
                continue  # README files and the like are not images
            if not p.resolve().is_relative_to(d.resolve()):  # a symlink pointing out of the folder
                reject(str(p), f"image file links outside the folder {d}", p.name)
                continue
            if not QID.match(p.stem):
                reject(str(p), f"image file name {cap_repr(p.stem)} is not a Wikidata entity id (Q followed by digits)",
                       p.name)
                continue
            refs.append(ImageRef(p.stem, p, str(p)))
    if tsv is not None and Path(tsv).is_file():
        base = Path(tsv).parent
        with open(tsv, "rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                where = f"{tsv}:{lineno}"
                try:
                    line = raw.decode("utf-8").rstrip("\r\n")
                except UnicodeDecodeError as e:
                    reject(where, f"encoding: not UTF-8 (byte {e.start})", raw.decode("utf-8", "replace"))
                    continue
                if not line.strip():
                    continue
                cols = line.split("\t")
                if len(cols) != 2:
                    reject(where, f"column count: expected 2 (QID<TAB>path), got {len(cols)}", line)
                    continue
                qid, rel = cols[0].strip(), cols[1].strip()
                if not QID.match(qid):
                    reject(where, f"id syntax: {cap_repr(qid)} is not a Wikidata entity id", line)
                    continue
                p = Path(rel)
                if not p.is_absolute():
                    p = base / p
                # a path may not leave the folder holding the TSV (``../../etc/passwd``, an
                # absolute path elsewhere): refused before anything opens it
                if not p.resolve().is_relative_to(base.resolve()):
                    reject(where, f"image path {cap_repr(rel)} leaves the folder {base}", line)
                    continue
                refs.append(ImageRef(qid, p, where))
    return refs


def validate(refs: Iterable[ImageRef], known: Callable[[str], bool],
             reject: Callable[[str, str, str], None],
             skip_unknown: bool = False) -> tuple[list[EntityImage], int]:
    """Open and check every referenced image; returns (valid images, skipped for unloaded entities).

    An image of an entity that is not in the entity catalogue is a dangling reference
    (rejected) unless ``skip_unknown`` (a ``--limit`` run loads a subset of entities).
    """
    out: list[EntityImage] = []
    skipped = 0
    seen: set[tuple[str, str]] = set()
    for ref in refs:
        if not known(ref.entity):
            if skip_unknown:
                skipped += 1
                continue
            reject(ref.where, f"dangling entity: {ref.entity} is not in the entity file", str(ref.path))
            continue
        try:
            img = load_image(ref.path)
        except InvalidInput as e:
            msg = str(e)
            reject(ref.where, msg if ref.where == str(ref.path) else f"image: {msg}", str(ref.path))
            continue
        key = (img.sha256, ref.entity)
        if key in seen:
            continue
        seen.add(key)
        out.append(EntityImage(ref.entity, img.sha256, str(img.path), img.width, img.height, img.mime))
    return out, skipped


def write(graph, images: list[EntityImage], batch_size: int = 1000) -> int:
    """MERGE the images and their DEPICTS links; returns links written."""
    n = 0
    for i in range(0, len(images), batch_size):
        rows = [im.row() for im in images[i:i + batch_size]]
        res = graph.write("load_images", rows=rows)
        n += res[0]["written"] if res else 0
    return n
