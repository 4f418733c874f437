"""Load illustrated documents as per-document multimodal KGs in Neo4j (mKG-RAG, Section 3.1).

mKG-RAG: "mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation
for Knowledge-intensive VQA". Inputs (``kgqa load documents DIR``):

* Markdown (``.md``/``.markdown``) and HTML (``.html``/``.htm``) files; images referenced by
  relative path (``![alt](images/x.png)``, ``<img src alt>``), never fetched from a URL.
  HTML is parsed with the standard library's ``html.parser`` as text: ``<script>`` and
  ``<style>`` content is dropped, nothing is ever executed.
* E-VQA knowledge-base JSON lines (``.jsonl``): ``{url: {title, section_titles, section_texts,
  image_urls, image_section_indices, image_reference_descriptions}}`` per line; images are
  resolved by the URL's file name in ``--images DIR`` (URLs are never fetched).

The pipeline per document, top to bottom:

1. **validate** every input file first (UTF-8, size limit, images readable): ``--strict``
   (default) stops at the first problem with one line naming the file (and line), before
   anything is written; ``--lenient`` skips and counts it (a missing image drops that image).
2. **segment** (3.1): sections with images are kept whole; runs of sections without images
   are merged up to ``chunk_tokens`` tokens and longer ones split at sentence ends. Tokens are
   counted with the local LLM's tokenizer (SmolLM2's). Nothing is dropped (the reference code
   drops a trailing text section under 200 tokens and splits image sections over 500; the
   paper keeps image sections whole, and so do we).
3. **textual graph** (3.1.1): per segment, the ChatModel's structured output (``TextGraph``:
   entities {name, type, description}, relations {head, tail, summary}).
4. **visual graph** (3.1.2): per image, objects {category, normalised bbox} and binary relations
   {subject, predicate, object}, asked of the VisionModel (a VLM over vLLM in production). On a
   CPU machine (``KGQA_VISION_BACKEND=local``) no scene-graph or VLM weights exist: the
   **stand-in** makes the whole image the one object (bbox 0,0,1,1), its category the image's
   alt text, with no relations. It is named ``whole-image stand-in`` in the report and on
   every Region it produces (``stand_in: true``).
5. **vision-text matching** (3.1.3, Eq. 1): the VisionModel gets the image, both graphs in text
   form and an exemplar; a matched object becomes a ``(:Region {bbox})-[:DEPICTS]->`` of its
   entity; a matched relation gets the union of its two boxes as ``region_bbox``.
6. **merge** identical entities (same name, case-insensitive) and relations (same head and tail)
   within the document only: each document is its own KG.
7. **embed** (all-MiniLM-L6-v2): entities (name + description), relations (head, tail, summary),
   chunks, documents (title, image captions, text), into the Neo4j vector indexes.
8. **link** (beyond the paper): ``(:DocEntity)-[:SAME_AS {score}]->(:Entity)`` when name,
   aliases and description agree with a Wikidata entity above ``link_threshold``.
9. **write** the whole document in ONE transaction, which first removes the previous version of
   the document and ends by storing its content hash. A document whose stored hash equals the
   new one is skipped; a changed one is replaced exactly; a killed ingestion leaves either the
   old or the new version, never a mix, and the rerun redoes only what was not committed.

A model reply that does not fit the schema (``BadModelReply``) costs that step only: the
segment gets no textual graph, the image no matches; each is counted as a fallback in the
report. ``ModelUnavailable`` (the model cannot be reached) stops the load.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import unicodedata
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable
from urllib.parse import unquote, urlparse

from kgqa.core.errors import BadModelReply, InvalidInput
from kgqa.models.gguf import llm_token_counter

#: bump when segmentation, prompts or the stored shape change: every document is re-extracted
EXTRACTOR_VERSION = "mkgrag-docs-2"
DOC_SUFFIXES = (".md", ".markdown", ".html", ".htm")
EVQA_SUFFIXES = (".jsonl",)
MAX_DOC_BYTES = 5 * 1024 * 1024      # a single document file over 5 MB is refused (or skipped)
STAND_IN = "whole-image stand-in"


# --------------------------------------------------------------------------- options & report
@dataclass
class DocOptions:
    chunk_tokens: int = 300            # the fixed chunk size for sections without images (3.1)
    strict: bool = True
    link: bool = True                  # SAME_AS links to Wikidata entities
    link_threshold: float = 0.8
    link_candidates: int = 5
    max_bytes: int = MAX_DOC_BYTES
    extract_max_tokens: int = 200
    progress: bool = False
    images: Path | None = None         # E-VQA: folder holding the images named by their URL's file name
    only: tuple[str, ...] = ()         # load only these document ids (tests, benchmarks)


@dataclass
class DocResult:
    id: str
    source: str
    status: str                        # written | replaced | unchanged | skipped | failed
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    regions: int = 0
    same_as: int = 0
    reason: str = ""


@dataclass
class DocReport:
    path: str
    documents: list[DocResult] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)       # seconds per stage
    fallbacks: dict[str, int] = field(default_factory=dict)      # "text_graph:schema" -> n
    skipped: dict[str, int] = field(default_factory=dict)        # reason -> n (lenient)
    dropped_ungrounded: int = 0
    visual: str = ""
    seconds: float = 0.0
    torch_threads: int | None = None
    chat: str = ""

    def stage(self, name: str, seconds: float) -> None:
        self.stages[name] = self.stages.get(name, 0.0) + seconds

    def count(self, status: str) -> int:
        return sum(1 for d in self.documents if d.status == status)

    def as_dict(self) -> dict:
        done = [d for d in self.documents if d.status in ("written", "replaced")]
        minutes = self.seconds / 60 if self.seconds > 0 else 0
        return {
            "path": self.path, "seconds": round(self.seconds, 2), "torch_threads": self.torch_threads,
            "chat": self.chat, "visual": self.visual,
            "documents": [d.__dict__ for d in self.documents],
            "written": self.count("written"), "replaced": self.count("replaced"),
            "unchanged": self.count("unchanged"), "skipped_documents": self.count("skipped"),
            "chunks": sum(d.chunks for d in done), "entities": sum(d.entities for d in done),
            "relations": sum(d.relations for d in done), "regions": sum(d.regions for d in done),
            "same_as": sum(d.same_as for d in done),
            "documents_per_min": round(len(done) / minutes, 2) if minutes else None,
            "chunks_per_min": round(sum(d.chunks for d in done) / minutes, 2) if minutes else None,
            "stages": {k: round(v, 2) for k, v in self.stages.items()},
            "fallbacks": dict(self.fallbacks), "skipped": dict(self.skipped),
            "dropped_ungrounded": self.dropped_ungrounded,
        }


# --------------------------------------------------------------------------- parsed documents
@dataclass
class DocImage:
    path: Path
    alt: str
    sha256: str
    width: int
    height: int
    mime: str
    data: object = None                # kgqa.models.base.ImageInput (for the VisionModel)


@dataclass
class Section:
    heading: str
    text: str
    images: list[DocImage] = field(default_factory=list)


@dataclass
class ParsedDocument:
    id: str
    title: str
    source: str
    format: str                        # markdown | html | evqa
    sections: list[Section]
    raw: bytes
    content_hash: str = ""

    @property
    def images(self) -> list[DocImage]:
        return [im for s in self.sections for im in s.images]


@dataclass
class Chunk:
    id: str
    order: int
    text: str
    sections: list[str]
    tokens: int
    images: list[DocImage]


# --------------------------------------------------------------------------- ids and hashes
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def document_id(rel_path: str) -> str:
    """A readable, stable id from the path relative to the loaded folder (``falcon_9.md`` → ``falcon_9``)."""
    stem = rel_path.rsplit(".", 1)[0] if "." in Path(rel_path).name else rel_path
    return _SLUG.sub("-", stem.replace("/", "--")).strip("-") or "doc"


def name_key(name: str) -> str:
    """The identity of an entity name within one document: NFKC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split()).strip(" .,:;\"'")


