"""GraSP's GAT soft-prompt encoder, projector, checkpoints and training loop on tiny tensors."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from kgqa.core.errors import InvalidInput  # noqa: E402
from kgqa.gnn import checkpoint as ckpt  # noqa: E402
from kgqa.gnn.encoder import GraphSoftPromptEncoder, TextSoftPromptEncoder  # noqa: E402
from kgqa.gnn.train import TrainConfig, epoch_order, plot_losses, train  # noqa: E402

F, D = 16, 24


def tiny_graph(n: int = 5, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    x = torch.nn.functional.normalize(torch.randn(n, F, generator=g), dim=-1)
    edge_index = torch.tensor([[0, 0, 1, 2], [1, 2, 3, 4]])
    edge_type = torch.tensor([0, 1, 2, 1])
    relations = torch.nn.functional.normalize(torch.randn(3, F, generator=g), dim=-1)
    q = torch.nn.functional.normalize(torch.randn(F, generator=g), dim=0)
    topic = torch.zeros(n, dtype=torch.bool)
    topic[0] = True
    return x, edge_index, edge_type, relations, q, topic


def enc(**kw):
    torch.manual_seed(0)
    return GraphSoftPromptEncoder(F, F, D, hidden_channels=8, heads=2, projector_hidden=12, **kw)


def test_shapes_one_token_per_node():
    m = enc()
    out = m(*tiny_graph())
    assert out.shape == (5, D)
    assert m.node_states(*tiny_graph()).shape == (5, 8)
    assert "GraphSoftPromptEncoder(16" in repr(m) and "layers=2" in repr(m)
    assert m.edge_dim == 32
    assert len(m.convs) == 2


def test_gradients_reach_every_parameter():
    m = enc()
    m(*tiny_graph()).pow(2).sum().backward()
    missing = [n for n, p in m.named_parameters() if p.grad is None or not torch.isfinite(p.grad).all()]
    assert not missing
    assert all(p.grad.abs().sum() > 0 for n, p in m.named_parameters()
               if n.startswith(("lin_in", "lin_rel", "direction", "projector")))


def test_question_and_relations_change_the_prompt():
    m = enc()
    x, ei, et, rel, q, topic = tiny_graph()
    base = m(x, ei, et, rel, q, topic)
    assert not torch.allclose(base, m(x, ei, et, rel, -q, topic))            # question-conditioned
    assert not torch.allclose(base, m(x, ei, et.flip(0), rel, q, topic))     # which relation a fact has matters
    assert not torch.allclose(base, m(x, ei.flip(0), et, rel, q, topic))     # and its direction
    # a 2-layer GAT: the 2-hop node 3 (0→1→3) feels a change at the topic, through both directions
    x2 = x.clone()
    x2[3] = -x2[3]
    assert not torch.allclose(base[0], m(x2, ei, et, rel, q, topic)[0])


def test_reset_parameters_is_deterministic_under_a_seed():
    a, b = enc(), enc()
    g = tiny_graph()
    assert torch.allclose(a(*g), b(*g))
    torch.manual_seed(1)
    a.reset_parameters()
    assert not torch.allclose(a(*g), b(*g))


def test_bad_width_heads_is_refused():
    with pytest.raises(ValueError, match="divisible"):
        GraphSoftPromptEncoder(F, F, D, hidden_channels=10, heads=4)


def test_text_soft_prompt_shapes():
    torch.manual_seed(0)
    t = TextSoftPromptEncoder(F, D, projector_hidden=12)
    assert t(torch.randn(7, F)).shape == (7, D)
    assert "TextSoftPromptEncoder" in repr(t)


def test_checkpoint_roundtrip_and_errors(tmp_path):
    m = enc()
    p = ckpt.save(tmp_path / "g.safetensors", m, variant="gat", meta={"epoch": 2})
    m2, info = ckpt.load(p, variant="gat")
    assert info["epoch"] == 2 and info["variant"] == "gat" and info["config"]["hidden_channels"] == 8
    g = tiny_graph()
    assert torch.allclose(m(*g), m2(*g))
    with pytest.raises(InvalidInput, match="holds a 'gat' encoder, expected 'text'"):
        ckpt.load(p, variant="text")
    with pytest.raises(InvalidInput, match="no GraSP checkpoint there"):
        ckpt.load(tmp_path / "missing.safetensors")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a safetensors file")
    with pytest.raises(InvalidInput, match="not a safetensors file"):
        ckpt.read_meta(bad)
    assert not list(tmp_path.glob("*.tmp"))                                  # written atomically


def _toy_task():
    """Regress each graph's soft prompt onto a fixed target: a loss that must fall."""
    graphs = [tiny_graph(seed=s) for s in range(4)]
    target = torch.full((5, D), 0.3)

    def loss_fn(m, i):
        return (m(*graphs[i]) - target).pow(2).mean()

    return list(range(4)), loss_fn


