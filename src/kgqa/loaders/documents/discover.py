"""Step 1: every document under a path found, read and validated (UTF-8, size limit, images
readable) into ``ParsedDocument``s, E-VQA knowledge-base JSON lines included; a problem goes to
``reject`` (kgqa.loaders.rejects: strict raises, lenient counts it and skips)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from kgqa.core.errors import InvalidInput
from kgqa.loaders.documents.options import DOC_SUFFIXES, EVQA_SUFFIXES, EXTRACTOR_VERSION, PDF_SUFFIXES, DocOptions
from kgqa.loaders.documents.parse import (DocImage, ParsedDocument, Section, clean_text, heading_paths, parse_html,
                                          parse_markdown)
from kgqa.loaders.rejects import Rejects

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def document_id(rel_path: str) -> str:
    """A readable, stable id from the path relative to the loaded folder (``falcon_9.md`` → ``falcon_9``)."""
    stem = rel_path.rsplit(".", 1)[0] if "." in Path(rel_path).name else rel_path
    return _SLUG.sub("-", stem.replace("/", "--")).strip("-") or "doc"


def content_hash(doc: ParsedDocument, options: DocOptions) -> str:
    h = hashlib.sha256()
    h.update(EXTRACTOR_VERSION.encode())
    h.update(f"chunk_tokens={options.chunk_tokens}".encode())
    if options.paragraphs:                  # only then: the hashes of documents loaded without it stay as they were
        h.update(b"paragraphs")
    h.update(doc.raw)
    h.update(doc.ocr.encode())              # empty unless OCR read some of its text
    for im in doc.images:
        h.update(im.sha256.encode())
    return h.hexdigest()



def _resolve_image(roots: tuple[Path, ...], base: Path, ref: str, where: str, alt: str,
                   reject: Rejects) -> DocImage | None:
    """The image ``ref`` of a document in ``base``, confined to ``roots`` (the loaded folder, ``--images``).

    URLs (``file:`` included) are refused; a path is resolved (symlinks followed) and must lie inside
    one of the roots. A path that leaves them is refused with the same line whether or not something
    exists there, and the line names only what the document wrote, never where it resolved to."""
    from kgqa.core.images import load_image

    if re.match(r"^[a-z][a-z0-9+.-]*:", ref, re.I):
        reject(where, f"image {ref!r} is a URL; images are read from local files only, inside the "
               "document's folder (never fetched, file: URLs included)", reason="image URL")
        return None
    p = Path(unquote(ref))
    resolved = (p if p.is_absolute() else base / p).resolve()
    if not any(resolved.is_relative_to(r) for r in roots):
        reject(where, f"image {ref!r} is outside the document's folder; images are read from inside the "
               "loaded folder (or --images) only", reason="image outside the folder")
        return None
    try:
        img = load_image(resolved)
    except InvalidInput as e:
        reason = "missing image" if "not found" in str(e) else "bad image"
        reject(where, f"image: {e}", reason=reason)
        return None
    return DocImage(path=img.path, alt=alt, sha256=img.sha256, width=img.width, height=img.height,
                    mime=img.mime, data=img)


def image_roots(root: Path, options: DocOptions) -> tuple[Path, ...]:
    """Where a document's images may be: the loaded folder (for one file, its folder) and ``--images``."""
    roots = [Path(root).resolve()]
    if options.images is not None:
        roots.append(Path(options.images).resolve())
    return tuple(roots)


def _read_text(path: Path, options: DocOptions, reject: Rejects, what: str = "document") -> tuple[str, bytes] | None:
    try:
        size = path.stat().st_size
    except OSError as e:
        reject(str(path), f"cannot read {what} ({e.strerror})", reason="unreadable")
        return None
    if size > options.max_bytes:
        reject(str(path), f"{what} is {size / 1e6:.1f} MB, over the {options.max_bytes / 1e6:.0f} MB limit",
               reason="too large")
        return None
    try:
        raw = path.read_bytes()
    except OSError as e:
        reject(str(path), f"cannot read {what} ({e.strerror})", reason="unreadable")
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        reject(f"{path}:{line}", f"not UTF-8 (byte {e.start})", reason="not UTF-8")
        return None
    return text, raw


def parse_file(path: Path, rel: str, options: DocOptions, reject: Rejects,
               root: Path | None = None) -> ParsedDocument | None:
    """One Markdown/HTML file as a ParsedDocument (images validated and confined to ``root``, the
    loaded folder, default the file's folder, or ``--images``), or None when rejected (lenient)."""
    roots = image_roots(root if root is not None else path.parent, options)
    read = _read_text(path, options, reject)
    if read is None:
        return None
    text, raw = read
    fmt = "html" if path.suffix.lower() in (".html", ".htm") else "markdown"
    title, parts = parse_html(text) if fmt == "html" else parse_markdown(text)
    sections: list[Section] = []
    paths = heading_paths([(heading, level) for heading, _, _, level in parts])
    for (heading, body, raws, _), hpath in zip(parts, paths):
        imgs = []
        for ri in raws:
            im = _resolve_image(roots, path.parent, ri.ref, str(path), ri.alt, reject)
            if im is not None:
                imgs.append(im)
        if body or imgs:
            sections.append(Section(heading, body, imgs, path=hpath))
    if not sections:
        reject(str(path), "no text in the document", reason="empty")
        return None
    return ParsedDocument(id=document_id(rel), title=title or Path(rel).stem.replace("_", " "), source=str(path),
                          format=fmt, origin=str(path.resolve()), sections=sections, raw=raw)