def content_hash(doc: ParsedDocument, options: DocOptions) -> str:
    h = hashlib.sha256()
    h.update(EXTRACTOR_VERSION.encode())
    h.update(f"chunk_tokens={options.chunk_tokens}".encode())
    h.update(doc.raw)
    for im in doc.images:
        h.update(im.sha256.encode())
    return h.hexdigest()


# --------------------------------------------------------------------------- parsing
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


@dataclass
class RawImage:
    ref: str
    alt: str


def parse_markdown(text: str) -> tuple[str | None, list[tuple[str, str, list[RawImage]]]]:
    """(title, [(heading, text, images)]): ``#`` is the title; every heading starts a section."""
    title = None
    sections: list[tuple[str, list[str], list[RawImage]]] = []
    cur: tuple[str, list[str], list[RawImage]] = ("", [], [])
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m:
            level, heading = len(m.group(1)), m.group(2).strip()
            if level == 1 and title is None and not sections and not "".join(cur[1]).strip():
                title = heading
                continue
            if "".join(cur[1]).strip() or cur[2] or cur[0]:
                sections.append(cur)
            cur = (heading, [], [])
            continue
        imgs = [RawImage(m.group(2), m.group(1).strip()) for m in _MD_IMAGE.finditer(line)]
        cur[2].extend(imgs)
        rest = _MD_IMAGE.sub(lambda m: m.group(1), line) if imgs else line
        cur[1].append(rest)
    if "".join(cur[1]).strip() or cur[2] or cur[0]:
        sections.append(cur)
    return title, [(h, _clean("\n".join(lines)), imgs) for h, lines, imgs in sections]


def _clean(text: str) -> str:
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    return "\n\n".join(p for p in paras if p)


