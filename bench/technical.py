"""mKG-RAG on real technical PDFs: the two Debian documentation PDFs of this machine, asked questions whose answers
are technical tokens (MIME types, paths, identifiers, flags, versions).

    KGQA_TORCH_THREADS=1 OMP_NUM_THREADS=1 python -m bench.technical reading
    KGQA_TORCH_THREADS=1 OMP_NUM_THREADS=1 python -m bench.technical open [--keep]

The PDFs: ``/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf`` (the Shared MIME-info Database
specification, 17 pages; Debian package shared-mime-info) and ``/usr/share/doc/libtasn1-doc/libtasn1.pdf`` (the
GNU Libtasn1 manual, 36 pages; libtasn1-doc). The questions (``bench/technical/questions.jsonl``, 26) were
written from their text, each answer a string printed in it; the set is small and was written by hand, so it
shows the failures named in issue 59 rather than ranking readers.

* ``reading``: the learned span reader alone on each question with the text of the page printing its answer
  (the reading setting, as ``bench.squad reading``): exact match, and how many best spans are **cut** (a piece
  from inside a whitespace-delimited token of the page, "x-midi" of "audio/x-midi") or **glued** (the answer
  with more after it, "4.19.0, 18 August 2022").
* ``open``: both PDFs loaded (``kgqa load documents``, the CPU extractor) into the Neo4j of the environment, then
  ``kgqa eval`` with mKG-RAG and its chunks-only ablation (same reader): EM of each, the graph's lead, and the
  extractor's graph: entities that are bare numbers, and the share of relations with their sentence. The
  documents are removed at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "technical"
PDFS = {"shared-mime-info-spec": Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
        "libtasn1": Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")}
ENV = {"KGQA_CHAT_BACKEND": "none", "KGQA_DOC_EXTRACTOR": "cpu"}


def questions() -> list[dict]:
    return [json.loads(x) for x in (HERE / "questions.jsonl").read_text().splitlines() if x.strip()]


def _pages(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    from kgqa.loaders.documents.parse import clean_text
    from kgqa.loaders.documents.pdf import _page_text

    pdf = pdfium.PdfDocument(str(path))
    out = []
    for i in range(len(pdf)):
        tp = pdf[i].get_textpage()
        out.append(clean_text(_page_text(tp)))
        tp.close()
    return out


def cut_or_glued(pred: str, gold: str, passage: str, start: int, end: int) -> str:
    """"cut": the span ``passage[start:end]`` (``pred``) begins or ends inside a whitespace-delimited token of the
    passage (a piece of it, "x-midi" of "audio/x-midi"; a final full stop or comma aside); "glued": ``pred`` is
    ``gold`` with more after it; "" otherwise."""
    if not pred:
        return ""
    if pred != gold and pred.startswith(gold):
        return "glued"
    before = passage[start - 1] if start > 0 else " "
    after = passage[end:end + 2] if end < len(passage) else " "
    if not before.isspace() and before not in "([\"'‘“":
        return "cut"
    if after and not after[0].isspace() and not (after[0] in ".,;:)]\"'’”" and after[1:2] in ("", " ", "\n")):
        return "cut"
    return ""


def bench_reading(args) -> None:
    from kgqa.core.config import Settings
    from kgqa.models.heads.span_reader import default_checkpoint, load_span_reader
    from kgqa.training.squad import exact_match

    missing = [str(p) for p in PDFS.values() if not p.exists()]
    if missing:
        raise SystemExit(f"missing: {', '.join(missing)} (apt-get install shared-mime-info libtasn1-doc)")
    pages = {d: _pages(p) for d, p in PDFS.items()}
    reader = load_span_reader(default_checkpoint(Settings()))
    qs, passages = [], []
    for q in questions():
        page = next((t for t in pages[q["support"]["document"]] if q["answer"] in t), None)
        if page is None:
            print(f"{q['id']}: answer not printed in {q['support']['document']}")
            continue
        qs.append(q)
        passages.append(" ".join(page.split()))
    best = reader.read_many([q["question"] for q in qs], passages, top=1)
    em = cut = glued = 0
    for q, p, g in zip(qs, passages, best):
        pred = g[0].text if g else ""
        ok = exact_match(pred, [q["answer"]])
        kind = cut_or_glued(pred, q["answer"], p, g[0].start, g[0].end) if g else ""
        em += ok
        cut += kind == "cut"
        glued += kind == "glued"
        print(f"{q['id']} {'✓' if ok else '✗'} {kind or '':5} {pred!r}  (gold {q['answer']!r})")
    print(f"technical reading · {len(qs)} questions · EM {100 * em / len(qs):.1f} · cut {cut} · glued {glued} · "
          f"torch threads {os.environ.get('KGQA_TORCH_THREADS', '?')}")


def _kgqa(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kgqa.app.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **ENV})


def bench_open(args) -> None:
    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph

    folder = Path(tempfile.mkdtemp(prefix="kgqa-technical-"))
    for name, p in PDFS.items():
        shutil.copy(p, folder / f"{name}.pdf")
    p = _kgqa("load", "documents", str(folder), "--json", "--force")
    if p.returncode:
        raise SystemExit(p.stderr)
    rep = json.loads(p.stdout)
    print(f"loaded {rep['pages']} pages · {rep['chunks']} chunks · {rep['entities']} entities · "
          f"{rep['relations']} relations · {rep['seconds']} s")
    with Graph(Settings()) as g, g.session() as s:
        ents = [r["name"] for r in s.run("MATCH (e:DocEntity) WHERE e.doc_id IN $ids RETURN e.name AS name",
                                         ids=list(PDFS))]
        rels = s.run("MATCH (:DocEntity {doc_id: $a})-[r:DOC_REL]->() RETURN count(r) AS n, "
                     "count(CASE WHEN coalesce(r.sentence, '') <> '' THEN 1 END) AS with_sentence",
                     a=list(PDFS)[0]).single()
    bare = [e for e in ents if re.fullmatch(r"[\d.,:%\s-]+", e or "")]
    print(f"entities {len(ents)} · bare numbers {len(bare)} ({', '.join(bare[:8])}) · sample: "
          f"{', '.join(sorted(ents, key=len)[len(ents) // 2:len(ents) // 2 + 10])}")
    print(f"relations of {list(PDFS)[0]}: {rels['n']} · with their sentence {rels['with_sentence']}")
    rows = {}
    for label, extra in (("mKG-RAG", []), ("chunks-only", ["--ablate", "chunks_only"])):
        p = _kgqa("eval", str(HERE / "questions.jsonl"), "--method", "mkgrag", *extra, "--json")
        if p.returncode:
            raise SystemExit(p.stderr)
        r = json.loads(p.stdout)
        rows[label] = r
        m = r["methods"]["mkgrag"] if "methods" in r else r
        print(f"{label}: EM {m.get('em', m.get('exact_match'))} · {json.dumps({k: v for k, v in m.items() if k in ('sbert', 'document_recall', 'evidence_recall', 'answered')})}")
    (folder / "eval.json").write_text(json.dumps(rows, indent=1))
    print(f"reports: {folder / 'eval.json'}")
    if not args.keep:
        for d in PDFS:
            _kgqa("docs", "rm", d)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("reading")
    o = sub.add_parser("open")
    o.add_argument("--keep", action="store_true", help="keep the two documents loaded")
    args = ap.parse_args()
    {"reading": bench_reading, "open": bench_open}[args.cmd](args)


if __name__ == "__main__":
    main()
