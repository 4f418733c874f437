"""Span readers joined into one logit-mean ensemble (``kgqa train reader-ensemble``,
``kgqa.models.span_reader.ensemble``): one checkpoint file holding every member, whose spans score the mean of
the members' scores once loaded again; members that cannot be averaged refused with one line. The members are
the shipped reader (real weights) and a copy of it with another span head. Texts and questions are invented."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from kgqa.core.errors import InvalidInput
from kgqa.models import span_reader as S

SHIPPED = Path(__file__).resolve().parents[2] / "data" / "reader" / S.CHECKPOINT_NAME
needs_checkpoint = pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped span reader (data/reader/)")

PASSAGES = ["Harbour Tower is a 310-metre office skyscraper in Port Ellis. The building was designed by the "
            "architecture firm Skidmore, Owings and Merrill, and construction began in 2004.",
            "Port Ellis has a harbour, a cathedral and a market held on Saturdays."]


def _held_out(titles: list[str]) -> list[S.QA]:
    """One invented question on a paragraph of each held-out article (the threshold reads another's too)."""
    out = []
    for k, t in enumerate(titles):
        c = f"The {t} bridge was built in {1900 + k} by the engineer Ada Marsh{k}."
        out.append(S.QA(f"q{k}", f"When was the {t} bridge built?", c, [(str(1900 + k), c.index(str(1900 + k)))], t))
    return out


@pytest.fixture(scope="module")
def members(tmp_path_factory):
    """Two single-reader checkpoints: the shipped one, and the same with its span head perturbed."""
    import torch

    torch.set_num_threads(1)
    d = tmp_path_factory.mktemp("members")
    shipped = S.load_reader(SHIPPED)
    other = copy.deepcopy(shipped.model)
    with torch.no_grad():
        g = torch.Generator().manual_seed(0)
        other.qa_outputs.weight.add_(0.05 * torch.randn(other.qa_outputs.weight.shape, generator=g))
    meta = {k: v for k, v in shipped.meta.items() if k not in ("format", "version", "base_fingerprint")}
    a, b = d / "a.safetensors", d / "b.safetensors"
    S.save_checkpoint(shipped.model, meta, a)
    S.save_checkpoint(other, {**meta, "seed": 1}, b)
    return a, b, meta


@needs_checkpoint
def test_an_ensemble_checkpoint_scores_the_mean_of_its_members(members, tmp_path):
    a, b, meta = members
    titles = meta["trained_on"]["holdout_articles"]
    out = tmp_path / "ens.safetensors"
    said = []
    got = S.ensemble([a, b], _held_out(titles), out, say=said.append)
    assert out.is_file() and len(got["members"]) == 2 and "threshold" in got
    assert any("ensemble of 2" in line for line in said)
    ens = S.load_reader(out)                                    # loaded again from the one file
    assert hasattr(ens.model, "members") and len(ens.model.members) == 2
    assert ens.threshold == pytest.approx(got["threshold"])
    q = "Which architecture firm designed the building?"
    ra, rb = (S.load_reader(p).read(q, PASSAGES, top=50, bf16=False) for p in (a, b))
    re_ = ens.read(q, PASSAGES, top=50, bf16=False)
    sa, sb = ({(g.passage, g.start, g.end): g.score for g in r} for r in (ra, rb))
    shared = [(k, g.score) for g in re_ if (k := (g.passage, g.start, g.end)) in sa and k in sb]
    assert len(shared) >= 3
    for k, score in shared:
        assert score == pytest.approx((sa[k] + sb[k]) / 2, abs=1e-3)
    assert any(abs(sa[k] - sb[k]) > 1e-2 for k, _ in shared)          # the members do differ


@needs_checkpoint
def test_members_that_held_out_other_articles_are_refused_with_one_line(members, tmp_path):
    a, _, meta = members
    other = S.load_reader(a)
    c = tmp_path / "c.safetensors"
    S.save_checkpoint(other.model, {**meta, "trained_on": {**meta["trained_on"], "holdout_articles": ["Elsewhere"]}}, c)
    with pytest.raises(InvalidInput, match="held out other articles") as e:
        S.ensemble([a, c], _held_out(meta["trained_on"]["holdout_articles"]), tmp_path / "x.safetensors")
    assert "\n" not in str(e.value) and not (tmp_path / "x.safetensors").exists()
    with pytest.raises(InvalidInput, match="at least two"):
        S.ensemble([a], [], tmp_path / "x.safetensors")
