"""GraSP's node-scoring head (``head=nodes``): LLM_select without a soft-prompt LLM.

The graph, encoder and chat are the fakes of test_grasp.py; the head is a real (tiny)
``GraphNodeScorer`` saved and loaded through the checkpoint module.
"""

from __future__ import annotations

import re
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
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0, ranker="head")
    a = m.answer(q())
    r = a.details["rounds"][0]
    top = r["scores"][0]
    assert a.answer == top["name"] == NAMES[a.answer_id] and a.answer_id == top["id"]
    assert a.answer_id != "Q1" and ";" not in a.answer and "," not in a.answer     # one entity, never a list
    ps = [s["p"] for s in r["scores"]]
    assert ps == sorted(ps, reverse=True) and 0 < sum(ps) <= 1.0001
    assert a.hops == 1 and "by the node head" in a.stop_reason and m.softprompt.calls == []
    assert m.chat.prompts == [] and a.fallbacks == []          # no LLM in the loop by default


def test_with_no_chain_reader_the_head_ranks_and_the_run_says_why_once(tmp_path):
    ck = str(save_head(tmp_path / "n.safetensors"))
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0,
                reader_checkpoint=str(tmp_path / "missing.safetensors"))
    a = m.answer(q())
    fb = [f for f in a.fallbacks if f.code == "checkpoint"]
    assert len(fb) == 1 and "missing.safetensors" in fb[0].message and "the node head ranks" in fb[0].message
    assert "by the node head" in a.stop_reason


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


def test_the_answer_is_the_top_node_of_the_questions_answer_type(tmp_path):
    # "In which town …": the head's own top node is not a town; the best-scored town is the answer (one entity)
    ck = str(save_head(tmp_path / "n.safetensors"))
    question = "In which town is the twin town of the capital of Alpha Land?"
    described = {"Q2": "city, capital of Alpha Land", "Q3": "river", "Q4": "town in Alpha Land", "Q6": "hill",
                 "Q5": "sea", "Q7": "lake"}
    m, graph = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0, answer_typing=False)
    graph.descriptions = dict(described)
    plain = m.answer(q(question))
    assert plain.answer_id != "Q4"                  # typing off: the seeded head's top node, another one
    m, graph = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0)
    graph.descriptions = dict(described)
    a = m.answer(q(question))
    assert (a.answer_id, a.answer) == ("Q4", "Delta Town") and "answer type" in a.stop_reason
    # nodes typed as something else left LLM_select's ranking; an untyped node would have stayed
    assert {s["id"] for s in a.details["rounds"][0]["scores"]} == {"Q4"}


def test_answer_typing_moves_on_only_when_every_node_is_typed_otherwise_and_without_evidence_changes_nothing(tmp_path):
    ck = str(save_head(tmp_path / "n.safetensors"))
    question = "In which town is the twin town of the capital of Alpha Land?"
    # type evidence, but no town among the round's nodes: move on from the top node (not an answer yet)
    m, graph = make([GRAPH_ONLY] * 3, [], head="nodes", checkpoint=ck, answer_p=0.0, hops=1)
    graph.descriptions = {i: "village" for i in ("Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "Q7")}
    rounds = m.answer(q(question)).details["rounds"]
    assert rounds[0]["next_topic"] == rounds[0]["scores"][0]["id"]
    # some nodes typed as something else, none of the answer's type, others untyped: the head decides over the
    # untyped ones (answer_p 0: round 1's top untyped node)
    m, graph = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0)
    graph.descriptions = {"Q2": "village"}
    a = m.answer(q(question))
    assert a.hops == 1 and a.answer_id != "Q2" and "Q2" not in {s["id"] for s in a.details["rounds"][0]["scores"]}
    # no entity has type evidence: the head decides alone (answer_p 0: the top node, round 1)
    m, graph = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0)
    a = m.answer(q(question))
    assert a.answer_id == a.details["rounds"][0]["scores"][0]["id"] and a.hops == 1


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


def refused_head_answer(m):
    """The answer of a GraSP whose head was trained on another KG, and the one fallback line saying so."""
    a = m.answer(q())
    fb = [f for f in a.fallbacks if f.code == "checkpoint" and f.message.startswith("node head:")]
    assert len(fb) == 1 and "\n" not in fb[0].message, a.fallbacks
    return a, fb[0].message