def test_training_loss_falls_and_resume_replays_the_same_steps(tmp_path):
    examples, loss_fn = _toy_task()
    cfg = TrainConfig(epochs=4, lr=1e-2, seed=3, save_every=2)
    full = train(enc(), examples, loss_fn, variant="gat", checkpoint=tmp_path / "full.safetensors", config=cfg)
    assert full.steps == 16 and len(full.epoch_losses) == 4
    assert full.epoch_losses[-1] < full.epoch_losses[0]

    # the same run stopped after 2 epochs, then resumed to 4: same weights, same losses
    half = train(enc(), examples, loss_fn, variant="gat", checkpoint=tmp_path / "r.safetensors",
                 config=TrainConfig(epochs=2, lr=1e-2, seed=3, save_every=2))
    assert half.steps == 8
    rest = train(enc(), examples, loss_fn, variant="gat", checkpoint=tmp_path / "r.safetensors",
                 config=cfg, resume=True)
    assert rest.resumed_from == (2, 0) and rest.steps == 16
    assert rest.step_losses == pytest.approx(full.step_losses, rel=1e-5, abs=1e-6)
    g = tiny_graph()
    assert torch.allclose(rest.encoder(*g), full.encoder(*g), atol=1e-6)
    info = ckpt.read_meta(tmp_path / "r.safetensors")
    assert info["epoch"] == 4 and len(info["epoch_losses"]) == 4 and json.dumps(info)


def test_resume_mid_epoch(tmp_path):
    examples, loss_fn = _toy_task()
    cfg = TrainConfig(epochs=2, lr=1e-2, seed=5, save_every=2)
    full = train(enc(), examples, loss_fn, variant="gat", checkpoint=tmp_path / "a.safetensors", config=cfg)

    calls = {"n": 0}

    def dying(m, i):      # the process "dies" at step 3 of epoch 1 (after the step-2 checkpoint)
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return loss_fn(m, i)

    with pytest.raises(KeyboardInterrupt):
        train(enc(), examples, dying, variant="gat", checkpoint=tmp_path / "b.safetensors", config=cfg)
    rest = train(enc(), examples, loss_fn, variant="gat", checkpoint=tmp_path / "b.safetensors",
                 config=cfg, resume=True)
    assert rest.resumed_from == (0, 2)
    assert rest.step_losses == pytest.approx(full.step_losses, rel=1e-5, abs=1e-6)


def test_epoch_order_is_a_seeded_permutation():
    assert sorted(epoch_order(10, 0, 1)) == list(range(10))
    assert epoch_order(10, 0, 1) == epoch_order(10, 0, 1)
    assert epoch_order(10, 0, 1) != epoch_order(10, 0, 2)


def test_loss_plot_is_a_png(tmp_path):
    from PIL import Image

    p = plot_losses([3.0, 2.5, 2.7, 1.9, 1.5, 1.4], [2.73, 1.6], tmp_path / "loss.png")
    with Image.open(p) as im:
        assert im.format == "PNG" and im.size == (720, 400)
