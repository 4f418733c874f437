"""What the integration tests share: the ``integration`` mark and the fixture KGs in the real Neo4j.

Every test under tests/integration is marked ``integration`` here (``-m "not integration"``
leaves them all out), whatever marks its module adds (``slow``).

A fixture KG is a Wikidata5M-format folder loaded with the project's loader and deleted by id
when the module that asked for it is done, so that the next module finds the shared test graph
as it was (fixture KGs share ids: the demo's and VisPath's both hold Falcon 9):

* ``load_kg(folder, questions=..., documents=...)`` the factory: it removes what a killed run
  may have left, loads ``folder`` and removes it again at the end of the module;
* ``kg``      the VisPath fixture KG (tests/fixtures/vispath_kg: real facts, skimage photographs);
* ``demo_kg`` the bundled demo KG (data/demo), removed with every loaded document KG.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.conftest import REPO, VISPATH_KG

HERE = Path(__file__).resolve().parent
DEMO_DIR = REPO / "data" / "demo"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.integration)


def remove_kg(graph, folder: Path, *, questions: str | None = None, documents: bool = False) -> None:
    """Delete what loading ``folder`` wrote, by id: its entities, relations and images; with
    ``questions``, the traces of the questions starting with it; with ``documents``, every
    loaded document KG."""
    def ids(name):
        return [ln.split("\t")[0] for ln in (folder / name).read_text(encoding="utf-8").splitlines() if ln.strip()]

    if questions:
        graph._run("MATCH (q:Question) WHERE q.text STARTS WITH $prefix "
                   "OPTIONAL MATCH (q)-[:HAS_PATH|HAS_SUBGRAPH]->(p:Path|Subgraph) DETACH DELETE q, p",
                   {"prefix": questions}, write=True)
    graph._run("UNWIND $ids AS id MATCH (e:Entity {id: id}) DETACH DELETE e",
               {"ids": ids("wikidata5m_entity.txt")}, write=True)
    if (folder / "images").is_dir():
        shas = sorted({hashlib.sha256(p.read_bytes()).hexdigest() for p in (folder / "images").iterdir()})
        graph._run("UNWIND $s AS s MATCH (i:Image {sha256: s}) DETACH DELETE i", {"s": shas}, write=True)
    graph._run("UNWIND $ids AS id MATCH (r:Relation {id: id}) DETACH DELETE r",
               {"ids": ids("wikidata5m_relation.txt")}, write=True)
    if documents:
        graph._run("MATCH (n) WHERE n:Document OR n:Chunk OR n:DocEntity OR n:Region DETACH DELETE n", {},
                   write=True)


@pytest.fixture(scope="module")
def load_kg(graph):
    """``load_kg(folder, questions=None, documents=False)``: ``folder`` loaded into the test graph for
    this module (see ``remove_kg`` for what is removed before and after); returns the graph."""
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    loaded: list[tuple[Path, dict]] = []

    def load(folder: Path, **remove):
        remove_kg(graph, folder, **remove)
        loaded.append((folder, remove))
        load_wikidata5m(graph, folder, options=LoadOptions(progress=False))
        return graph

    yield load
    for folder, remove in reversed(loaded):
        remove_kg(graph, folder, **remove)


@pytest.fixture(scope="module")
def kg(load_kg):
    """The VisPath fixture KG; traces of questions starting 'vispath-it: ' are removed with it."""
    return load_kg(VISPATH_KG, questions="vispath-it: ")


@pytest.fixture(scope="module")
def demo_kg(load_kg):
    """The bundled demo KG; every document KG loaded meanwhile is removed with it."""
    return load_kg(DEMO_DIR, documents=True)
