"""The Wikidata5M release's files: where they are, their lines read a block at a time, and each
line parsed into a row, or the reason it is bad (the rules every loader path applies)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from kgqa.core.errors import InvalidInput, cap_repr
from kgqa.core.ids import PID, QID
from kgqa.core.kg import label_keys
from kgqa.loaders import images as entity_images

ENTITY_FILE = "wikidata5m_entity.txt"
RELATION_FILE = "wikidata5m_relation.txt"
TEXT_FILE = "wikidata5m_text.txt"
ALL_TRIPLES_FILE = "wikidata5m_all_triplet.txt"
SPLITS = ("train", "valid", "test")

#: The longest id accepted (Wikidata's are under 12 characters); a longer one is a bad line.
MAX_ID_CHARS = 32
#: The longest label accepted, in UTF-8 bytes. Labels are indexed (``entity_name``) and ids are
#: constraint-backed; Neo4j refuses an index key over ~8 KB ("Property value is too large to
#: index") in the middle of a write, so validation rejects such a line first, with room to spare.
MAX_LABEL_BYTES = 4096
#: The longest alias kept, in UTF-8 bytes. Every alias becomes a term of the ``entity_label_keys``
#: full-text index, and a term over Lucene's 32,766 bytes makes Neo4j panic after the commit (the
#: database stops until a restart, then the index is FAILED); a label key is at most 1.5x its alias
#: (lower-casing), so 4 KB keeps every key far below that term limit.
MAX_ALIAS_BYTES = 4096
#: The most bytes of one line's label and aliases together (the node's ``aliases`` and ``label_keys``
#: lists): aliases past it are not kept.
MAX_NAMES_BYTES = 65_536
#: The longest description kept, in UTF-8 bytes (not indexed, but every question that reads the
#: entity carries it into a prompt; Wikidata5M's longest are a few KB).
MAX_DESCRIPTION_BYTES = 65_536


# --------------------------------------------------------------------------- files
@dataclass
class Wikidata5mFiles:
    entity: Path
    relation: Path
    triples: list[Path]
    text: Path | None
    images_tsv: Path | None


def _find(root: Path, name: str) -> Path | None:
    direct = root / name
    if direct.is_file():
        return direct
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        if (sub / name).is_file():
            return sub / name
    return None


def find_files(path: str | Path, splits: tuple[str, ...] = SPLITS) -> Wikidata5mFiles:
    """Locate the release's files in ``path`` (or one folder below); InvalidInput names what is missing."""
    root = Path(path)
    if not root.is_dir():
        raise InvalidInput(f"{root}: Wikidata5M folder not found")
    bad = [s for s in splits if s not in SPLITS]
    if bad or not splits:
        raise InvalidInput(f"--splits {','.join(splits)!r}: each split must be one of {', '.join(SPLITS)}")
    entity, relation = _find(root, ENTITY_FILE), _find(root, RELATION_FILE)
    for name, found in ((ENTITY_FILE, entity), (RELATION_FILE, relation)):
        if found is None:
            raise InvalidInput(f"{root}: no {name} (from the wikidata5m_alias archive)")
    triples: list[Path] = []
    for setting in ("transductive", "inductive"):
        found = {s: _find(root, f"wikidata5m_{setting}_{s}.txt") for s in splits}
        if any(found.values()):
            missing = [f"wikidata5m_{setting}_{s}.txt" for s, p in found.items() if p is None]
            if missing:
                raise InvalidInput(f"{root}: no {', '.join(missing)} (asked for by --splits)")
            triples = [found[s] for s in splits]
            break
    if not triples:
        all_triples = _find(root, ALL_TRIPLES_FILE)
        if all_triples is None:
            raise InvalidInput(f"{root}: no triple files (wikidata5m_transductive_train.txt, "
                               f"wikidata5m_inductive_train.txt or {ALL_TRIPLES_FILE})")
        triples = [all_triples]
    return Wikidata5mFiles(entity=entity, relation=relation, triples=triples,
                           text=_find(root, TEXT_FILE), images_tsv=_find(root, entity_images.ENTITY_IMAGES_TSV))


# --------------------------------------------------------------------------- line parsing
BLOCK_BYTES = 1 << 22    # input lines are decoded about 4 MB at a time


def read_lines(path: Path) -> Iterator[tuple[int, str | None, str, bytes]]:
    """(line number, text or None, why-not-text, raw) for every non-blank line.

    Lines are decoded a block at a time (about 4 MB); only a block that is not valid UTF-8 is
    decoded line by line, to name the bad line. ``raw`` is the undecoded line for a line that is
    not text, else empty."""
    lineno = 0
    with open(path, "rb") as fh:
        while True:
            block = fh.readlines(BLOCK_BYTES)
            if not block:
                return
            try:
                texts = b"".join(block).decode("utf-8").split("\n")
            except UnicodeDecodeError:
                texts = None
            if texts is not None:
                if texts[-1] == "":     # the block's last line ended with a newline
                    texts.pop()
                for text in texts:
                    lineno += 1
                    text = text.rstrip("\r")
                    if text.strip():
                        yield lineno, text, "", b""
                continue
            for raw in block:
                lineno += 1
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    yield lineno, None, f"encoding: not valid UTF-8 (byte {e.start} of the line)", raw
                    continue
                text = text.rstrip("\r\n")
                if text.strip():
                    yield lineno, text, "", raw


