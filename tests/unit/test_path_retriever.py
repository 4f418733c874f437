"""The relation-path retriever's head and checkpoints, and VisPath's fallback when the checkpoint is unusable.

Vectors come from a deterministic stand-in for the sentence encoder (hash-seeded unit vectors), so these
tests need no model; the trainer on a real KG and encoder is tests/integration/test_train_paths.py.
"""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

import numpy as np
import pytest

from kgqa.core.errors import InvalidInput
from kgqa.models.heads.path_retriever import load_checkpoint, load_retriever, new_head, save_checkpoint
from kgqa.training.path_retriever import RetrieverExample, train_head


def fake_embed(texts):
    out = []
    for t in texts:
        v = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16)).standard_normal(16)
        out.append(v / np.linalg.norm(v))
    return np.asarray(out, dtype=np.float32)


def tiny_set():
    """Questions about two relations, each with both chains as candidates; the gold chain is its own."""
    chains = ["born in", "employer"]
    qs = [f"where was person {i} born" for i in range(6)] + [f"who employs person {i}" for i in range(6)]
    items = [RetrieverExample(k, [0, 1], [1, 1], {0 if k < 6 else 1}) for k in range(len(qs))]
    return fake_embed(qs), fake_embed(chains), items


def test_training_lowers_the_loss_and_resumes_after_the_last_epoch(tmp_path):
    qv, cv, items = tiny_set()
    ck = tmp_path / "p.safetensors"
    first = train_head(qv, cv, items, checkpoint=ck, epochs=3, lr=1e-2, batch=4, seed=0)
    assert first.epoch_losses[-1] < first.epoch_losses[0]
    more = train_head(qv, cv, items, checkpoint=ck, epochs=6, lr=1e-2, batch=4, seed=0, resume=True)
    assert more.resumed_from == 3 and len(more.epoch_losses) == 6
    assert more.epoch_losses[:3] == first.epoch_losses
    assert more.epoch_losses[-1] < first.epoch_losses[-1]


def test_the_prior_keeps_the_head_near_the_untrained_cosine_and_still_learns(tmp_path):
    """--prior: the maps stay smaller than without it (the untrained head is zero), the ranking loss still falls,
    the weight is recorded in the checkpoint, and the reported losses are the ranking loss alone."""
    qv, cv, items = tiny_set()
    free = train_head(qv, cv, items, checkpoint=tmp_path / "a.safetensors", epochs=6, lr=1e-2, batch=4, seed=0)
    held = train_head(qv, cv, items, checkpoint=tmp_path / "b.safetensors", epochs=6, lr=1e-2, batch=4, seed=0,
                      prior=1.0)
    norm = {}
    for k in ("a", "b"):
        head, info = load_checkpoint(tmp_path / f"{k}.safetensors")
        norm[k] = float(head.q.weight.detach().norm() ** 2 + head.c.weight.detach().norm() ** 2)
    assert norm["b"] < 0.5 * norm["a"]
    assert held.epoch_losses[-1] < held.epoch_losses[0]
    assert held.epoch_losses[0] == pytest.approx(free.epoch_losses[0], rel=0.2)    # no penalty term in it
    assert info["prior"] == 1.0


def test_checkpoint_round_trip_scores_the_same(tmp_path):
    head = new_head(16, seed=1)
    with __import__("torch").no_grad():
        head.q.weight.normal_(0, 0.1)
    ck = save_checkpoint(tmp_path / "p.safetensors", head, {"encoder": "enc", "epochs_done": 1})
    r1 = load_retriever(ck, fake_embed, "enc")
    from kgqa.models.heads.path_retriever import PathRetriever
    r0 = PathRetriever(head, {}, fake_embed)
    chains = [["born in"], ["employer", "country"]]
    assert np.allclose(r0.score("where was she born", chains), r1.score("where was she born", chains), atol=1e-6)
    assert r1.meta["epochs_done"] == 1
    with pytest.raises(InvalidInput, match="trained over encoder 'enc'"):
        load_retriever(ck, fake_embed, "another-encoder")


@pytest.mark.parametrize("content", [None, b"not a safetensors file", b"\x08\x00\x00\x00\x00\x00\x00\x00{}garbage"])
def test_missing_or_corrupt_checkpoint_is_one_line(tmp_path, content):
    ck = tmp_path / "p.safetensors"
    if content is not None:
        ck.write_bytes(content)
    with pytest.raises(InvalidInput) as e:
        load_checkpoint(ck)
    assert len(str(e.value).splitlines()) == 1 and str(ck) in str(e.value)


def test_vispath_records_the_fallback_and_keeps_the_rules(tmp_path):
    """-o path_scorer=learned with a corrupt checkpoint: one line, counted as fallback 'checkpoint', and the
    hop intent comes from the rules (the run is not marked learned)."""
    from kgqa.methods.vispath.learned import LearnedPaths
    from kgqa.methods.vispath.records import VisPathRun

    ck = tmp_path / "bad.safetensors"
    ck.write_bytes(b"junk")
    lp = LearnedPaths(SimpleNamespace(embed=fake_embed), SimpleNamespace(models_dir=tmp_path, encoder_model=None),
                      str(ck))
    assert lp.retriever() is None and str(ck) in lp.error and "\n" not in lp.error
    from kgqa.methods.vispath.algorithm import VisPath
    vp = object.__new__(VisPath)            # only _learned_ready is exercised: it reads self.learned
    vp.learned = lp
    run = VisPathRun(question="q")
    assert vp._learned_ready(run) is False and vp._learned_ready(run) is False
    assert [f.code for f in run.fallbacks] == ["checkpoint"]          # once per question
    assert "the rules take over" in run.fallbacks[0].message and not run.learned
