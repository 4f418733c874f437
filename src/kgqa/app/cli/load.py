"""``kgqa load wikidata5m|documents`` and ``kgqa docs list|show|rm`` (mKG-RAG's per-document KGs)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from kgqa.app.cli.common import console, docs_app, env_settings, load_app, writer_lock


# --------------------------------------------------------------------------- load wikidata5m
@load_app.command("wikidata5m")
def load_wikidata5m_cmd(
    path: Path = typer.Option(..., "--path", help="Folder with the official Wikidata5M files."),
    images: Optional[Path] = typer.Option(None, "--images", help="Folder of <QID>.<jpg|jpeg|png|webp> images."),
    splits: str = typer.Option("train,valid,test", "--splits", help="Triple splits to load, comma-separated."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Load only the first N triples (and their entities)."),
    strict: bool = typer.Option(True, "--strict/--lenient",
                                help="Stop at the first bad line (strict) or skip it into a rejects file."),
    embeddings: bool = typer.Option(True, "--embeddings/--no-embeddings",
                                    help="Embed entity and relation names (a later run can add them)."),
    batch_size: int = typer.Option(10_000, "--batch-size", help="Rows per write transaction."),
    embed_chunk: int = typer.Option(20_000, "--embed-chunk",
                                    help="Entities per embedding step (a killed load redoes at most one)."),
    device: Optional[str] = typer.Option(None, "--device", help="Encoder device: cpu or cuda."),
    bulk: bool = typer.Option(False, "--bulk", help="First load into an EMPTY database through neo4j-admin "
                              "database import (stops and restarts the local server; for another Neo4j it "
                              "writes the CSVs and prints the command to run)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Load Wikidata5M (entities, relations, facts, descriptions, images, embeddings) into Neo4j."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    if device is not None and device not in ("cpu", "cuda"):
        raise InvalidInput(f"--device {device!r}: must be cpu or cuda")
    if embed_chunk < 1:
        raise InvalidInput(f"--embed-chunk {embed_chunk}: must be at least 1")
    s = env_settings(device=device)
    opts = LoadOptions(splits=tuple(x.strip() for x in splits.split(",") if x.strip()), limit=limit,
                       strict=strict, embeddings=embeddings, batch_size=batch_size, device=s.device,
                       embed_chunk=embed_chunk,
                       progress=not as_json)  # bars on a terminal, log lines otherwise
    next_steps: list[str] = []
    from kgqa.loaders.wikidata5m.bulk import BulkState, bulk_load_wikidata5m

    # --bulk: the cleanup after an interrupted --bulk runs before the lease is taken (it may start the server)
    interrupted: list[str] = []
    recover = (lambda: interrupted.append(BulkState(s).recover())) if bulk else None
    with writer_lock(s, before_lease=recover) as lease, Graph(s) as g:
        if bulk:
            report, next_steps = bulk_load_wikidata5m(g, path, images=images, options=opts, lease=lease,
                                                      interrupted=interrupted[0])
        else:
            report = load_wikidata5m(g, path, images=images, options=opts)
    for w in getattr(report, "warnings", []):  # e.g. an empty split: said, also with --json
        print(f"kgqa: warning: {w}", file=sys.stderr)
    if as_json:
        print(json.dumps({**report.as_dict(), "next_steps": next_steps} if bulk else report.as_dict(), indent=2))
        return
    from rich.table import Table

    t = Table(title=f"kgqa load wikidata5m · {report.seconds:.1f} s · torch threads {report.torch_threads}"
                    f" · device {report.device}" + (f" · encoder {report.encoder}" if report.encoder else ""))
    t.add_column("phase")
    t.add_column("rows", justify="right")
    t.add_column("seconds", justify="right")
    t.add_column("rows/s", justify="right")
    t.add_column("where the time went", overflow="fold")
    for p in report.phases:
        detail = ", ".join(f"{k} {v:,.2f}" if isinstance(v, float) else f"{k} {v:,}" for k, v in p.detail.items())
        t.add_row(p.name, f"{p.rows:,}", f"{p.seconds:.2f}", f"{p.rows_per_s:,.0f}", detail)
    con = console()
    con.print(t)
    if next_steps:
        for line in next_steps:
            print(line)
        return
    c = report.counts
    con.print(f"graph: {c.get('entities', 0):,} entities · {c.get('relations', 0):,} relations · "
              f"{c.get('facts', 0):,} facts · {c.get('images', 0):,} images")
    if report.modes:
        con.print("writes: " + " · ".join(f"{k} {v}" for k, v in report.modes.items()), soft_wrap=True)
    for what, n in report.skipped.items():
        con.print(f"skipped: {n:,} {what}", soft_wrap=True)
    if report.rejects:
        reasons = ", ".join(f"{k} {v}" for k, v in report.rejects_by_reason.items())
        con.print(f"rejected {report.rejects:,} bad lines ({reasons}) → {report.rejects_path}", soft_wrap=True)


# --------------------------------------------------------------------------- documents (mKG-RAG section)
@load_app.command("documents")
def load_documents_cmd(
    path: Path = typer.Argument(..., metavar="DIR", help="Folder (or file) of .md / .html / .pdf documents or "
                                "E-VQA knowledge-base .jsonl files."),
    images: Optional[Path] = typer.Option(None, "--images", help="E-VQA: folder of the images named by their URL's "
                                          "file name (URLs are never fetched)."),
    strict: bool = typer.Option(True, "--strict/--lenient", help="Stop at the first bad file (strict) or skip "
                                "and count it."),
    chunk_tokens: int = typer.Option(300, "--chunk-tokens", min=32, help="Chunk size for sections without images "
                                     "(LLM tokens)."),
    paragraphs: bool = typer.Option(False, "--paragraphs", help="Split a section longer than a chunk at its "
                                    "paragraph ends (whole paragraphs per chunk, their blank lines kept) instead of "
                                    "at any sentence end; read them with mkgrag's -o reader_passages=paragraph."),
    link: bool = typer.Option(True, "--link/--no-link", help="Link document entities to Wikidata entities (SAME_AS)."),
    link_threshold: float = typer.Option(0.8, "--link-threshold", help="Minimum SAME_AS score."),
    max_mb: float = typer.Option(5.0, "--max-mb", help="Largest Markdown/HTML file accepted, in MB (PDFs: "
                                 "KGQA_PDF_MAX_MB and KGQA_PDF_MAX_PAGES)."),
    write_batch: int = typer.Option(500, "--write-batch", min=1, help="Rows per write transaction: a larger "
                                    "document is written in several and marked complete by the last."),
    replay_cache: Optional[Path] = typer.Option(None, "--replay-cache", help="Folder caching model replies."),
    force: bool = typer.Option(False, "--force", help="Re-extract every document, unchanged ones too."),
    ocr: Optional[bool] = typer.Option(None, "--ocr/--no-ocr", help="Read PDF pages without a text layer and the "
                                       "text inside figures with the OCR engine (tesseract), when installed "
                                       "(default: KGQA_OCR, on)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Build one multimodal KG per document (mKG-RAG, Section 3.1): segments, textual and visual graphs,
    vision-text matching, embeddings; unchanged documents are skipped, changed ones replaced, and ones
    whose extractor changed (or all, with --force) re-extracted."""
    from kgqa.app.runtime import open_runtime
    from kgqa.loaders.documents.loader import DocumentLoader
    from kgqa.loaders.documents.options import DocOptions

    s = env_settings(model_cache_dir=replay_cache)
    opts = DocOptions(chunk_tokens=chunk_tokens, paragraphs=paragraphs, strict=strict, link=link,
                      link_threshold=link_threshold, max_bytes=int(max_mb * 1024 * 1024), images=images,
                      write_batch=write_batch, force=force, ocr=ocr,
                      progress=False if as_json else (True if sys.stderr.isatty() else "log"))
    with writer_lock(s), open_runtime(s) as rt:
        report = DocumentLoader(rt.graph, rt.models, s, opts).load(path)
    d = report.as_dict()
    if as_json:
        print(json.dumps(d, indent=2, ensure_ascii=False))
        return
    con = console()
    con.print(f"kgqa load documents {path} · {report.seconds:.1f} s · torch threads {report.torch_threads} · "
              f"chat {report.chat} · visual graph: {report.visual}", markup=False, soft_wrap=True)
    con.print(f"documents: {d['written']} written, {d['replaced']} replaced, {d['re_extracted']} re-extracted, {d['relinked']} relinked, "
              f"{d['unchanged']} unchanged · "
              f"{d['chunks']} chunks · {d['entities']} entities · {d['relations']} relations · "
              f"{d['regions']} regions · {d['same_as']} SAME_AS links", markup=False, soft_wrap=True)
    if d["pages"]:
        con.print(f"PDF pages: {d['pages']} · figures: {d['figures']}"
                  + (f" · pages without text: {d['no_text_pages']}" if d["no_text_pages"] else ""), markup=False)
    if d["ocr_pages"] or d["ocr_figures"]:
        rate = f" ({d['ocr_pages_per_min']} pages/min)" if d["ocr_pages_per_min"] else ""
        con.print(f"OCR: {d['ocr_pages']} pages read{rate} · {d['ocr_figures']} figures' text · "
                  f"{d['ocr_seconds']} s", markup=False)
    if d["ocr_skipped"]:
        unread = "; ".join(d["ocr_unread"]) + " (no text layer)" if d["ocr_unread"] else "pages without a text layer"
        con.print(f"OCR skipped ({d['ocr_skipped']}): {unread} and the text inside figures are not read",
                  markup=False, soft_wrap=True)
    for w in d["warnings"]:
        con.print(f"warning: {w}", markup=False, soft_wrap=True)
    for line in d["resumed"]:
        con.print(line, markup=False, soft_wrap=True)
    if d["documents_per_min"]:
        con.print(f"speed: {d['documents_per_min']} documents/min · {d['chunks_per_min']} chunks/min", markup=False)
    con.print("stages (s): " + " · ".join(f"{k} {v}" for k, v in d["stages"].items()), markup=False, soft_wrap=True)
    if d["fallbacks"]:
        con.print("fallbacks taken: " + ", ".join(f"{k} {v}" for k, v in d["fallbacks"].items())
                  + (f" · names not in their text dropped: {d['dropped_ungrounded']}" if d["dropped_ungrounded"] else ""),
                  markup=False, soft_wrap=True)
    elif d["dropped_ungrounded"]:
        con.print(f"names not in their text dropped: {d['dropped_ungrounded']}", markup=False)
    for what, n in d["skipped"].items():
        con.print(f"skipped: {n} ({what})", markup=False)
    for r in d["rejected"][:SHOWN_REJECTS]:
        con.print(f"skipped {r['file']}: {r['why']}", markup=False, soft_wrap=True)
    if len(d["rejected"]) > SHOWN_REJECTS:
        con.print(f"… and {len(d['rejected']) - SHOWN_REJECTS:,} more", markup=False)
    if d["rejects_file"]:
        con.print(f"rejects file (every skipped file and why): {d['rejects_file']}", markup=False, soft_wrap=True)


