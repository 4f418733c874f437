"""The method contract on a real graph: every registered method (the shipped three and the test's fourth,
tests/unit/test_method_contract.Lookup) answers a demo question through the pipeline, and every node its
evidence names is a node of the graph (the trace writer resolves each one before it writes; the test
also reads them back). Graph-only (KGQA_CHAT_BACKEND=none): no model reply decides the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa.core.result import ChunkEvidence, PathEvidence, SubgraphEvidence
from kgqa.methods import registry
from tests.unit.test_method_contract import Lookup

pytestmark = pytest.mark.integration

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"
QUESTION = "Which city is twinned with the capital of the country whose flag is shown?"
IMAGE = DEMO / "queries" / "flag_france.jpg"


def referenced(ev) -> list[tuple[str, str]]:
    """(label, id) of every node an evidence item points at."""
    if isinstance(ev, PathEvidence):
        return [(lab, i) for s in ev.steps for lab, i in ((s.head_label, s.head_id), (s.tail_label, s.tail_id))]
    if isinstance(ev, ChunkEvidence):
        return [("Chunk", ev.chunk_id), ("Document", ev.document_id)]
    if isinstance(ev, SubgraphEvidence):
        return [(n.label, n.id) for n in ev.nodes]
    raise AssertionError(f"evidence of an unknown kind: {ev!r}")


def test_every_registered_method_answers_with_evidence_on_graph_nodes(demo_kg, settings, graph):
    from kgqa.app.pipeline import Pipeline

    registry.register_method(Lookup)
    try:
        s = settings.model_copy(update={"chat_backend": "none"})
        names = list(registry.method_classes())
        assert "lookup" in names
        pipes = Pipeline.many(s, names, write_trace=False)
        try:
            for p in pipes:
                q = "What is Q90?" if p.method_name == "lookup" else QUESTION
                ans = p.answer(q, image=None if p.method_name in ("lookup", "mkgrag") else IMAGE)
                assert ans.method == p.method_name, p.method_name
                refs = [r for ev in ans.evidence for r in referenced(ev)]
                if p.method_name != "mkgrag":        # the demo graph holds no documents unless a test loaded them
                    assert refs, f"{p.method_name} returned no evidence"
                found = {(r["label"], r["id"]) for r in
                         graph.read("trace_resolve", refs=[{"label": lab, "id": i} for lab, i in refs])}
                assert set(refs) <= found, (p.method_name, sorted(set(refs) - found))
        finally:
            for p in pipes:
                p.close()
    finally:
        registry.unregister_method(Lookup.name)