class _HTMLSections(HTMLParser):
    """Text, headings and images of an HTML page. Never executes anything: ``<script>``,
    ``<style>``, ``<template>`` and ``<noscript>`` content is skipped as data."""

    SKIP = {"script", "style", "template", "noscript", "iframe", "object"}
    BLOCK = {"p", "div", "br", "li", "tr", "section", "article", "blockquote", "pre", "table", "ul", "ol"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title: str | None = None          # the first <h1>, else <title>
        self.page_title: str | None = None
        self.sections: list[tuple[str, list[str], list[RawImage]]] = []
        self._cur: tuple[str, list[str], list[RawImage]] = ("", [], [])
        self._skip = 0
        self._in_title = False
        self._heading: list[str] | None = None
        self._heading_level = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self._skip += 1
            return
        if self._skip:
            return
        a = dict(attrs)
        if tag == "title":
            self._in_title = True
        elif re.fullmatch(r"h[1-6]", tag):
            self._heading, self._heading_level = [], int(tag[1])
        elif tag == "img" and a.get("src"):
            self._cur[2].append(RawImage(a["src"], (a.get("alt") or "").strip()))
        elif tag in self.BLOCK:
            self._cur[1].append("\n\n")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag in self.SKIP:
            self._skip -= 1

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if self._skip:
            return
        if tag == "title":
            self._in_title = False
        elif re.fullmatch(r"h[1-6]", tag) and self._heading is not None:
            heading = " ".join("".join(self._heading).split())
            self._heading = None
            if self._heading_level == 1 and self.title is None:
                self.title = heading
                return
            if "".join(self._cur[1]).strip() or self._cur[2] or self._cur[0]:
                self.sections.append(self._cur)
            self._cur = (heading, [], [])
        elif tag in self.BLOCK:
            self._cur[1].append("\n\n")

    def handle_data(self, data):
        if self._skip:
            return
        if self._in_title:
            self.page_title = self.page_title or " ".join(data.split())
        elif self._heading is not None:
            self._heading.append(data)
        else:
            self._cur[1].append(data)

    def result(self):
        if "".join(self._cur[1]).strip() or self._cur[2] or self._cur[0]:
            self.sections.append(self._cur)
        return self.title or self.page_title, [(h, _clean("".join(parts)), imgs) for h, parts, imgs in self.sections]


def parse_html(text: str):
    p = _HTMLSections()
    p.feed(text)
    p.close()
    return p.result()


# --------------------------------------------------------------------------- discovery + validation
class _Rejects:
    """Strict: raise at the first problem. Lenient: count by reason and go on."""

    def __init__(self, strict: bool, report: DocReport):
        self.strict = strict
        self.report = report

    def __call__(self, where: str, why: str, reason: str) -> None:
        if self.strict:
            raise InvalidInput(f"{where}: {why}")
        self.report.skipped[reason] = self.report.skipped.get(reason, 0) + 1


def _resolve_image(base: Path, ref: str, where: str, alt: str, reject: _Rejects) -> DocImage | None:
    from kgqa.core.images import load_image

    if re.match(r"^[a-z][a-z0-9+.-]*:", ref, re.I) and not ref.lower().startswith("file:"):
        reject(where, f"image {ref!r} is a URL; images are read from local files only, never fetched",
               "image URL")
        return None
    p = Path(unquote(ref.removeprefix("file://")))
    if not p.is_absolute():
        p = (base / p)
    try:
        img = load_image(p)
    except InvalidInput as e:
        reason = "missing image" if "not found" in str(e) else "bad image"
        reject(where, f"image: {e}", reason)
        return None
    return DocImage(path=img.path, alt=alt, sha256=img.sha256, width=img.width, height=img.height,
                    mime=img.mime, data=img)


def _read_text(path: Path, options: DocOptions, reject: _Rejects, what: str = "document") -> tuple[str, bytes] | None:
    try:
        size = path.stat().st_size
    except OSError as e:
        reject(str(path), f"cannot read {what} ({e.strerror})", "unreadable")
        return None
    if size > options.max_bytes:
        reject(str(path), f"{what} is {size / 1e6:.1f} MB, over the {options.max_bytes / 1e6:.0f} MB limit",
               "too large")
        return None
    try:
        raw = path.read_bytes()
    except OSError as e:
        reject(str(path), f"cannot read {what} ({e.strerror})", "unreadable")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        reject(f"{path}:{line}", f"not UTF-8 (byte {e.start})", "not UTF-8")
        return None
    return text, raw


def parse_file(path: Path, rel: str, options: DocOptions, reject: _Rejects) -> ParsedDocument | None:
    """One Markdown/HTML file as a ParsedDocument (images validated), or None when rejected (lenient)."""
    read = _read_text(path, options, reject)
    if read is None:
        return None
    text, raw = read
    fmt = "html" if path.suffix.lower() in (".html", ".htm") else "markdown"
    title, parts = parse_html(text) if fmt == "html" else parse_markdown(text)
    sections: list[Section] = []
    for heading, body, raws in parts:
        imgs = []
        for ri in raws:
            im = _resolve_image(path.parent, ri.ref, str(path), ri.alt, reject)
            if im is not None:
                imgs.append(im)
        if body or imgs:
            sections.append(Section(heading, body, imgs))
    if not sections:
        reject(str(path), "no text in the document", "empty")
        return None
    return ParsedDocument(id=document_id(rel), title=title or Path(rel).stem.replace("_", " "), source=str(path),
                          format=fmt, sections=sections, raw=raw)


def parse_evqa(path: Path, options: DocOptions, reject: _Rejects) -> list[ParsedDocument]:
    """The E-VQA knowledge base shape, one JSON object per line mapping url → article."""
    out: list[ParsedDocument] = []
    try:
        fh = open(path, "rb")
    except OSError as e:
        reject(str(path), f"cannot read the knowledge base ({e.strerror})", "unreadable")
        return out
    with fh:
        for lineno, rawline in enumerate(fh, 1):
            where = f"{path}:{lineno}"
            if len(rawline) > options.max_bytes:
                reject(where, f"article is {len(rawline) / 1e6:.1f} MB, over the {options.max_bytes / 1e6:.0f} MB "
                       "limit", "too large")
                continue
            try:
                line = rawline.decode("utf-8").strip()
            except UnicodeDecodeError as e:
                reject(where, f"not UTF-8 (byte {e.start})", "not UTF-8")
                continue
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                reject(where, f"not JSON ({e})", "bad JSON")
                continue
            if not isinstance(obj, dict):
                reject(where, "expected an object {url: article}", "bad shape")
                continue
            for url, art in obj.items():
                doc = _evqa_article(url, art, where, rawline, options, reject)
                if doc is not None:
                    out.append(doc)
    return out


def _evqa_article(url, art, where, rawline, options, reject) -> ParsedDocument | None:
    if not isinstance(art, dict):
        reject(where, f"{url}: the article is not an object", "bad shape")
        return None
    titles, texts = art.get("section_titles"), art.get("section_texts")
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        reject(where, f"{url}: field section_texts must be a list of strings", "bad shape")
        return None
    titles = titles if isinstance(titles, list) else [""] * len(texts)
    if len(titles) != len(texts):
        reject(where, f"{url}: section_titles has {len(titles)} items, section_texts {len(texts)}", "bad shape")
        return None
    urls = art.get("image_urls") or []
    idx = art.get("image_section_indices") or []
    descs = art.get("image_reference_descriptions") or [""] * len(urls)
    if not (isinstance(urls, list) and isinstance(idx, list) and len(idx) == len(urls)):
        reject(where, f"{url}: image_urls and image_section_indices must be lists of the same length", "bad shape")
        return None
    sections = [Section(str(h or ""), _clean(t), []) for h, t in zip(titles, texts)]
    for k, (iu, si) in enumerate(zip(urls, idx)):
        if not isinstance(si, int) or not 0 <= si < len(sections):
            reject(where, f"{url}: image_section_indices[{k}]={si!r} is not a section index", "bad shape")
            return None
        if options.images is None:
            reject(where, f"{url}: image {iu} needs --images DIR (URLs are never fetched)", "missing image")
            continue
        name = Path(unquote(urlparse(str(iu)).path)).name
        alt = str(descs[k]) if k < len(descs) and descs[k] else name
        im = _resolve_image(Path(options.images), name, where, alt, reject)
        if im is not None:
            sections[si].images.append(im)
    sections = [s for s in sections if s.text or s.images]
    if not sections:
        reject(where, f"{url}: no text in the article", "empty")
        return None
    did = "evqa-" + hashlib.sha1(str(url).encode("utf-8")).hexdigest()[:12]
    return ParsedDocument(id=did, title=str(art.get("title") or url), source=str(url), format="evqa",
                          sections=sections, raw=json.dumps({url: art}, sort_keys=True).encode("utf-8"))


def discover(path: Path, options: DocOptions, reject: _Rejects) -> list[ParsedDocument]:
    """Every document under ``path`` (a folder, or one file), parsed and validated, in path order."""
    path = Path(path)
    if not path.exists():
        raise InvalidInput(f"{path}: no such file or folder")
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))
    base = path.parent if path.is_file() else path
    docs: list[ParsedDocument] = []
    for f in files:
        suf = f.suffix.lower()
        if suf in DOC_SUFFIXES:
            d = parse_file(f, f.relative_to(base).as_posix(), options, reject)
            if d is not None:
                docs.append(d)
        elif suf in EVQA_SUFFIXES:
            docs.extend(parse_evqa(f, options, reject))
    seen: dict[str, str] = {}
    for d in docs:
        if d.id in seen:
            reject(d.source, f"document id {d.id!r} is also the id of {seen[d.id]}", "duplicate id")
        seen[d.id] = d.source
    if options.only:
        docs = [d for d in docs if d.id in options.only]
    if not docs and path.is_dir() and not any(f.suffix.lower() in DOC_SUFFIXES + EVQA_SUFFIXES for f in files):
        raise InvalidInput(f"{path}: no .md, .html or .jsonl documents found")
    return docs


