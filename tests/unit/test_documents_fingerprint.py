"""A document's fingerprint holds its extractor's identity and version (the version includes a digest of
the extractor's code): a changed extractor re-extracts an unchanged file and says "re-extracted", never
"unchanged"; ``--force`` re-extracts on demand; changed content is still "replaced". The graph is a
stand-in that remembers what was written (the real Neo4j: tests/integration/test_documents_reliability.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import kgqa.loaders.documents.loader as L
from kgqa.loaders.documents.options import DocOptions, DocResult


class StatusGraph:
    """docs_document_status from what load_one 'wrote' (load_one is replaced by ``write`` below)."""

    def __init__(self):
        self.docs: dict[str, dict] = {}
        self.entities = 0                                    # Wikidata entities in the graph

    def read(self, name, **kw):
        if name == "load_graph_counts_fast":
            return [{"entities": self.entities, "relationships": 0}]
        assert name == "docs_document_status"
        return [dict(self.docs[i], id=i) for i in kw["ids"] if i in self.docs]

    def write(self, name, **kw):
        assert name == "docs_move_origin"
        self.docs[kw["id"]]["origin"] = kw["origin"]

    def apply_schema(self):
        pass

    def await_indexes(self):
        pass


def _loader(graph, monkeypatch, **opts):
    from kgqa.core.config import Settings

    settings = Settings(doc_extractor="cpu", vision_backend="local")
    loader = L.DocumentLoader(graph, SimpleNamespace(), settings, DocOptions(**opts))

    def load_one(doc, report, prog=None, old=None):          # what write_document stores on the Document node
        graph.docs[doc.id] = {"status": "complete", "content_hash": doc.content_hash, "extractor": loader.extractor,
                              "origin": doc.origin, "source": doc.source, "nodes": 1, "link_key": doc.link_key}
        return DocResult(doc.id, doc.source, "written")

    monkeypatch.setattr(loader, "load_one", load_one)
    return loader


def _statuses(report):
    return {d.id: d.status for d in report.documents}


@pytest.fixture()
def folder(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "collins.md").write_text("# Collins\n\nMichael Collins flew on Apollo 11.\n", encoding="utf-8")
    (d / "armstrong.md").write_text("# Armstrong\n\nNeil Armstrong walked on the Moon.\n", encoding="utf-8")
    return d


def test_the_extractor_string_names_identity_and_a_digest_of_its_code(monkeypatch):
    loader = _loader(StatusGraph(), monkeypatch)
    version, identity, visual = loader.extractor.split(" · ")
    assert identity == L.CPU_EXTRACTOR and visual == L.STAND_IN
    assert version == f"{L.EXTRACTOR_VERSION}+{L.extractor_code('cpu')}"
    assert L.extractor_code("cpu") != L.extractor_code("llm")


def test_a_changed_extractor_re_extracts_an_unchanged_document(folder, monkeypatch):
    graph = StatusGraph()
    rep = _loader(graph, monkeypatch).load(folder)
    assert _statuses(rep) == {"armstrong": "written", "collins": "written"}
    rep = _loader(graph, monkeypatch).load(folder)
    assert _statuses(rep) == {"armstrong": "unchanged", "collins": "unchanged"}
    # the extractor's code changes (an edit of cpu_extract.py without a version bump): every document again
    monkeypatch.setattr(L, "extractor_code", lambda kind: "0123456789ab")
    rep = _loader(graph, monkeypatch).load(folder)
    assert _statuses(rep) == {"armstrong": "re-extracted", "collins": "re-extracted"}
    assert rep.as_dict()["re_extracted"] == 2 and rep.as_dict()["unchanged"] == 0
    assert graph.docs["collins"]["extractor"].startswith(f"{L.EXTRACTOR_VERSION}+0123456789ab · ")
    rep = _loader(graph, monkeypatch).load(folder)
    assert _statuses(rep) == {"armstrong": "unchanged", "collins": "unchanged"}


def test_changed_content_is_replaced_and_force_re_extracts_the_rest(folder, monkeypatch):
    graph = StatusGraph()
    _loader(graph, monkeypatch).load(folder)
    (folder / "collins.md").write_text("# Collins\n\nMichael Collins orbited the Moon.\n", encoding="utf-8")
    rep = _loader(graph, monkeypatch, force=True).load(folder)
    assert _statuses(rep) == {"armstrong": "re-extracted", "collins": "replaced"}
    rep = _loader(graph, monkeypatch).load(folder)
    assert _statuses(rep) == {"armstrong": "unchanged", "collins": "unchanged"}


def test_force_never_overrides_the_refusal_of_an_id_from_another_file(folder, tmp_path, monkeypatch):
    graph = StatusGraph()
    _loader(graph, monkeypatch).load(folder)
    other = tmp_path / "other"
    other.mkdir()
    (other / "collins.md").write_text("# Collins\n\nCollins the publisher.\n", encoding="utf-8")
    from kgqa.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="already loaded from another file"):
        _loader(graph, monkeypatch, force=True).load(other)
    assert Path(graph.docs["collins"]["origin"]).parent == folder.resolve()


def test_other_link_settings_or_a_newly_loaded_kg_link_again_never_unchanged(folder, monkeypatch):
    """Issue 62, item 9: a reload after --no-link (or with another --link-threshold) said "unchanged" and never
    linked; documents loaded before the Wikidata KG were never linked by a plain rerun."""
    graph = StatusGraph()
    rep = _loader(graph, monkeypatch, link=False).load(folder)
    assert _statuses(rep) == {"armstrong": "written", "collins": "written"}
    rep = _loader(graph, monkeypatch).load(folder)                        # linking on: link them now
    assert _statuses(rep) == {"armstrong": "relinked", "collins": "relinked"} and rep.as_dict()["relinked"] == 2
    assert _statuses(_loader(graph, monkeypatch).load(folder)) == {"armstrong": "unchanged", "collins": "unchanged"}
    rep = _loader(graph, monkeypatch, link_threshold=0.6).load(folder)
    assert set(_statuses(rep).values()) == {"relinked"}
    graph.entities = 4_800_000                                            # the Wikidata KG loaded since
    assert set(_statuses(_loader(graph, monkeypatch, link_threshold=0.6).load(folder)).values()) == {"relinked"}
    assert set(_statuses(_loader(graph, monkeypatch, link_threshold=0.6).load(folder)).values()) == {"unchanged"}
    for d in graph.docs.values():                                         # stored by an earlier version: as it is
        d["link_key"] = None
    assert set(_statuses(_loader(graph, monkeypatch).load(folder)).values()) == {"unchanged"}
