"""``kgqa train paths``' check (kgqa.training.heldout, chain_reader._checked): a new chain reader that reads worse
on the KG's held-out-template questions than the one it replaces is written beside it, never installed, unless
told; the report shows both rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgqa.training.chain_reader import ChainReaderReport, _checked
from kgqa.training.heldout import em, reads_worse, rejected_path


def _row(ck, e, hops=(2, 3)):
    return {"checkpoint": str(ck), "em": e, "hops": {h: e for h in hops}}


def _check(new_em, old_em):
    def check(new, old):
        return {"questions": 12, "by_hops": {2: 6, 3: 6}, "seconds": 1.0, "new": _row(new, new_em),
                "old": _row(old, old_em) if old is not None else None}
    return check


def _files(tmp_path):
    target, cand = tmp_path / "chain-reader.safetensors", tmp_path / "chain-reader.candidate.safetensors"
    target.write_bytes(b"old reader")
    cand.write_bytes(b"new reader")
    return target, cand


def test_worse_is_a_lower_em_and_a_tie_or_nothing_to_compare_is_not():
    assert reads_worse({"em": 50.0}, {"em": 50.1})
    assert not reads_worse({"em": 50.0}, {"em": 50.0})
    assert not reads_worse({"em": 10.0}, None) and not reads_worse({"em": None}, {"em": 80.0})
    ck = Path("/m/paths/chain-reader.safetensors")
    assert rejected_path(ck) == Path("/m/paths/chain-reader.rejected.safetensors")


def test_em_counts_per_hop():
    from types import SimpleNamespace as R
    res = [R(exact_match=True, hops=2), R(exact_match=False, hops=2), R(exact_match=True, hops=3)]
    assert em(res) == 200 / 3 and em(res, 2) == 50.0 and em(res, 3) == 100.0 and em(res, 4) != em(res, 4)


def test_a_worse_reader_is_set_aside_and_the_old_file_is_untouched(tmp_path):
    target, cand = _files(tmp_path)
    rep = ChainReaderReport({"checkpoint": str(cand)})
    assert not _checked(rep, _check(40.0, 80.0), cand, target, target, False, None)
    assert target.read_bytes() == b"old reader" and not cand.exists()
    assert rejected_path(target).read_bytes() == b"new reader"
    assert rep["checkpoint"] == rep["check"]["new"]["checkpoint"] == str(rejected_path(target))
    assert rep["kept"] == str(target)
    text = "\n".join(rep.check_lines())
    assert "before" in text and "80.0" in text and "40.0" in text and "2-hop" in text and "3-hop" in text
    assert json.loads(rep.as_json())["check"]["old"]["em"] == 80.0


def test_keep_new_installs_a_worse_reader_and_a_better_one_needs_nothing(tmp_path):
    target, cand = _files(tmp_path)
    rep = ChainReaderReport({})
    assert _checked(rep, _check(40.0, 80.0), cand, target, target, True, None)
    assert target.read_bytes() == b"new reader" and rep.get("kept_new") and not rejected_path(target).exists()
    target, cand = _files(tmp_path)
    rep = ChainReaderReport({})
    assert _checked(rep, _check(90.0, 80.0), cand, target, target, False, None)
    assert target.read_bytes() == b"new reader" and not rep.get("kept_new") and not rep.get("kept")


def test_without_a_reader_to_replace_the_new_one_is_measured_and_installed(tmp_path):
    target = tmp_path / "chain-reader.safetensors"
    target.write_bytes(b"new reader")
    rep = ChainReaderReport({})
    assert _checked(rep, _check(30.0, None), target, target, None, False, None)
    assert target.read_bytes() == b"new reader" and rep["check"]["old"] is None
    assert any("nothing to compare with" in ln for ln in rep.check_lines())


def test_a_check_that_fails_leaves_the_old_reader_and_sets_the_new_one_aside(tmp_path):
    target, cand = _files(tmp_path)

    def broken(new, old):
        raise RuntimeError("graph went away")
    with pytest.raises(RuntimeError):
        _checked(ChainReaderReport({}), broken, cand, target, target, False, None)
    assert target.read_bytes() == b"old reader" and rejected_path(target).read_bytes() == b"new reader"