# --------------------------------------------------------------------------- segmentation (3.1)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def segment(doc: ParsedDocument, count_tokens: Callable[[str], int], chunk_tokens: int) -> list[Chunk]:
    """Sections with images whole; text-only sections merged up to ``chunk_tokens`` or split at
    sentence ends (a sentence longer than that is split by words). Nothing is dropped."""
    pieces: list[tuple[list[str], str, list[DocImage]]] = []   # (sections, text, images)
    buf_sections: list[str] = []
    buf_text: list[str] = []
    buf_tokens = 0

    def flush():
        nonlocal buf_sections, buf_text, buf_tokens
        if buf_text:
            pieces.append((buf_sections, "\n\n".join(buf_text), []))
        buf_sections, buf_text, buf_tokens = [], [], 0

    for s in doc.sections:
        block = (f"{s.heading}\n{s.text}" if s.heading else s.text).strip()
        if s.images:
            flush()
            pieces.append(([s.heading], block, list(s.images)))
            continue
        n = count_tokens(block)
        if n > chunk_tokens:
            flush()
            for part in _split(block, count_tokens, chunk_tokens):
                pieces.append(([s.heading], part, []))
            continue
        if buf_tokens + n > chunk_tokens:
            flush()
        buf_sections.append(s.heading)
        buf_text.append(block)
        buf_tokens += n
    flush()
    return [Chunk(id=f"{doc.id}#c{i}", order=i, text=text, sections=secs, tokens=count_tokens(text), images=imgs)
            for i, (secs, text, imgs) in enumerate(pieces)]


