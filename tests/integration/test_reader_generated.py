"""``kgqa train reader --generated``: reading questions generated from the loaded graph (the demo KG's
descriptions; WikiReading-style) train the span reader beside SQuAD-format data, an eval set's topics stay out
of them, and ``--steps`` fixes the compute. Real Neo4j, the real MiniLM, a few steps only; the SQuAD-format
file here is invented."""

from __future__ import annotations

import json

from tests.conftest import REPO, run_kgqa
from tests.integration.conftest import DEMO_DIR

PARAS = [("Lake Orvenne", "Lake Orvenne is a lake in the Varnish Hills. It was dammed in 1911 by the engineer "
          "Tessa Marlow.", [("Who dammed Lake Orvenne?", "Tessa Marlow"), ("When was the lake dammed?", "1911")]),
         ("Brindle Abbey", "Brindle Abbey was founded by monks from Cluny in 1120 and closed in 1536.",
          [("Who founded Brindle Abbey?", "monks from Cluny"), ("When did the abbey close?", "1536")])]


def _squad(path):
    data = [{"title": t, "paragraphs": [{"context": c, "qas": [
        {"id": f"{t}-{k}", "question": q, "answers": [{"text": a, "answer_start": c.index(a)}]}
        for k, (q, a) in enumerate(qas)]}]} for t, c, qas in PARAS]
    path.write_text(json.dumps({"version": "1.1", "data": data}))


def test_generated_questions_leave_an_eval_sets_topics_out(demo_kg, settings):
    from kgqa.core.kg import KG
    from kgqa.core.qa_examples import topics_of
    from kgqa.core.reading_questions import generate_reading_questions
    from kgqa.models.encoder import encoder_for

    excluded = topics_of(DEMO_DIR / "questions.jsonl")
    got = generate_reading_questions(demo_kg, KG(demo_kg, encoder_for(settings)), 5000, 0, exclude_topics=excluded)
    assert len(got) >= 100
    assert not {g.subject_id for g in got} & excluded
    for g in got:
        assert g.context[g.start:g.start + len(g.answer)] == g.answer


def test_train_reader_with_generated_questions_at_a_fixed_step_count(demo_kg, tmp_path):
    _squad(tmp_path / "tiny.json")
    ck = tmp_path / "reader.safetensors"
    p = run_kgqa("train", "reader", "--data", str(tmp_path / "tiny.json"), "--holdout", "1", "--generated", "40",
                 "--exclude", str(REPO / "data" / "demo" / "questions.jsonl"), "--steps", "3", "--batch-size", "4",
                 "--max-length", "96", "--checkpoint", str(ck), env={"KGQA_TORCH_THREADS": "1"})
    assert p.returncode == 0, p.stderr
    assert "reading questions from the loaded graph" in p.stdout
    assert "generated reading questions held out" in p.stdout
    meta = json.loads(ck.with_suffix(".json").read_text())
    assert meta["steps"] == 3 and meta["steps_asked"] == 3 and not meta["stopped_early"]
    gen = meta["trained_on"]["generated"]
    assert gen["questions"] > 0 and gen["held_out_questions"] > 0
    assert meta["holdout_generated"]["questions"] == gen["held_out_questions"]
    assert meta["examples"] == 2 + gen["questions"]          # the SQuAD file's training article + the generated