#: skipped files named on screen (all of them in --json and the rejects file)
SHOWN_REJECTS = 50


@docs_app.command("list")
def docs_list(as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """Every loaded document with its counts."""
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents.store import list_documents

    with Graph(env_settings()) as g:
        rows = list_documents(g)
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
        return
    for r in rows:
        print(f"{r['id']}  {r['title']!r}  {r['status']}  {r['chunks']} chunks · {r['entities']} entities · "
              f"{r['relations']} relations · {r['regions']} regions · {r['same_as']} SAME_AS  ({r['source']})")
    print(f"{len(rows)} document(s)")


@docs_app.command("show")
def docs_show(doc_id: str = typer.Argument(..., metavar="ID"),
              as_json: bool = typer.Option(False, "--json", help="Print JSON.")):
    """One document's KG: chunks, entities (with image regions and Wikidata links), relations."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.core.inputs import check_text
    from kgqa.loaders.documents.store import show_document

    doc_id = check_text(doc_id, "document id")          # the input gate, before connecting
    with Graph(env_settings()) as g:
        d = show_document(g, doc_id)
    if d is None:
        raise InvalidInput(f"document {doc_id!r}: no such document (see kgqa docs list)")
    if as_json:
        print(json.dumps(d, indent=2, ensure_ascii=False, default=str))
        return
    doc = d["document"]
    print(f"{doc['id']}  {doc['title']!r}  {doc['format']}" + (f" ({doc['pages']} pages)" if doc.get("pages") else "")
          + f"  {doc['status']}  hash {str(doc['content_hash'])[:12]}  ({doc['source']})")
    for c in d["chunks"]:
        imgs = f"  images: {', '.join(i['alt'] or i['sha256'][:8] for i in c['images'] if i)}" if any(c["images"]) else ""
        pages = (f"  p. {c['page_start']}" + (f"\u2013{c['page_end']}" if c.get("page_end") != c["page_start"] else "")
                 if c.get("page_start") is not None else "")
        print(f"chunk {c['id']}  sections {c['sections']}  {c['tokens']} tokens{pages}{imgs}")
    for e in d["entities"]:
        extra = "".join(f"  region {r['bbox']}{' (stand-in)' if r.get('stand_in') else ''}" for r in e["regions"] if r)
        extra += "".join(f"  SAME_AS {w['id']} {w['name']!r} ({w['score']:.2f})" for w in e["same_as"] if w)
        print(f"entity {e['name']!r} ({e['type']}): {e['description']}{extra}")
    for r in d["relations"]:
        print(f"relation {r['head']!r} -> {r['tail']!r}: {r['summary']}")


@docs_app.command("rm")
def docs_rm(doc_id: str = typer.Argument(..., metavar="ID")):
    """Remove exactly one document's KG (its images stay when anything else uses them; a PDF figure's file
    under <data dir>/figures goes with its last Image node)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.loaders.documents import embed_cache
    from kgqa.core.inputs import check_text
    from kgqa.loaders.documents.store import remove_document, sweep_figures

    doc_id = check_text(doc_id, "document id")          # the input gate, before connecting
    s = env_settings()
    with writer_lock(s), Graph(s) as g:
        n = remove_document(g, doc_id)
        files = sweep_figures(g, s.figures_dir) if n else 0
        saved = embed_cache.remove(embed_cache.cache_root(s.data_dir), doc_id)   # an interrupted load's vectors
    if n == 0 and not saved:
        raise InvalidInput(f"document {doc_id!r}: no such document (see kgqa docs list)")
    if n == 0:
        console().print(f"document {doc_id} is not in the graph; removed the vectors an interrupted load had "
                        f"saved ({saved} file{'s' if saved != 1 else ''})", markup=False, soft_wrap=True)
        return
    extra = f", {files} figure file{'s' if files != 1 else ''}" if files else ""
    extra += f", {saved} file{'s' if saved != 1 else ''} of saved vectors" if saved else ""
    console().print(f"removed document {doc_id} ({n} nodes{extra})", markup=False, soft_wrap=True)