def _split(text: str, count_tokens, limit: int) -> list[str]:
    out, cur = [], ""
    for sent in _SENTENCE.split(text):
        cand = f"{cur} {sent}".strip()
        if cur and count_tokens(cand) > limit:
            out.append(cur)
            cand = sent
        if count_tokens(cand) > limit:             # one very long sentence: by words
            words, cur = cand.split(), ""
            for w in words:
                c2 = f"{cur} {w}".strip()
                if cur and count_tokens(c2) > limit:
                    out.append(cur)
                    c2 = w
                cur = c2
            continue
        cur = cand
    if cur:
        out.append(cur)
    return out


# --------------------------------------------------------------------------- per-document KG
@dataclass
class KGEntity:
    id: str
    name: str
    type: str
    descriptions: list[str]
    chunk_ids: list[str]

    @property
    def description(self) -> str:
        return " ".join(dict.fromkeys(self.descriptions))[:600]


@dataclass
class KGRelation:
    id: str
    head: str           # name keys
    tail: str
    summaries: list[str]
    chunk_ids: list[str]
    region: dict | None = None

    @property
    def summary(self) -> str:
        return " ".join(dict.fromkeys(self.summaries))[:600]


@dataclass
class DocumentKG:
    entities: dict[str, KGEntity] = field(default_factory=dict)       # name key -> entity
    relations: dict[tuple[str, str], KGRelation] = field(default_factory=dict)
    regions: list[dict] = field(default_factory=list)

    def add_entity(self, doc_id: str, name: str, type_: str, desc: str, chunk_id: str) -> KGEntity:
        key = name_key(name)
        e = self.entities.get(key)
        if e is None:
            e = KGEntity(f"{doc_id}:e:{hashlib.sha1(key.encode()).hexdigest()[:10]}", " ".join(name.split()),
                         type_.strip().lower() or "concept", [], [])
            self.entities[key] = e
        if desc.strip():
            e.descriptions.append(desc.strip())
        if chunk_id not in e.chunk_ids:
            e.chunk_ids.append(chunk_id)
        return e

    def add_relation(self, doc_id: str, head: str, tail: str, summary: str, chunk_id: str) -> KGRelation | None:
        hk, tk = name_key(head), name_key(tail)
        if hk == tk or hk not in self.entities or tk not in self.entities:
            return None
        r = self.relations.get((hk, tk))
        if r is None:
            r = KGRelation(f"{doc_id}:r:{hashlib.sha1(f'{hk}|{tk}'.encode()).hexdigest()[:10]}", hk, tk, [], [])
            self.relations[(hk, tk)] = r
        if summary.strip():
            r.summaries.append(summary.strip())
        if chunk_id not in r.chunk_ids:
            r.chunk_ids.append(chunk_id)
        return r


def _in_text(name: str, text: str) -> bool:
    return name_key(name) in name_key(text)


