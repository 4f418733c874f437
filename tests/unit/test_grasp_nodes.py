"""GraSP's node-scoring head (``head=nodes``): LLM_select without a soft-prompt LLM.

The graph, encoder and chat are the fakes of test_grasp.py; the head is a real (tiny)
``GraphNodeScorer`` saved and loaded through the checkpoint module.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kgqa.core.errors import BadModelReply, InvalidInput
from kgqa.methods.grasp.nodes import kg_fingerprint
from tests.unit.test_grasp import NAMES, RELS, make, q

torch = pytest.importorskip("torch")
GRAPH_ONLY = BadModelReply("graph-only", code="graph_only")


def save_head(path, fingerprint=None, seed=0, catalogue=None):
    from kgqa.gnn import checkpoint as ckpt
    from kgqa.gnn.encoder import GraphNodeScorer

    torch.manual_seed(seed)
    fp = fingerprint or kg_fingerprint({r: (n, None) for r, n in RELS.items()})
    return ckpt.save(path, GraphNodeScorer(384, 384, hidden_channels=8, heads=2, projector_hidden=8),
                     variant="nodes", meta={"kg_fingerprint": fp, "kg_relations": len(RELS),
                                            **({"kg_catalogue": catalogue} if catalogue else {})})


def test_auto_head_is_the_soft_prompt_only_when_a_model_that_reads_it_is_served(tmp_path):
    ck = str(save_head(tmp_path / "n.safetensors"))
    local = SimpleNamespace(models_dir=tmp_path, softprompt_backend="local")
    served = SimpleNamespace(models_dir=tmp_path, softprompt_backend="vllm")
    assert make([], [], settings=local, head="auto", checkpoint=ck)[0].variant == "nodes"
    with pytest.raises(InvalidInput, match="no trained gat encoder"):
        make([], [], settings=served, head="auto")
    assert make([], [], settings=local, head="auto", triples_only=True)[0].variant == "triples"
    with pytest.raises(InvalidInput, match="head=nodes has no soft prompt"):
        make([], [], head="nodes", text_soft_prompt=True)


def test_graph_only_answer_is_one_node_the_top_scored(tmp_path):
    ck = str(save_head(tmp_path / "n.safetensors"))
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0)
    a = m.answer(q())
    r = a.details["rounds"][0]
    top = r["scores"][0]
    assert a.answer == top["name"] == NAMES[a.answer_id] and a.answer_id == top["id"]
    assert a.answer_id != "Q1" and ";" not in a.answer and "," not in a.answer     # one entity, never a list
    ps = [s["p"] for s in r["scores"]]
    assert ps == sorted(ps, reverse=True) and 0 < sum(ps) <= 1.0001
    assert a.hops == 1 and "by the node head" in a.stop_reason and m.softprompt.calls == []
    assert m.chat.prompts == [] and a.fallbacks == []          # no LLM in the loop by default


def test_below_answer_p_the_loop_moves_on_from_the_top_node_and_answers_the_best_seen(tmp_path):
    ck = str(save_head(tmp_path / "n.safetensors"))
    m, _ = make([GRAPH_ONLY] * 3, [], head="nodes", checkpoint=ck, answer_p=1.0, hops=1)
    a = m.answer(q())
    rounds = a.details["rounds"]
    assert len(rounds) == 3 and rounds[0]["next_topic"] == rounds[0]["scores"][0]["id"]
    assert rounds[1]["topic"]["id"] == rounds[0]["scores"][0]["id"]
    best = max((r["scores"][0] for r in rounds), key=lambda s: s["p"])
    assert a.answer_id == best["id"] and a.answer == best["name"] and "(forced)" in a.stop_reason
    visited = {r["topic"]["id"] for r in rounds}
    assert all(s["id"] not in {r["topic"]["id"]} for r in rounds for s in r["scores"])
    assert len(visited) == 3


def test_llm_answer_is_grounded_to_a_node_else_the_top_node(tmp_path):
    ck = str(save_head(tmp_path / "n.safetensors"))
    m, _ = make([{"decision": "ANSWER", "answer": "gamma river", "evidence": "e"}], [], head="nodes", checkpoint=ck,
                answer_llm=True)
    a = m.answer(q())
    assert (a.answer, a.answer_id) == ("Gamma River", "Q3")
    m, _ = make([{"decision": "ANSWER", "answer": "Gamma River; Beta City", "evidence": "e"}], [], head="nodes",
                checkpoint=ck, answer_llm=True)
    a = m.answer(q())
    assert a.answer == a.details["rounds"][0]["scores"][0]["name"] and a.answer_id in NAMES
    assert "unresolved" in [f.code for f in a.fallbacks]


def test_a_head_trained_on_another_kg_is_refused_in_one_line(tmp_path):
    ck = str(save_head(tmp_path / "n.safetensors", fingerprint="0123456789abcdef"))
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck)
    with pytest.raises(InvalidInput, match=r"trained on another KG \(relation catalogue 0123456789abcdef, 4 "
                                           r"relations.*kgqa train grasp --head nodes") as e:
        m.answer(q())
    assert "\n" not in str(e.value)


def test_a_head_is_used_on_a_larger_kg_holding_its_relations_and_refused_when_most_are_missing(tmp_path):
    # trained on a 3-relation catalogue the loaded KG holds (it has one more): used, whatever the fingerprint
    ck = str(save_head(tmp_path / "a.safetensors", fingerprint="0123456789abcdef",
                       catalogue={"P1": "capital", "P2": "river", "P4": "located in"}))
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0)
    assert m.answer(q()).answer_id in NAMES
    # trained on relations of which the loaded KG holds 1 of 3 under the same name: refused, in one line
    ck = str(save_head(tmp_path / "b.safetensors", catalogue={"P1": "capital", "P2": "currency", "P9": "author"}))
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck)
    with pytest.raises(InvalidInput, match=r"trained on another KG \(relation catalogue [0-9a-f]{16}: the loaded KG "
                                           r"holds 1 of its 3 relations under the same names") as e:
        m.answer(q())
    assert "\n" not in str(e.value)


def test_missing_nodes_checkpoint_names_the_training_command(tmp_path):
    with pytest.raises(InvalidInput, match=r"no trained nodes encoder at .*kgqa train grasp --head nodes"):
        make([], [], head="nodes", checkpoint=str(tmp_path / "none.safetensors"))


def test_node_cross_entropy_training_puts_the_gold_node_on_top(tmp_path):
    from kgqa.gnn import checkpoint as ckpt
    from kgqa.gnn.encoder import GraphNodeScorer
    from kgqa.gnn.train import TrainConfig, train
    from kgqa.methods.grasp.nodes import node_loss, node_probabilities

    torch.manual_seed(0)
    n = 6
    inputs = (torch.randn(n, 384), torch.tensor([[0, 0, 1, 2, 3], [1, 2, 3, 4, 5]]), torch.tensor([0, 1, 0, 1, 0]),
              torch.randn(2, 384), torch.randn(384), torch.tensor([True] + [False] * (n - 1)))
    ex = SimpleNamespace(inputs=inputs, target=4)
    head = GraphNodeScorer(384, 384, hidden_channels=8, heads=2, projector_hidden=8)
    rep = train(head, [ex] * 20, lambda e, p: node_loss(e, p.inputs, p.target), variant="nodes",
                checkpoint=tmp_path / "h.safetensors", config=TrainConfig(epochs=1, lr=1e-2, seed=0))
    assert rep.step_losses[-1] < rep.step_losses[0]
    loaded, _ = ckpt.load(tmp_path / "h.safetensors", variant="nodes")
    probs = node_probabilities(loaded.eval(), inputs)
    assert int(probs.argmax()) == 4 and probs[0] == 0.0
