"""``kgqa train paths`` on the real Neo4j and the real all-MiniLM-L6-v2: a tiny KG of people with two
relations (ids Q99300xx, P993xx, so nothing clashes with another fixture), loaded with the project's loader
and deleted by id afterwards."""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_one_line_error, run_kgqa

REL = {"P99301": "place of birth", "P99302": "employer"}
PEOPLE = {f"Q99300{i:02d}": f"Ostrander person {i}" for i in range(12)}
CITIES = {"Q9930090": "Velmora", "Q9930091": "Karst Hollow"}
FIRMS = {"Q9930095": "Ardent Mills Company", "Q9930096": "Brightwater Shipping"}
FACTS = ([(p, "P99301", list(CITIES)[i % 2]) for i, p in enumerate(PEOPLE)]
         + [(p, "P99302", list(FIRMS)[i % 2]) for i, p in enumerate(PEOPLE)])
HELD_OUT = "Q9930011"


@pytest.fixture(scope="module")
def paths_kg(load_kg, tmp_path_factory):
    d = tmp_path_factory.mktemp("paths_kg")
    ents = {**PEOPLE, **CITIES, **FIRMS}
    (d / "wikidata5m_entity.txt").write_text("".join(f"{i}\t{n}\n" for i, n in ents.items()))
    (d / "wikidata5m_relation.txt").write_text("P99301\tplace of birth\tborn in\tbirthplace\nP99302\temployer\t"
                                               "works for\temployed by\n")
    (d / "wikidata5m_transductive_train.txt").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in FACTS))
    (d / "wikidata5m_transductive_valid.txt").write_text("")
    (d / "wikidata5m_transductive_test.txt").write_text("")
    return load_kg(d)


def test_trainer_separates_two_relations(settings, paths_kg, tmp_path):
    """Generated questions of the tiny KG (minus one person's): the loss falls, and that held-out person's
    generated question ranks its own relation first."""
    from kgqa.core.kg import KG
    from kgqa.core.qa_examples import generate_examples
    from kgqa.models.encoder import encoder_for
    from kgqa.models.heads.path_retriever import load_retriever
    from kgqa.training.path_retriever import train_head
    from kgqa.training.path_supervision import prepare

    kg = KG(paths_kg, encoder_for(settings))
    ex = [e for e in generate_examples(paths_kg, kg, 400, 0, set(), aliases=True) if e.topic_id in PEOPLE]
    held = [e for e in ex if e.topic_id == HELD_OUT]
    train = [e for e in ex if e.topic_id != HELD_OUT]
    assert held and len(train) >= 8
    prep = prepare(paths_kg, kg, train, depth=1)
    assert prep.items and prep.dropped == 0
    ck = tmp_path / "p.safetensors"
    res = train_head(kg.embed(prep.questions), kg.embed(prep.chain_texts), prep.items, checkpoint=ck, epochs=8,
                     lr=5e-3, batch=4, seed=0)
    assert res.epoch_losses[-1] < 0.5 * res.epoch_losses[0]
    r = load_retriever(ck, kg.embed)
    q = held[0]
    gold = REL[q.source.split("-")[1].rstrip(">").strip()]
    scores = r.score(q.question, [[REL["P99301"]], [REL["P99302"]]])
    assert [REL["P99301"], REL["P99302"]][int(scores.argmax())] == gold, (q.question, scores)


def test_cli_trains_from_a_file_resumes_and_refuses_bad_input(paths_kg, tmp_path):
    data = tmp_path / "qa.jsonl"
    data.write_text("\n".join(json.dumps({"question": f"Where was {n} born?", "answer": list(CITIES.values())[i % 2],
                                          "topic": {"id": p}}) for i, (p, n) in enumerate(PEOPLE.items())) + "\n")
    ck = tmp_path / "cli.safetensors"
    p = run_kgqa("train", "paths", "--kind", "retriever", "--data", str(data), "--examples", "0", "--epochs", "2",
                 "--depth", "1",
                 "--prior", "0.5", "--checkpoint", str(ck))
    assert p.returncode == 0, p.stderr
    assert "epoch 1/2: mean loss" in p.stdout and "epoch 2/2" in p.stdout and "examples/s" in p.stdout
    assert f"12 used" in p.stdout and ck.is_file()
    from kgqa.models.heads.path_retriever import load_checkpoint
    assert load_checkpoint(ck)[1]["prior"] == 0.5
    p = run_kgqa("train", "paths", "--kind", "retriever", "--data", str(data), "--examples", "0", "--epochs", "3",
                 "--depth", "1",
                 "--checkpoint", str(ck), "--resume")
    assert p.returncode == 0, p.stderr
    assert "resumed after epoch 2" in p.stdout and "epoch 3/3" in p.stdout and "epoch 1/3" not in p.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answer": "a", "topic": {"id": "nope"}}\n')
    assert_one_line_error(run_kgqa("train", "paths", "--data", str(bad), "--examples", "0",
                                   "--checkpoint", str(tmp_path / "x.safetensors")), "bad.jsonl:1", code=2)


@pytest.mark.parametrize("scorer", ["learned", "mixed"])
def test_vispath_learned_with_a_corrupt_checkpoint_answers_by_the_rules(paths_kg, tmp_path, scorer):
    bad = tmp_path / "corrupt.safetensors"
    bad.write_bytes(b"junk")
    p = run_kgqa("ask", "Where was Ostrander person 3 born?", "--entity", "Q9930003", "-o", f"path_scorer={scorer}",
                 "-o", f"path_checkpoint={bad}", "--json", env={"KGQA_CHAT_BACKEND": "none"})
    assert p.returncode == 0, p.stderr
    ans = json.loads(p.stdout)
    fb = [f for f in ans["fallbacks"] if f["code"] == "checkpoint"]
    assert len(fb) == 1 and str(bad) in fb[0]["message"] and "the rules take over" in fb[0]["message"]
    assert ans["answer"] == "Karst Hollow"


def test_vispath_mixed_with_the_shipped_checkpoint_keeps_the_rules_answer(paths_kg):
    """-o path_scorer=mixed over the shipped retriever (data/demo/paths, trained on another KG): the rules' steps
    run (their intent, not Q), the retriever loads (no fallback to the rules) and the one-hop answer holds."""
    p = run_kgqa("ask", "Where was Ostrander person 3 born?", "--entity", "Q9930003", "-o", "path_scorer=mixed",
                 "--json", env={"KGQA_CHAT_BACKEND": "none"})
    assert p.returncode == 0, p.stderr
    ans = json.loads(p.stdout)
    assert not [f for f in ans["fallbacks"] if f["code"] == "checkpoint"]
    assert not any("learned path scorer reads Q" in f["message"] for f in ans["fallbacks"])
    assert ans["answer"] == "Karst Hollow"