class DocumentLoader:
    """Runs the pipeline of the module docstring over a folder of documents."""

    def __init__(self, graph, models, settings, options: DocOptions | None = None):
        self.graph = graph
        self.models = models
        self.settings = settings
        self.options = options or DocOptions()
        self._count_tokens: Callable[[str], int] | None = None

    @property
    def count_tokens(self) -> Callable[[str], int]:
        if self._count_tokens is None:
            self._count_tokens = llm_token_counter(self.settings)
        return self._count_tokens

    @property
    def stand_in(self) -> bool:
        """No scene-graph model on this machine: the whole image is the one region."""
        return self.settings.vision_backend == "local"

    # ------------------------------------------------------------------ top level
    def load(self, path: Path) -> DocReport:
        t0 = time.perf_counter()
        report = DocReport(path=str(path), torch_threads=self.settings.torch_threads,
                           chat=f"{self.settings.chat_backend}:{getattr(self.models.chat, 'name', '?')}",
                           visual=STAND_IN if self.stand_in else f"VisionModel {getattr(self.models.vision, 'name', '?')}")
        reject = _Rejects(self.options.strict, report)
        t = time.perf_counter()
        docs = discover(Path(path), self.options, reject)           # validate everything first
        report.stage("parse", time.perf_counter() - t)
        self.graph.apply_schema()
        for d in docs:
            d.content_hash = content_hash(d, self.options)
        stored = {r["id"]: r for r in self.graph.read("docs_document_status", ids=[d.id for d in docs])}
        todo = []
        for d in docs:
            old = stored.get(d.id)
            if old and old.get("status") == "complete" and old.get("content_hash") == d.content_hash:
                report.documents.append(DocResult(d.id, d.source, "unchanged"))
            else:
                todo.append((d, old is not None))
        with self._progress(len(todo)) as prog:
            for d, existed in todo:
                prog.doc(d.id)
                res = self.load_one(d, report, prog)
                res.status = "replaced" if existed else "written"
                report.documents.append(res)
                prog.advance()
        if todo:
            self.graph.await_indexes()
        report.seconds = time.perf_counter() - t0
        return report

    def load_one(self, doc: ParsedDocument, report: DocReport, prog=None) -> DocResult:
        prog = prog or _NoProgress()
        t = time.perf_counter()
        chunks = segment(doc, self.count_tokens, self.options.chunk_tokens)
        report.stage("segment", time.perf_counter() - t)
        kg = DocumentKG()
        for i, ch in enumerate(chunks):
            prog.stage(f"text graph {i + 1}/{len(chunks)}")
            t = time.perf_counter()
            self._text_graph(doc, ch, kg, report)
            report.stage("text_graph", time.perf_counter() - t)
        for i, ch in enumerate(c for c in chunks if c.images):
            for im in ch.images:
                prog.stage(f"visual graph + matching {i + 1}")
                t = time.perf_counter()
                objects, vrels = self._visual_graph(im, report)
                report.stage("visual_graph", time.perf_counter() - t)
                t = time.perf_counter()
                self._match(doc, ch, im, objects, vrels, kg, report)
                report.stage("matching", time.perf_counter() - t)
        prog.stage("embeddings")
        t = time.perf_counter()
        rows = self._rows(doc, chunks, kg)
        report.stage("embed", time.perf_counter() - t)
        links: list[dict] = []
        if self.options.link and rows["entities"]:
            prog.stage("linking")
            t = time.perf_counter()
            links = self.link(rows["entities"])
            report.stage("link", time.perf_counter() - t)
        prog.stage("write")
        t = time.perf_counter()
        counts = {"entities": len(rows["entities"]), "relations": len(rows["relations"]),
                  "regions": len(rows["regions"]) + len(rows["rel_regions"]), "same_as": len(links)}
        self._write(doc, rows, links, counts)
        report.stage("write", time.perf_counter() - t)
        return DocResult(doc.id, doc.source, "written", chunks=len(chunks), **counts)

    # ------------------------------------------------------------------ 3.1.1 textual graph
    def _text_graph(self, doc: ParsedDocument, ch: Chunk, kg: DocumentKG, report: DocReport) -> None:
        from kgqa.loaders.extraction_prompts import EXTRACT_SYSTEM, TextGraph, extraction_prompt

        try:
            tg = self.models.chat.generate_json(extraction_prompt(doc.title, ch.text), TextGraph,
                                                system=EXTRACT_SYSTEM, max_tokens=self.options.extract_max_tokens)
        except BadModelReply as e:
            key = f"text_graph:{e.code}"
            report.fallbacks[key] = report.fallbacks.get(key, 0) + 1
            return
        # Interpretation (beyond the paper): a small model invents names; only names that occur
        # in the segment (or its document's title) are kept, so every entity is grounded in its text.
        scope = f"{doc.title}\n{ch.text}"
        for e in tg.entities:
            if not _in_text(e.name, scope):
                report.dropped_ungrounded += 1
                continue
            kg.add_entity(doc.id, e.name, e.type, e.description, ch.id)
        for r in tg.relations:
            if kg.add_relation(doc.id, r.head, r.tail, r.summary, ch.id) is None:
                report.dropped_ungrounded += 1

    # ------------------------------------------------------------------ 3.1.2 visual graph
    def _visual_graph(self, im: DocImage, report: DocReport):
        """(objects [(id, category, bbox)], relations [(id, subject, predicate, object)])."""
        if self.stand_in:
            # CPU stand-in, NOT a scene-graph model: the whole image is the one object.
            return [("o0", im.alt or "image", (0.0, 0.0, 1.0, 1.0))], []
        from kgqa.loaders.extraction_prompts import SCENE_GRAPH_PROMPT, SCENE_GRAPH_SYSTEM, VisualGraph

        try:
            vg = self.models.vision.generate_json(im.data, SCENE_GRAPH_PROMPT, VisualGraph,
                                                  system=SCENE_GRAPH_SYSTEM, max_tokens=400)
        except BadModelReply as e:
            key = f"visual_graph:{e.code}"
            report.fallbacks[key] = report.fallbacks.get(key, 0) + 1
            return [], []
        objects = []
        for o in vg.objects:
            x1, y1, x2, y2 = (min(1.0, max(0.0, float(v))) for v in o.bbox)
            if x2 > x1 and y2 > y1:
                objects.append((o.id, o.category, (x1, y1, x2, y2)))
        ids = {o[0] for o in objects}
        rels = [(f"r{k}", r.subject, r.predicate, r.object) for k, r in enumerate(vg.relations)
                if r.subject in ids and r.object in ids and r.subject != r.object]
        return objects, rels

    # ------------------------------------------------------------------ 3.1.3 matching (Eq. 1)
    def _match(self, doc, ch: Chunk, im: DocImage, objects, vrels, kg: DocumentKG, report: DocReport) -> None:
        from kgqa.loaders.extraction_prompts import MATCH_SYSTEM, matches_schema, matching_prompt

        ents = [e for e in kg.entities.values() if ch.id in e.chunk_ids]
        if not objects or not ents:
            return
        rels = [r for r in kg.relations.values() if ch.id in r.chunk_ids]
        prompt = matching_prompt([(e.name, e.description[:160]) for e in ents],
                                 [(kg.entities[r.head].name, kg.entities[r.tail].name, r.summary[:160]) for r in rels],
                                 objects, vrels)
        schema = matches_schema([o[0] for o in objects], [r[0] for r in vrels], [e.name for e in ents])
        try:
            m = self.models.vision.generate_json(im.data, prompt, schema, system=MATCH_SYSTEM, max_tokens=120)
        except BadModelReply as e:
            key = f"matching:{e.code}"
            report.fallbacks[key] = report.fallbacks.get(key, 0) + 1
            return
        boxes = {oid: (cat, b) for oid, cat, b in objects}
        rel_objs = {rid: (s, o) for rid, s, _, o in vrels}
        seen = set()
        for em in m.entities:
            ent = kg.entities.get(name_key(em.entity))
            if ent is None or em.object not in boxes or (ent.id, em.object) in seen:
                continue
            seen.add((ent.id, em.object))
            cat, b = boxes[em.object]
            kg.regions.append({"id": f"{ent.id}:g:{im.sha256[:8]}:{em.object}", "entity_id": ent.id,
                               "bbox": list(b), "category": cat, "image_sha256": im.sha256,
                               "stand_in": self.stand_in})
        for rm in getattr(m, "relations", []):
            rel = kg.relations.get((name_key(rm.head), name_key(rm.tail)))
            if rel is None or rm.relation not in rel_objs:
                continue
            s, o = rel_objs[rm.relation]
            (c1, b1), (c2, b2) = boxes[s], boxes[o]
            union = [min(b1[0], b2[0]), min(b1[1], b2[1]), max(b1[2], b2[2]), max(b1[3], b2[3])]
            rel.region = {"relation_id": rel.id, "bbox": union, "category": f"{c1} / {c2}",
                          "image_sha256": im.sha256}

    # ------------------------------------------------------------------ embeddings + rows
    def _rows(self, doc: ParsedDocument, chunks: list[Chunk], kg: DocumentKG) -> dict:
        ents = list(kg.entities.values())
        rels = list(kg.relations.values())
        captions = [im.alt for im in doc.images if im.alt]
        doc_text = " ".join([doc.title + "."] + captions + [c.text for c in chunks])
        texts = ([f"{e.name}: {e.description}" for e in ents]
                 + [f"{kg.entities[r.head].name} {kg.entities[r.tail].name}: {r.summary}" for r in rels]
                 + [c.text for c in chunks] + [doc_text] + [e.name for e in ents])
        # a region's embedding is that of its category (the stand-in: the image's alt text); it stands
        # for the visual part of the multimodal entity (n, v) / relation (e, r) at retrieval time
        regions = kg.regions + [r.region for r in rels if r.region]
        texts += [g["category"] for g in regions]
        vecs = self.models.encoder.encode(texts) if texts else []
        for g, v in zip(regions, vecs[len(vecs) - len(regions):] if regions else []):
            g["embedding"] = [float(x) for x in v]
        ne, nr, nc = len(ents), len(rels), len(chunks)
        ev, rv, cv, dv = vecs[:ne], vecs[ne:ne + nr], vecs[ne + nr:ne + nr + nc], vecs[ne + nr + nc]
        namev = vecs[ne + nr + nc + 1:ne + nr + nc + 1 + ne]
        return {
            "document": {"id": doc.id, "title": doc.title, "source": doc.source, "format": doc.format,
                         "content_hash": doc.content_hash, "bytes": len(doc.raw), "n_chunks": nc,
                         "n_images": len(doc.images), "embedding": [float(x) for x in dv],
                         "extractor": f"{EXTRACTOR_VERSION} · {self.settings.chat_backend}:"
                                      f"{getattr(self.models.chat, 'name', '?')} · "
                                      f"{STAND_IN if self.stand_in else 'VisionModel'}"},
            "chunks": [{"id": c.id, "order": c.order, "text": c.text, "sections": c.sections, "tokens": c.tokens,
                        "has_image": bool(c.images), "embedding": [float(x) for x in v]}
                       for c, v in zip(chunks, cv)],
            "images": [{"chunk_id": c.id, "sha256": im.sha256, "path": str(im.path), "width": im.width,
                        "height": im.height, "mime": im.mime, "alt": im.alt} for c in chunks for im in c.images],
            "entities": [{"id": e.id, "name": e.name, "type": e.type, "description": e.description,
                          "chunk_ids": e.chunk_ids, "embedding": [float(x) for x in v],
                          "_name_vec": [float(x) for x in nv]} for e, v, nv in zip(ents, ev, namev)],
            "relations": [{"id": r.id, "head_id": kg.entities[r.head].id, "tail_id": kg.entities[r.tail].id,
                           "summary": r.summary, "chunk_ids": r.chunk_ids, "embedding": [float(x) for x in v]}
                          for r, v in zip(rels, rv)],
            "regions": kg.regions,
            "rel_regions": [r.region for r in rels if r.region],
        }

    # ------------------------------------------------------------------ linking (beyond the paper)
    def link(self, entities: list[dict]) -> list[dict]:
        """SAME_AS candidates: the best Wikidata entity per document entity when its score ≥ threshold.

        score = name agreement (1.0 when the normalised name equals the entity's name or an alias,
        else the cosine of the name embeddings), blended 0.6 / 0.4 with the cosine of the two
        descriptions when both have one.
        """
        import numpy as np

        out = []
        descs_needed: list[str] = []
        cands_per: list[list[dict]] = []
        for e in entities:
            rows = self.graph.read("docs_link_candidates", vector=e["_name_vec"], k=self.options.link_candidates)
            cands_per.append(rows)
            descs_needed += [r["description"] for r in rows if r.get("description")]
        texts = list(dict.fromkeys([e["description"] for e in entities if e["description"]] + descs_needed))
        vec = dict(zip(texts, self.models.encoder.encode(texts))) if texts else {}
        for e, rows in zip(entities, cands_per):
            best = None
            for r in rows:
                s = link_score(e["name"], e["description"], r, vec, np)
                if best is None or s > best[1]:
                    best = (r["id"], s)
            if best and best[1] >= self.options.link_threshold:
                out.append({"docentity_id": e["id"], "entity_id": best[0], "score": round(float(best[1]), 4)})
        return out

    # ------------------------------------------------------------------ write (one transaction)
    def _write(self, doc: ParsedDocument, rows: dict, links: list[dict], counts: dict) -> None:
        from kgqa import cypher

        ents = [{k: v for k, v in e.items() if not k.startswith("_")} for e in rows["entities"]]

        def work(tx):
            def run(name, **params):
                return list(tx.run(cypher.load(name), params))

            run("docs_delete_document", id=doc.id)
            run("docs_write_document", doc=rows["document"])
            run("docs_write_chunks", doc_id=doc.id, chunks=rows["chunks"])
            if rows["images"]:
                run("docs_write_chunk_images", images=rows["images"])
            if ents:
                run("docs_write_entities", doc_id=doc.id, entities=ents)
            if rows["relations"]:
                run("docs_write_relations", doc_id=doc.id, relations=rows["relations"])
            if rows["regions"] or rows["rel_regions"]:
                run("docs_write_regions", doc_id=doc.id, regions=rows["regions"], rel_regions=rows["rel_regions"])
            if links:
                run("docs_write_same_as", links=links)
            run("docs_mark_complete", id=doc.id, content_hash=doc.content_hash, counts=counts)

        with self.graph.session() as s:
            self.graph._guard(lambda: s.execute_write(work))

    # ------------------------------------------------------------------ progress
    def _progress(self, total: int):
        return _RichProgress(total) if self.options.progress else _NoProgress()


