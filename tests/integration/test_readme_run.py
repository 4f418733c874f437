"""README commands run as the README shows them, against the test Neo4j and the demo KG (graph-only, so no model
reply is needed): the option, ablation and JSON flags of its `kgqa ask` line, and its `kgqa methods` line.
tests/unit/test_readme_commands.py checks that every README command has a test that runs it."""

from __future__ import annotations

import json

from tests.conftest import run_kgqa

GRAPH_ONLY = {"KGQA_CHAT_BACKEND": "none"}


def test_readme_ask_with_options_an_ablation_and_json(demo_kg):
    """README: kgqa ask "…" -o M1=30 -o Dmax=3 --ablate no_visual_intent --json"""
    p = run_kgqa("ask", "Where was Elon Musk born?", "-o", "M1=30", "-o", "Dmax=3", "--ablate", "no_visual_intent",
                 "--json", env=GRAPH_ONLY)
    assert p.returncode == 0, p.stderr
    ans = json.loads(p.stdout)
    assert ans["method"] == "vispath" and ans["start_entity_id"] == "Q317521"     # Elon Musk
    assert ans["answer"] and ans["evidence"] and ans["hops"] <= 3


def test_readme_methods_lists_each_method_with_its_options():
    """README: kgqa methods"""
    p = run_kgqa("methods")
    assert p.returncode == 0, p.stderr
    for name in ("vispath", "mkgrag", "grasp"):
        assert p.stdout.count(f"\n{name} — ") + p.stdout.startswith(f"{name} — ") == 1
    assert "-o M1=30" in p.stdout and "ablations (--ablate): no_graph_validation" in p.stdout
