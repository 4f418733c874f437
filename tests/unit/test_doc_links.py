"""Every relative link of README.md, CHANGELOG.md, docs/ (guide, reference, benchmarks, architecture) leads to a
file that exists and, with a ``#fragment``, to a heading of that file (GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", REPO / "CHANGELOG.md", REPO / "docs" / "benchmarks.md",
             REPO / "docs" / "ARCHITECTURE.md",
             *sorted((REPO / "docs" / "guide").glob("*.md")), *sorted((REPO / "docs" / "reference").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens, a
    repeated anchor numbered -1, -2, …"""
    seen: dict[str, int] = {}
    out = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not re.match(r"#{1,6} ", line):
            continue
        text = line.lstrip("#").strip().lower()
        slug = "".join(ch for ch in text if ch.isalnum() or ch in " -_").replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(path: Path):
    fenced = False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or line.startswith("    "):
            continue
        for target in LINK.findall(line):
            if not re.match(r"[a-z]+:", target):
                yield f"{path.relative_to(REPO)}:{n}", target


LINKS = [(w, t) for doc in DOCUMENTS for w, t in links(doc)]


@pytest.mark.parametrize("where,target", LINKS, ids=[f"{w} {t}" for w, t in LINKS])
def test_every_link_leads_somewhere(where, target):
    source = REPO / where.split(":")[0]
    file, _, fragment = target.partition("#")
    dest = (source.parent / file).resolve() if file else source
    assert dest.exists(), f"{where}: {target}: no file {dest.relative_to(REPO) if REPO in dest.parents else dest}"
    if fragment and dest.suffix == ".md":
        assert fragment in anchors(dest), f"{where}: {target}: no heading with anchor #{fragment} in {dest.name}"


def test_the_check_knows_github_anchors(tmp_path):
    doc = tmp_path / "a.md"
    doc.write_text("# Title\n## `--bulk` against the Bolt loader, 1,000,000 triples\n## Round 2 (λ chosen)\n"
                   "## Serving\n## Serving\n```\n# not a heading\n```\n")
    assert anchors(doc) == {"title", "--bulk-against-the-bolt-loader-1000000-triples", "round-2-λ-chosen", "serving",
                            "serving-1"}
    assert len(LINKS) > 100