def link_score(name: str, description: str, cand: dict, vec: dict, np) -> float:
    """Agreement of a document entity (name, description) with a Wikidata candidate row."""
    names = [cand.get("name") or ""] + list(cand.get("aliases") or [])
    if any(name_key(n) == name_key(name) for n in names if n):
        name_s = 1.0
    else:
        name_s = 2.0 * float(cand["score"]) - 1.0           # the index's (1 + cos) / 2 back to cos
    d1, d2 = description, cand.get("description")
    if d1 and d2 and d1 in vec and d2 in vec:
        return 0.6 * name_s + 0.4 * float(np.dot(vec[d1], vec[d2]))
    return name_s


# --------------------------------------------------------------------------- docs list | show | rm
def list_documents(graph) -> list[dict]:
    return graph.read("docs_list")


def show_document(graph, doc_id: str) -> dict | None:
    rows = graph.read("docs_show", id=doc_id)
    if not rows:
        return None
    r = rows[0]
    return {"document": r["document"], "chunks": [c for c in r["chunks"] if c],
            "entities": [e for e in r["entities"] if e], "relations": [x for x in r["relations"] if x]}


def remove_document(graph, doc_id: str) -> int:
    rows = graph.write("docs_delete_document", id=doc_id)
    return int(rows[0]["removed"]) if rows else 0


# --------------------------------------------------------------------------- progress bars
class _NoProgress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def doc(self, name):
        pass

    def stage(self, name):
        pass

    def advance(self):
        pass


class _RichProgress(_NoProgress):
    """One bar over documents; its description names the document and the stage running."""

    def __init__(self, total: int):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          transient=True)
        self.task = self.p.add_task("documents", total=total)
        self.name = ""

    def __enter__(self):
        self.p.__enter__()
        return self

    def __exit__(self, *exc):
        return self.p.__exit__(*exc)

    def doc(self, name):
        self.name = name
        self.p.update(self.task, description=f"{name}")

    def stage(self, name):
        self.p.update(self.task, description=f"{self.name}: {name}")

    def advance(self):
        self.p.advance(self.task)