def test_a_head_trained_on_another_kg_is_not_used_the_relation_chains_rank_and_the_run_says_why(tmp_path):
    ck = str(save_head(tmp_path / "n.safetensors", fingerprint="0123456789abcdef"))
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck)
    a, why = refused_head_answer(m)
    assert re.search(r"trained on another KG \(relation catalogue 0123456789abcdef, 4 relations.*kgqa train grasp "
                     r"--head nodes.*ranked by their relation chains", why)
    # answered in round 1, not refused: the end of the chain whose relation names read closest to the question
    # ("What is the capital of Alpha Land?": Alpha Land -capital-> Beta City)
    assert (a.answer_id, a.hops) == ("Q2", 1) and "relation chain reads best" in a.stop_reason
    assert a.details["rounds"][0]["ranked_by"] == "relation chains"


def test_a_head_is_used_on_a_larger_kg_holding_its_relations_and_not_when_most_are_missing(tmp_path):
    # trained on a 3-relation catalogue the loaded KG holds (it has one more): used, whatever the fingerprint
    ck = str(save_head(tmp_path / "a.safetensors", fingerprint="0123456789abcdef",
                       catalogue={"P1": "capital", "P2": "river", "P4": "located in"}))
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck, answer_p=0.0)
    a = m.answer(q())
    assert a.answer_id in NAMES and a.details["rounds"][0]["ranked_by"] == "node head"
    assert not [f for f in a.fallbacks if f.message.startswith("node head:")]
    # trained on relations of which the loaded KG holds 1 of 3 under the same name: the relation chains rank
    ck = str(save_head(tmp_path / "b.safetensors", catalogue={"P1": "capital", "P2": "currency", "P9": "author"}))
    m, _ = make([GRAPH_ONLY], [], head="nodes", checkpoint=ck)
    a, why = refused_head_answer(m)
    assert re.search(r"trained on another KG \(relation catalogue [0-9a-f]{16}: the loaded KG holds 1 of its 3 "
                     r"relations under the same names", why) and a.answer_id == "Q2"


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


def chain_subgraph():
    """Topic T; hop 1: T -capital-> C, B -twin-> T (reversed), T -capital-> C2 (a sibling); hop 2: C -river-> R."""
    from kgqa.methods.grasp.subgraph import Fact, Subgraph

    sub = Subgraph("T", {"T": "Topic", "C": "Capital", "B": "Twin", "C2": "Other", "R": "River"},
                   node_hop={"T": 0, "C": 1, "B": 1, "C2": 1, "R": 2})
    sub.facts = [Fact("T", "cap", "C", 1, 0.9), Fact("B", "twin", "T", 1, 0.5), Fact("T", "cap", "C2", 1, 0.4),
                 Fact("C2", "river", "R", 2, 0.3), Fact("C", "river", "R", 2, 0.8)]
    return sub


def unit(v):
    import numpy as np

    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_extraction_chain_is_the_first_fact_of_each_hop_walked_from_the_topic():
    from kgqa.methods.grasp.subgraph import extraction_chain

    sub = chain_subgraph()
    # R is reached at hop 2 first by C2 -river-> R (the first hop-2 fact in extraction order), not by C
    assert [(f.key, d) for f, d in extraction_chain(sub, "R")] == [("T|cap|C2", 1), ("C2|river|R", 1)]
    assert [(f.key, d) for f, d in extraction_chain(sub, "B")] == [("B|twin|T", -1)]
    assert extraction_chain(sub, "T") == []


def test_path_features_rows_follow_node_order_and_score_the_chain_against_the_question():
    import numpy as np

    from kgqa.methods.grasp.subgraph import PATH_FEATURES, PATH_POSITIONS, path_features

    sub = chain_subgraph()
    rel = {"cap": 0, "twin": 1, "river": 2}
    emb = np.stack([unit([1, 0, 0]), unit([0, 1, 0]), unit([0, 0, 1])])
    q = unit([0.6, 0, 0.8])                           # "the river of the capital": cap 0.6, river 0.8, twin 0
    f = path_features(sub, rel, emb, q)
    assert f.shape == (5, PATH_FEATURES) and f.dtype == np.float32
    assert not f[0].any()                              # the topic
    b = 2 * PATH_POSITIONS
    r = f[sub.node_ids.index("R")]
    assert np.allclose(r[:3], [0.6, 0.8, 0]) and np.allclose(r[3:6], [1, 1, 0])
    assert np.allclose(r[b:b + 7], [0.8, 0.7, 1.4, 0.8, 0.6, 1.4 / np.sqrt(2), 2 / 3])
    c = f[sub.node_ids.index("C")]                     # one step: the chain of the intermediate kind
    assert np.allclose(c[b:b + 7], [0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 1 / 3])
    tw = f[sub.node_ids.index("B")]
    assert tw[3] == -1 and np.isclose(tw[b], 0.0)      # walked against the fact; twin does not match q
    assert r[b + 2] > c[b + 2]                          # the full chain covers more of the question
    # over every chain: R by cap, river (sum 1.4); C only by cap (T-cap->C2-river->R<-river-C walks back against
    # river: siblings, not a chain); B by twin
    assert np.allclose(r[b + 7:b + 10], [1.4, 1.4 / np.sqrt(2), 2 / 3])
    assert np.allclose(c[b + 7:b + 10], [0.6, 0.6, 1 / 3])
    assert np.allclose(tw[b + 7:b + 10], [0.0, 0.0, 1 / 3])