def parse_evqa(path: Path, options: DocOptions, reject: Rejects) -> list[ParsedDocument]:
    """The E-VQA knowledge base shape, one JSON object per line mapping url → article."""
    out: list[ParsedDocument] = []
    try:
        fh = open(path, "rb")
    except OSError as e:
        reject(str(path), f"cannot read the knowledge base ({e.strerror})", reason="unreadable")
        return out
    with fh:
        for lineno, rawline in enumerate(fh, 1):
            where = f"{path}:{lineno}"
            if len(rawline) > options.max_bytes:
                reject(where, f"article is {len(rawline) / 1e6:.1f} MB, over the {options.max_bytes / 1e6:.0f} MB "
                       "limit", reason="too large")
                continue
            try:
                line = rawline.decode("utf-8").strip()
            except UnicodeDecodeError as e:
                reject(where, f"not UTF-8 (byte {e.start})", reason="not UTF-8")
                continue
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                reject(where, f"not JSON ({e})", reason="bad JSON")
                continue
            if not isinstance(obj, dict):
                reject(where, "expected an object {url: article}", reason="bad shape")
                continue
            for url, art in obj.items():
                doc = _evqa_article(url, art, where, rawline, options, reject)
                if doc is not None:
                    out.append(doc)
    return out


def _evqa_article(url, art, where, rawline, options, reject) -> ParsedDocument | None:
    if not isinstance(art, dict):
        reject(where, f"{url}: the article is not an object", reason="bad shape")
        return None
    titles, texts = art.get("section_titles"), art.get("section_texts")
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        reject(where, f"{url}: field section_texts must be a list of strings", reason="bad shape")
        return None
    titles = titles if isinstance(titles, list) else [""] * len(texts)
    if len(titles) != len(texts):
        reject(where, f"{url}: section_titles has {len(titles)} items, section_texts {len(texts)}",
               reason="bad shape")
        return None
    urls = art.get("image_urls") or []
    idx = art.get("image_section_indices") or []
    descs = art.get("image_reference_descriptions") or [""] * len(urls)
    if not (isinstance(urls, list) and isinstance(idx, list) and len(idx) == len(urls)):
        reject(where, f"{url}: image_urls and image_section_indices must be lists of the same length",
               reason="bad shape")
        return None
    sections = [Section(str(h or ""), clean_text(t), [], path=(str(h),) if h else ()) for h, t in zip(titles, texts)]
    for k, (iu, si) in enumerate(zip(urls, idx)):
        if not isinstance(si, int) or not 0 <= si < len(sections):
            reject(where, f"{url}: image_section_indices[{k}]={si!r} is not a section index", reason="bad shape")
            return None
        if options.images is None:
            reject(where, f"{url}: image {iu} needs --images DIR (URLs are never fetched)", reason="missing image")
            continue
        name = Path(unquote(urlparse(str(iu)).path)).name
        alt = str(descs[k]) if k < len(descs) and descs[k] else name
        im = _resolve_image(image_roots(Path(options.images), options), Path(options.images), name, where, alt,
                            reject)
        if im is not None:
            sections[si].images.append(im)
    sections = [s for s in sections if s.text or s.images]
    if not sections:
        reject(where, f"{url}: no text in the article", reason="empty")
        return None
    did = "evqa-" + hashlib.sha1(str(url).encode("utf-8")).hexdigest()[:12]
    return ParsedDocument(id=did, title=str(art.get("title") or url), source=str(url), format="evqa", origin=str(url),
                          sections=sections, raw=json.dumps({url: art}, sort_keys=True).encode("utf-8"))


def _utf8_name(name: str) -> bool:
    """Whether a file name decodes as UTF-8 (an undecodable byte reaches Python as a surrogate escape, which
    no Neo4j string nor id may hold)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def discover(path: Path, options: DocOptions, reject: Rejects) -> list[ParsedDocument]:
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
        if suf in DOC_SUFFIXES + PDF_SUFFIXES + EVQA_SUFFIXES and not _utf8_name(f.relative_to(base).as_posix()):
            reject(str(f), "file name is not valid UTF-8 (rename it)", reason="file name not UTF-8")
            continue
        if suf in DOC_SUFFIXES:
            d = parse_file(f, f.relative_to(base).as_posix(), options, reject, root=base)
            if d is not None:
                docs.append(d)
        elif suf in PDF_SUFFIXES:
            from kgqa.loaders.documents.pdf import parse_pdf

            d = parse_pdf(f, document_id(f.relative_to(base).as_posix()), options, reject)
            if d is not None:
                docs.append(d)
        elif suf in EVQA_SUFFIXES:
            docs.extend(parse_evqa(f, options, reject))
    seen: dict[str, str] = {}
    for d in docs:
        if d.id in seen:
            reject(d.source, f"document id {d.id!r} is also the id of {seen[d.id]}", reason="duplicate id")
        seen[d.id] = d.source
    if options.only:
        docs = [d for d in docs if d.id in options.only]
    if not docs and path.is_dir() and not any(f.suffix.lower() in DOC_SUFFIXES + PDF_SUFFIXES + EVQA_SUFFIXES
                                              for f in files):
        raise InvalidInput(f"{path}: no .md, .html, .pdf or .jsonl documents found")
    return docs
