"""`kgqa train ranker --data FILE` (the README's training table) trains a passage ranker on SQuAD-format data and
writes it where --checkpoint says, with held-out recall beside the sentence encoder's."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_kgqa

pytestmark = pytest.mark.slow

CITIES = [("Paris", "France"), ("Rome", "Italy"), ("Madrid", "Spain"), ("Berlin", "Germany"), ("Lisbon", "Portugal"),
          ("Vienna", "Austria")]


def squad(tmp_path):
    """Three articles of two paragraphs each, a question per paragraph."""
    arts = []
    for k in range(3):
        paragraphs = []
        for city, country in CITIES[2 * k:2 * k + 2]:
            context = f"{city} is the capital of {country}. It lies on a river."
            paragraphs.append({"context": context, "qas": [{
                "id": city, "question": f"What is the capital of {country}?",
                "answers": [{"text": city, "answer_start": 0}]}]})
        arts.append({"title": f"Capitals_{k}", "paragraphs": paragraphs})
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps({"data": arts}))
    return data


def test_train_ranker_writes_a_checkpoint_and_reports_held_out_recall(tmp_path):
    out = tmp_path / "ranker.safetensors"
    p = run_kgqa("train", "ranker", "--data", str(squad(tmp_path)), "--holdout", "1", "--negatives", "1", "--hard",
                 "0", "--batch-size", "2", "--max-length", "64", "--read-length", "64", "--checkpoint", str(out),
                 env={"KGQA_DATA_DIR": str(tmp_path / "d"), "KGQA_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"})
    assert p.returncode == 0, p.stderr
    assert out.is_file() and out.stat().st_size > 1_000_000
    assert f"checkpoint: {out}" in p.stdout
    assert "held out (2 questions, 1 articles" in p.stdout and "sentence encoder recall" in p.stdout