def test_chain_cosines_hold_for_relations_that_are_not_orthogonal():
    """The chain-embedding cosine cos(q, Σ r_i) is computed from the relations' Gram matrix, not from summed
    vectors: with correlated relation embeddings its cross terms must count."""
    import numpy as np

    from kgqa.methods.grasp.subgraph import PATH_POSITIONS, path_features

    sub = chain_subgraph()
    rel = {"cap": 0, "twin": 1, "river": 2}
    rng = np.random.default_rng(3)
    emb = rng.standard_normal((3, 8)).astype(np.float32)
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)
    q = emb[0] + emb[2] + 0.3 * rng.standard_normal(8).astype(np.float32)
    q /= np.linalg.norm(q)
    f = path_features(sub, rel, emb, q)
    b = 2 * PATH_POSITIONS
    v = emb[0] + emb[2]                                # R's chain: cap, then river
    expect = float(v @ q) / float(np.linalg.norm(v))
    r = f[sub.node_ids.index("R")]
    assert np.isclose(r[b + 5], expect, atol=1e-5)
    assert r[b + 8] >= expect - 1e-5                   # the best over every chain is at least this one's


def test_a_head_with_path_features_scores_with_them_and_records_them_in_its_config(tmp_path):
    from kgqa.gnn import checkpoint as ckpt
    from kgqa.gnn.encoder import GraphNodeScorer

    torch.manual_seed(0)
    n, p = 6, 5
    inputs = (torch.randn(n, 384), torch.tensor([[0, 0, 1, 2, 3], [1, 2, 3, 4, 5]]), torch.tensor([0, 1, 0, 1, 0]),
              torch.randn(2, 384), torch.randn(384), torch.tensor([True] + [False] * (n - 1)),
              torch.tensor([0, 1, 1, 2, 2, 2]))
    path = torch.randn(n, p)
    head = GraphNodeScorer(384, 384, hidden_channels=8, heads=2, projector_hidden=8, hop_features=3,
                           path_features=p).eval()
    with torch.inference_mode():
        out = head(*inputs, path)
        assert out.shape == (n,)
        assert not torch.allclose(out, head(*inputs, path.flip(0)))      # the features move the scores
        assert not torch.allclose(out, head(*inputs, None))
    assert head.config()["path_features"] == p
    ckpt.save(tmp_path / "p.safetensors", head, variant="nodes")
    loaded, info = ckpt.load(tmp_path / "p.safetensors", variant="nodes")
    assert info["config"]["path_features"] == p
    with torch.inference_mode():
        assert torch.allclose(loaded.eval()(*inputs, path), out)
    with pytest.raises(ValueError, match="node_path has shape"):
        head(*inputs, torch.randn(n, p + 1))


def test_a_head_saved_without_path_features_loads_and_ignores_them(tmp_path):
    """Checkpoints from before the path features (the config has no path_features) load and score as before."""
    from kgqa.gnn import checkpoint as ckpt
    from kgqa.methods.grasp.nodes import node_probabilities
    from kgqa.methods.grasp.subgraph import PATH_FEATURES

    save_head(tmp_path / "old.safetensors")
    head, info = ckpt.load(tmp_path / "old.safetensors", variant="nodes")
    assert "path_features" not in info["config"] and head.path_features == 0
    n = 4
    inputs = (torch.randn(n, 384), torch.tensor([[0, 1, 2], [1, 2, 3]]), torch.tensor([0, 1, 0]),
              torch.randn(2, 384), torch.randn(384), torch.tensor([True] + [False] * (n - 1)),
              torch.tensor([0, 1, 2, 3]))
    with_path = node_probabilities(head.eval(), inputs + (torch.randn(n, PATH_FEATURES),))
    assert torch.allclose(torch.from_numpy(with_path), torch.from_numpy(node_probabilities(head, inputs)))