def _names(cols: list[str]) -> tuple[str, list[str], str]:
    """(label, aliases kept, why some were not kept or "") of a catalogue line's columns."""
    label = cols[1].strip()
    aliases: list[str] = []
    seen = {label}
    total = len(label.encode("utf-8"))
    long_alias = over_total = 0
    for a in cols[2:]:
        a = a.strip()
        if a and a not in seen:
            seen.add(a)
            size = len(a.encode("utf-8"))
            if size > MAX_ALIAS_BYTES:
                long_alias = max(long_alias, size)
                continue
            if total + size > MAX_NAMES_BYTES:
                over_total += 1
                continue
            total += size
            aliases.append(a)
    why = ""
    if long_alias:
        why = (f"alias too long: {long_alias:,} bytes (limit {MAX_ALIAS_BYTES:,}, aliases are "
               "full-text index terms)")
    elif over_total:
        why = (f"aliases too long: {over_total:,} alias(es) past {MAX_NAMES_BYTES:,} bytes of label and "
               "aliases")
    return label, aliases, why


def parse_catalogue_line(text: str, id_rule: re.Pattern, kind: str, keys: bool = True) -> tuple[dict | None, str]:
    """``ID<TAB>label<TAB>alias…`` → ({id, name, aliases, label_keys}, "") or (None, why); ``label_keys``
    (kgqa.core.kg.label_keys) are what entity linking looks labels up by (left out with ``keys=False``:
    validation does not need them).

    A row AND a why: the line is usable without the aliases over ``MAX_ALIAS_BYTES`` /
    ``MAX_NAMES_BYTES``, which the row leaves out; ``--strict`` refuses the line with that why,
    ``--lenient`` loads the row and counts it."""
    cols = text.split("\t")
    if len(cols) < 2:
        return None, f"column count: expected {kind}<TAB>label[<TAB>alias…], got 1 column"
    ident = cols[0].strip()
    if len(ident) > MAX_ID_CHARS:
        return None, f"id syntax: {cap_repr(ident, 40)} is longer than {MAX_ID_CHARS} characters"
    if not id_rule.match(ident):
        return None, f"id syntax: {cap_repr(ident)} is not a Wikidata {kind}"
    label, aliases, trimmed = _names(cols)
    if not label:
        return None, f"empty label for {ident}"
    size = len(label.encode("utf-8"))
    if size > MAX_LABEL_BYTES:
        return None, f"label too long: {size:,} bytes for {ident} (limit {MAX_LABEL_BYTES:,}, Neo4j indexes labels)"
    row = {"id": ident, "name": label, "aliases": aliases}
    if keys:
        row["label_keys"] = label_keys(label, aliases)
    return row, (f"{trimmed} for {ident}" if trimmed else "")


def parse_triple_line(text: str, relations: set[str] | dict, entities: set[str]) -> tuple[tuple | None, str]:
    """``head<TAB>PID<TAB>tail`` → ((h, r, t), "") or (None, why)."""
    cols = text.split("\t")
    if len(cols) == 3 and cols[1] in relations and cols[0] in entities and cols[2] in entities:
        return (cols[0], cols[1], cols[2]), ""   # ids found in the catalogues passed their id rules there
    if len(cols) != 3:
        return None, f"column count: expected 3 (head<TAB>relation<TAB>tail), got {len(cols)}"
    h, r, t = (c.strip() for c in cols)
    for ident, rule, what in ((h, QID, "head entity id"), (r, PID, "relation id"), (t, QID, "tail entity id")):
        if len(ident) > MAX_ID_CHARS:
            return None, f"id syntax: {what} {cap_repr(ident, 40)} is longer than {MAX_ID_CHARS} characters"
        if not rule.match(ident):
            return None, f"id syntax: {what} {cap_repr(ident)}"
    if r not in relations:
        return None, f"unknown relation: {r} is not in {RELATION_FILE}"
    for ident in (h, t):
        if ident not in entities:
            return None, f"dangling entity: {ident} is not in {ENTITY_FILE}"
    return (h, r, t), ""


def parse_text_line(text: str) -> tuple[dict | None, str]:
    """``QID<TAB>description`` → ({id, description}, "") or (None, why); a row AND a why: the
    description was cut to ``MAX_DESCRIPTION_BYTES`` (``--strict`` refuses the line, ``--lenient``
    loads the cut one and counts it)."""
    cols = text.split("\t", 1)
    if len(cols) != 2:
        return None, "column count: expected 2 (QID<TAB>description), got 1"
    ident = cols[0].strip()
    if len(ident) > MAX_ID_CHARS or not QID.match(ident):
        return None, f"id syntax: {cap_repr(ident)} is not a Wikidata entity id"
    desc = cols[1].strip()
    size = len(desc.encode("utf-8"))
    if size > MAX_DESCRIPTION_BYTES:
        cut = desc.encode("utf-8")[:MAX_DESCRIPTION_BYTES].decode("utf-8", "ignore")
        return {"id": ident, "description": cut}, (f"description too long: {size:,} bytes for {ident} "
                                                    f"(limit {MAX_DESCRIPTION_BYTES:,})")
    return {"id": ident, "description": desc}, ""
