"""`kgqa doctor`'s rows for the learned parts a question runs through by default: mKG-RAG's span reader and
passage ranker (real shipped checkpoints, real reads), and what the rows say when a checkpoint is missing or
is not what it claims to be (the method then falls back, so the row is a warning, not a failure)."""

from __future__ import annotations

import json

from kgqa.app import doctor_models as D
from kgqa.core.config import Settings


def test_the_shipped_span_reader_and_ranker_load_and_read_the_smoke_question(tmp_path):
    s = Settings(data_dir=tmp_path)          # no checkpoint of its own: the shipped ones
    reader = D._span_reader_check(s, True)
    assert reader.ok and not reader.required
    assert "data/reader/span-reader.safetensors" in reader.detail and "'Marshfield" in reader.detail
    assert "train-sample-44.json.gz" in reader.detail
    ranker = D._ranker_check(s, True)
    assert ranker.ok and not ranker.required and "the answering passage first" in ranker.detail
    # `kgqa doctor --json` writes every row (a numpy bool in a row broke it)
    assert json.loads(json.dumps([reader.as_dict(), ranker.as_dict()]))[1]["ok"] is True


def test_a_missing_or_foreign_checkpoint_is_one_warning_line_naming_the_fallback(tmp_path, monkeypatch):
    from kgqa.core.config import own_or_shipped
    from kgqa.models.heads import passage_ranker, span_reader

    s = Settings(data_dir=tmp_path)
    monkeypatch.setattr(span_reader, "default_checkpoint", lambda settings: tmp_path / "none.safetensors")
    missing = D._span_reader_check(s, True)
    assert not missing.ok and not missing.required and "\n" not in missing.detail
    assert "none.safetensors" in missing.detail and "falls back to the rule reader" in missing.detail
    # a span-reader file offered as the ranker: refused by its format, one line
    shipped = own_or_shipped(None, "reader", span_reader.CHECKPOINT_NAME, shipped_in="data")
    monkeypatch.setattr(passage_ranker, "default_checkpoint", lambda settings: shipped)
    foreign = D._ranker_check(s, True)
    assert not foreign.ok and not foreign.required and "\n" not in foreign.detail
    assert "paper's chunk order" in foreign.detail
    # without the smoke nothing is loaded: the rows only say whether the files are there
    assert not D._span_reader_check(s, False).ok and D._ranker_check(s, False).ok
