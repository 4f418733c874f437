"""Documents cannot escape their folder (issue 26, item 3): an image must resolve inside the loaded
folder (or ``--images``); URLs, ``file:`` included, are refused; a refusal reads the same whether or
not something exists outside, and names only what the document wrote."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgqa.core.errors import InvalidInput
from kgqa.loaders.documents.discover import discover
from kgqa.loaders.documents.options import DocOptions, DocReport
from kgqa.loaders.rejects import Rejects

REPO = Path(__file__).resolve().parents[2]
FLAG = REPO / "data" / "demo" / "images" / "flag_japan.png"


def rejects(strict: bool = True):
    report = DocReport(path="x")
    return Rejects(strict, by_reason=report.skipped), report


@pytest.fixture()
def layout(tmp_path):
    """``docs/`` (the loaded folder, with images/flag.png) beside ``secret/`` (an image outside it)."""
    docs, secret = tmp_path / "docs", tmp_path / "secret"
    (docs / "images").mkdir(parents=True)
    secret.mkdir()
    (docs / "images" / "flag.png").write_bytes(FLAG.read_bytes())
    (secret / "private.png").write_bytes(FLAG.read_bytes())
    return docs, secret


def _doc(docs: Path, ref: str, name: str = "d.md") -> Path:
    p = docs / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(f"# D\n\n## S\n\n![pic]({ref})\n\nText.\n", encoding="utf-8")
    return p


def _refusal(docs: Path, ref: str) -> str:
    _doc(docs, ref)
    with pytest.raises(InvalidInput) as e:
        discover(docs, DocOptions(), rejects()[0])
    return str(e.value)


@pytest.mark.parametrize("ref", ["../secret/private.png", "../secret/absent.png", "images/../../secret/private.png"])
def test_relative_paths_out_of_the_folder_are_refused_alike_existing_or_not(layout, ref):
    docs, secret = layout
    msg = _refusal(docs, ref)
    assert f"image {ref!r} is outside the document's folder" in msg
    assert str(secret) not in msg and "not found" not in msg and "\n" not in msg


def test_absolute_paths_are_refused_whether_or_not_the_file_exists(layout):
    docs, secret = layout
    there = _refusal(docs, str(secret / "private.png"))
    absent = _refusal(docs, str(secret / "absent.png"))
    assert "is outside the document's folder" in there and "is outside the document's folder" in absent
    assert there.replace("private", "absent") == absent      # the same line: existence is not disclosed


@pytest.mark.parametrize("ref", ["file:///etc/passwd", "FILE:/etc/hostname", "file://localhost/etc/passwd"])
def test_file_urls_are_refused_never_opened(layout, ref):
    docs, _ = layout
    msg = _refusal(docs, ref)
    assert "is a URL; images are read from local files only" in msg
    assert "root:" not in msg and "not a readable image" not in msg


def test_a_symlink_inside_the_folder_pointing_outside_is_refused(layout):
    docs, secret = layout
    os.symlink(secret / "private.png", docs / "images" / "link.png")
    msg = _refusal(docs, "images/link.png")
    assert "'images/link.png' is outside the document's folder" in msg and str(secret) not in msg


def test_images_inside_the_loaded_folder_and_images_root_load(layout, tmp_path):
    docs, secret = layout
    _doc(docs, "images/flag.png")
    _doc(docs, "../images/flag.png", name="sub/nested.md")        # up from sub/, still inside docs/
    got = {d.id: d for d in discover(docs, DocOptions(), rejects()[0])}
    assert len(got["d"].images) == 1 and len(got["sub--nested"].images) == 1
    _doc(docs, str(secret / "private.png"))                        # allowed once secret/ is the --images root
    [d] = [x for x in discover(docs, DocOptions(images=secret), rejects()[0]) if x.id == "d"]
    assert len(d.images) == 1


def test_lenient_drops_and_counts_an_escaping_image_keeps_the_text(layout):
    docs, _ = layout
    _doc(docs, "../secret/private.png")
    r, report = rejects(strict=False)
    [d] = discover(docs, DocOptions(strict=False), r)
    assert not d.images and "Text." in d.sections[0].text
    assert report.skipped == {"image outside the folder": 1}


# --------------------------------------------------------------------------- issue 26 (4): progress in logs
def test_progress_in_a_log_names_rate_and_eta_per_document_and_inside_a_long_one():
    import io

    from kgqa.loaders.progress import DocumentProgress

    out = io.StringIO()
    with DocumentProgress(3, enabled=False, log=True, interval=0.0, out=out) as prog:
        prog.doc("big")
        for i in range(1, 5):
            prog.chunks("text graph", i, 4)
        prog.advance()
    lines = out.getvalue().splitlines()
    assert lines[0] == "kgqa load documents: 3 document(s) to load"
    assert any("big: text graph 2/4 chunks" in x and "chunks/s · ETA" in x for x in lines), lines
    assert "1/3 documents · big in" in lines[-1] and "documents/min · ETA" in lines[-1], lines
