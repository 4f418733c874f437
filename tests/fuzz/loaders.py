"""A coverage-guided fuzz run (atheris, libFuzzer) of both loaders' validation: whatever bytes the
input files hold, validation ends with the rows it accepts or one ``InvalidInput`` line, never
another exception (a traceback for a user).

* Wikidata5M: the entity, relation, triple and text files get fuzzed bytes after a few valid lines;
  the incremental loader's validation and ``--bulk``'s validation-to-CSV run on them, strict or
  lenient, with or without ``--limit``.
* Documents: a Markdown, an HTML and an E-VQA JSON-lines file get fuzzed bytes; discovery (reading,
  UTF-8, parsing, image references) runs on them, strict or lenient.

Run: ``python -m tests.fuzz.loaders -runs=3000 -seed=26`` (libFuzzer's options; exit 0 when no input
raised). tests/unit/test_fuzz_loaders.py runs it on a fixed budget.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import atheris

from tests.fuzz.scratch import work_dir

with atheris.instrument_imports():
    from kgqa.core.config import Settings
    from kgqa.core.errors import InvalidInput
    from kgqa.loaders.documents.discover import discover
    from kgqa.loaders.documents.options import DocOptions
    from kgqa.loaders.progress import Bars
    from kgqa.loaders.rejects import Rejects
    from kgqa.loaders.wikidata5m.bulk import BulkLoader
    from kgqa.loaders.wikidata5m.load import Loader
    from kgqa.loaders.wikidata5m.options import LoadOptions

ROOT = work_dir()
SETTINGS = Settings(data_dir=ROOT / "data")


class _NoGraph:
    """Validation reads only the settings; any query would be a bug of this harness."""

    settings = SETTINGS


def _chunk(fdp: atheris.FuzzedDataProvider) -> bytes:
    return fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 400))


def wikidata5m(fdp: atheris.FuzzedDataProvider) -> None:
    d = ROOT / "wd"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    (d / "wikidata5m_entity.txt").write_bytes(b"Q1\tone\talias\nQ2\ttwo\n" + _chunk(fdp))
    (d / "wikidata5m_relation.txt").write_bytes(b"P1\trelation\n" + _chunk(fdp))
    (d / "wikidata5m_transductive_train.txt").write_bytes(b"Q1\tP1\tQ2\n" + _chunk(fdp))
    (d / "wikidata5m_transductive_valid.txt").write_bytes(_chunk(fdp))
    (d / "wikidata5m_transductive_test.txt").write_bytes(_chunk(fdp))
    if fdp.ConsumeBool():
        (d / "wikidata5m_text.txt").write_bytes(b"Q1\ta description\n" + _chunk(fdp))
    limit = fdp.ConsumeIntInRange(0, 3) if fdp.ConsumeBool() else None
    opts = LoadOptions(strict=fdp.ConsumeBool(), limit=limit, embeddings=False,
                       rejects_path=ROOT / "rejects.tsv")
    bulk = fdp.ConsumeBool()
    try:
        loader = (BulkLoader if bulk else Loader)(_NoGraph(), d, None, None, opts)
        with Bars(False) as bars:
            if bulk:
                loader.validate_to_csv(ROOT / "csv", bars)
            else:
                loader.validate(bars)
        loader.rejects.close()
    except InvalidInput as e:
        assert "\n" not in str(e), str(e)[:300]


def documents(fdp: atheris.FuzzedDataProvider) -> None:
    d = ROOT / "docs"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    (d / "a.md").write_bytes(b"# Title\n\nSome text.\n" + _chunk(fdp))
    (d / "b.html").write_bytes(b"<h1>Title</h1><p>text</p>" + _chunk(fdp))
    if fdp.ConsumeBool():
        (d / "kb.jsonl").write_bytes(_chunk(fdp))
    try:
        discover(d, DocOptions(strict=fdp.ConsumeBool()), Rejects(fdp.ConsumeBool()))
    except InvalidInput as e:
        assert "\n" not in str(e), str(e)[:300]


def one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    (wikidata5m if fdp.ConsumeBool() else documents)(fdp)


def main() -> None:
    try:
        atheris.Setup(sys.argv, one_input)
        atheris.Fuzz()
    finally:
        shutil.rmtree(ROOT, ignore_errors=True)


if __name__ == "__main__":
    main()
