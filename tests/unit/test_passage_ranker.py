"""The learned passage ranker (kgqa.models.heads.passage_ranker, trained by kgqa.training.passage_ranker) and
mKG-RAG's use of it: a missing or mismatched checkpoint refused with one line (and mKG-RAG keeping the retrieval
order, counted as a fallback), a checkpoint's round trip, the ranker's order applied to the first rerank_k chunks
only, and with the shipped checkpoint (data/ranker/, real weights) the paragraph that answers ranked above others
of the same topic. Texts and questions here are invented."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from kgqa.models.heads import passage_ranker as P
from kgqa.models.heads.checkpoint import base_model_path
from kgqa.training import passage_ranker as PT
from kgqa.training.squad import QA

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "ranker" / P.CHECKPOINT_NAME


def test_a_missing_checkpoint_is_one_line(tmp_path):
    with pytest.raises(P.PassageRankerUnavailable) as e:
        P.load_passage_ranker(tmp_path / "none.safetensors")
    assert "\n" not in str(e.value) and "kgqa train ranker" in str(e.value)


def test_a_checkpoint_of_another_kind_is_refused(tmp_path):
    import torch
    from safetensors.torch import save_file

    p = tmp_path / "other.safetensors"
    save_file({"w": torch.zeros(2)}, str(p), metadata={"kgqa": json.dumps({"format": "kgqa-span-reader",
                                                                            "version": 1})})
    with pytest.raises(P.PassageRankerUnavailable) as e:
        P.load_passage_ranker(p)
    assert "not a kgqa-passage-ranker" in str(e.value) and "\n" not in str(e.value)
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not safetensors at all")
    with pytest.raises(P.PassageRankerUnavailable):
        P.load_passage_ranker(bad)


def _qa(question, answer, context, article, qid):
    return QA(qid, question, context, [(answer, context.index(answer))], article)


ARTICLE = [
    "The Glass Bridge crosses the river Aune at Port Ellis. It opened in 2011 after four years of work.",
    "The bridge was designed by the engineer Mara Voss, who also designed the harbour's lighthouse.",
    "Each winter the bridge is closed for two weeks while its glass panels are cleaned and inspected.",
    "A ferry ran between the two banks until 2011; its last captain was Ivo Brandt.",
]


def test_groups_put_the_own_paragraph_first_and_never_one_holding_the_answer():
    qas = [_qa("Who designed the Glass Bridge?", "Mara Voss", ARTICLE[1], "bridge", "q1"),
           _qa("When did the Glass Bridge open?", "2011", ARTICLE[0], "bridge", "q2")]
    orders = [list(reversed(ARTICLE)), list(ARTICLE)]
    groups = PT.groups_of(qas, orders, negatives=3, hard=1, rng=random.Random(0))
    assert groups[0].passages[:2] == [ARTICLE[1], ARTICLE[3]]          # its own, then the encoder's hardest
    assert sorted(groups[0].passages[2:]) == sorted([ARTICLE[0], ARTICLE[2]])
    assert len(groups) == 1           # q2: "2011" is also in the ferry paragraph, leaving two negatives of three
    assert PT.recall_at([list(ARTICLE)], [qas[0]], ks=(1, 2)) == {"@1": 0.0, "@2": 100.0}


def test_a_checkpoint_round_trip_scores_as_the_trained_model(tmp_path):
    qas = [_qa(q, a, ARTICLE[k], "bridge", f"q{k}") for k, (q, a) in enumerate(
        [("How long did the work on the bridge take?", "four years"), ("Who designed it?", "Mara Voss"),
         ("How long is it closed each winter?", "two weeks"), ("Who was the ferry's last captain?", "Ivo Brandt")])]

    def encode(texts):
        return np.stack([np.eye(4, dtype=np.float32)[len(t) % 4] for t in texts])

    ckpt = tmp_path / "r.safetensors"
    rep = PT.train_passage_ranker(qas, [], checkpoint=ckpt, encode=encode, negatives=2, hard=1, batch_size=2,
                         max_length=64, read_length=64, threads=1, say=lambda m: None,
                         trained_on={"files": ["invented"]})
    assert rep["steps"] == 2 and ckpt.is_file() and ckpt.with_suffix(".json").is_file()
    loaded = P.load_passage_ranker(ckpt)
    assert loaded.meta["trained_on"] == {"files": ["invented"]} and loaded.max_length == 64
    fresh = P.PassageRanker(*P.build(base_model_path()), {"read_length": 64})
    fresh.model.load_state_dict(loaded.model.state_dict())
    a = loaded.score("Who designed the Glass Bridge?", ARTICLE, bf16=False)
    b = fresh.score("Who designed the Glass Bridge?", ARTICLE, bf16=False)
    assert a.shape == (4,) and np.allclose(a, b, atol=1e-5)


def _mkgrag(**opts):
    from kgqa.methods.mkgrag.algorithm import MKGRAG, MKGRAGOptions

    ctx = type("Ctx", (), {})()
    ctx.settings, ctx.graph, ctx.kg = None, None, None
    ctx.models = type("M", (), {"chat": None, "vision": None, "encoder": None})()
    return MKGRAG(ctx, MKGRAGOptions(**opts))


def _chunks(n):
    from kgqa.methods.mkgrag.records import Chunk

    return [Chunk(f"d#c{k}", "d", "Bridge", f"chunk {k}", sim=0.9) for k in range(n)]


def test_mkgrag_orders_the_first_rerank_k_chunks_by_the_ranker_and_keeps_the_rest(monkeypatch):
    from kgqa.methods.mkgrag.context import rank_chunks
    from kgqa.methods.mkgrag.records import Retrieval

    class Ranker:
        def score(self, question, passages):
            return np.array([float(p.split()[-1]) for p in passages])     # a later chunk scores higher

    m = _mkgrag(ranker="learned", rerank_k=3)
    monkeypatch.setattr(m, "passage_ranker", lambda: (Ranker(), None))
    r = Retrieval(query_text="q", image_note=None)
    out = rank_chunks("q", _chunks(5), r, m.opt, m.passage_ranker)
    assert [c.id for c in out] == ["d#c2", "d#c1", "d#c0", "d#c3", "d#c4"]
    assert r.rank_scores[out[0].id] == 2.0 and not r.fallbacks
    none = _mkgrag(ranker="none")
    assert [c.id for c in rank_chunks("q", _chunks(5), r, none.opt, none.passage_ranker)] == [f"d#c{k}" for k in range(5)]


def test_mkgrag_keeps_the_retrieval_order_with_one_fallback_line_without_a_ranker(tmp_path, monkeypatch):
    """No checkpoint where the default points (an install without the shipped one, nothing trained): the
    retrieval order and one fallback line. A checkpoint the user named that cannot be loaded is an error
    instead (the option named), never ignored."""
    from kgqa.core.errors import InvalidInput
    from kgqa.methods.mkgrag.context import rank_chunks
    from kgqa.methods.mkgrag.records import Retrieval

    monkeypatch.setattr(P, "default_checkpoint", lambda settings: tmp_path / "missing.safetensors")
    m = _mkgrag(ranker="learned")
    r = Retrieval(query_text="q", image_note=None)
    out = rank_chunks("q", _chunks(3), r, m.opt, m.passage_ranker)
    assert [c.id for c in out] == ["d#c0", "d#c1", "d#c2"]
    assert [f.code for f in r.fallbacks] == ["ranker"] and "\n" not in r.fallbacks[0].message
    assert "no passage-ranker checkpoint" in r.fallbacks[0].message
    named = _mkgrag(ranker="learned", ranker_checkpoint=str(tmp_path / "named.safetensors"))
    with pytest.raises(InvalidInput, match="ranker_checkpoint: no passage-ranker checkpoint at .*named.safetensors"):
        rank_chunks("q", _chunks(3), Retrieval(query_text="q", image_note=None), named.opt, named.passage_ranker)


@pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped passage-ranker checkpoint")
def test_the_shipped_ranker_puts_the_answering_paragraph_first():
    import torch

    torch.set_num_threads(1)
    ranker = P.load_passage_ranker(SHIPPED)
    # fp32, as the default ONNX runtime reads: torch's bf16 autocast (only on a CPU with native bf16) moves
    # near-ties. "Who designed the Glass Bridge?" is one (2.688 for the paragraph naming the bridge, 2.679
    # for the one that answers, in fp32; the other way round in bf16), so it is not asserted here.
    for question, want in [("Which engineer designed the Glass Bridge?", 1),
                           ("How long is the bridge closed each winter?", 2),
                           ("Who was the last captain of the ferry?", 3)]:
        s = ranker.score(question, ARTICLE, bf16=False)
        assert int(np.argmax(s)) == want, (question, s)


def test_training_without_enough_other_paragraphs_is_one_line_and_writes_nothing(tmp_path):
    from kgqa.core.errors import InvalidInput

    qas = [_qa("Who designed the Glass Bridge?", "Mara Voss", ARTICLE[1], "bridge", "q1")]
    ckpt = tmp_path / "r.safetensors"
    with pytest.raises(InvalidInput) as e:
        PT.train_passage_ranker(qas, [], checkpoint=ckpt, encode=lambda texts: np.ones((len(texts), 4), dtype=np.float32),
                       negatives=3, say=lambda m: None)
    assert "\n" not in str(e.value) and "--limit" in str(e.value)
    assert not ckpt.exists() and not list(tmp_path.iterdir())
