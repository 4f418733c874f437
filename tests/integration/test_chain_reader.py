"""The chain reader trained on the real Neo4j with the real all-MiniLM-L6-v2: a tiny KG of people, cities,
countries and continents (ids Q99310xx, P9931x, so nothing clashes with another fixture), loaded with the
project's loader and deleted by id afterwards. The trainer must put a question's own chain above its prefix and
above its one-edge extension, on questions it never saw; ``kgqa train paths`` prints what it did; VisPath answers
with it and falls back to the rules, in one line, when its checkpoint is missing; ``--init`` starts training from
the given reader."""

from __future__ import annotations

import json

import pytest

from tests.conftest import assert_one_line_error, run_kgqa

REL = {"P99311": ("place of birth", "born in\tbirthplace"), "P99312": ("country", "sovereign state"),
       "P99313": ("continent", "located on continent"), "P99314": ("employer", "works for")}
PEOPLE = {f"Q99310{i:02d}": f"Ulvenhout person {i}" for i in range(16)}
CITIES = {"Q9931080": "Drevnik", "Q9931081": "Saltmarsh Ferry", "Q9931082": "Oberhelm"}
COUNTRIES = {"Q9931085": "Kaldoria", "Q9931086": "Westmarch Republic"}
CONTINENTS = {"Q9931088": "Norvasia"}
FIRMS = {"Q9931090": "Quillon Works", "Q9931091": "Harrow & Daye"}
FACTS = ([(p, "P99311", list(CITIES)[i % 3]) for i, p in enumerate(PEOPLE)]
         + [(p, "P99314", list(FIRMS)[i % 2]) for i, p in enumerate(PEOPLE)]
         + [(c, "P99312", list(COUNTRIES)[i % 2]) for i, c in enumerate(CITIES)]
         + [(c, "P99313", "Q9931088") for c in COUNTRIES]
         + [(f, "P99312", "Q9931085") for f in FIRMS])
HELD_OUT = ("Q9931014", "Q9931015")


@pytest.fixture(scope="module")
def reader_kg(load_kg, tmp_path_factory):
    d = tmp_path_factory.mktemp("reader_kg")
    ents = {**PEOPLE, **CITIES, **COUNTRIES, **CONTINENTS, **FIRMS}
    (d / "wikidata5m_entity.txt").write_text("".join(f"{i}\t{n}\n" for i, n in ents.items()))
    (d / "wikidata5m_relation.txt").write_text("".join(f"{r}\t{n}\t{a}\n" for r, (n, a) in REL.items()))
    (d / "wikidata5m_transductive_train.txt").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in FACTS))
    (d / "wikidata5m_transductive_valid.txt").write_text("")
    (d / "wikidata5m_transductive_test.txt").write_text("")
    return load_kg(d)


@pytest.fixture(scope="module")
def trained(reader_kg, settings, tmp_path_factory):
    """A reader trained on the tiny KG's generated questions, the held-out people's topics excluded."""
    from kgqa.core.kg import KG
    from kgqa.training.chain_reader import train_chain_reader
    from kgqa.models.encoder import encoder_for

    d = tmp_path_factory.mktemp("reader")
    excl = d / "held_out.jsonl"
    excl.write_text("".join(json.dumps({"question": "x", "answer": "x", "topic": {"id": t}}) + "\n" for t in HELD_OUT))
    kg = KG(reader_kg, encoder_for(settings))
    ck = d / "reader.safetensors"
    rep = train_chain_reader(reader_kg, kg, checkpoint=ck, examples=150, exclude=[excl], depth=3, epochs=4, lr=2e-4,
                             max_length=48, seed=0)
    return kg, ck, rep


def test_the_trainer_puts_a_chain_above_its_prefix_and_its_extension(trained):
    from kgqa.models.heads.chain_reader import load_chain_reader

    kg, ck, rep = trained
    assert rep["questions"] >= 60 and rep["epoch_losses"][-1] < rep["epoch_losses"][0]
    r = load_chain_reader(ck, kg)
    born, country, continent = ("P99311",), ("P99311", "P99312"), ("P99311", "P99312", "P99313")
    name = PEOPLE[HELD_OUT[0]]
    for q, gold, wrong in ((f"In which country was {name} born?", country, (born, continent)),
                           (f"Where was {name} born?", born, (country,)),
                           (f"On which continent is the country where {name} was born?", continent, (country, born))):
        s = dict(zip([gold, *wrong], r.score(q, [gold, *wrong])))
        assert all(s[gold] > s[w] for w in wrong), (q, s)


def test_the_cross_encoder_trainer_puts_a_chain_above_its_prefix_and_its_extension(reader_kg, settings, tmp_path):
    """``--arch cross``: one logit per (question, chain), trained listwise over each question's candidates."""
    from kgqa.core.kg import KG
    from kgqa.models.heads.chain_reader import load_chain_reader
    from kgqa.training.chain_reader import train_chain_reader
    from kgqa.models.encoder import encoder_for

    excl = tmp_path / "held_out.jsonl"
    excl.write_text("".join(json.dumps({"question": "x", "answer": "x", "topic": {"id": t}}) + "\n" for t in HELD_OUT))
    kg = KG(reader_kg, encoder_for(settings))
    ck = tmp_path / "cross.safetensors"
    rep = train_chain_reader(reader_kg, kg, checkpoint=ck, examples=150, exclude=[excl], depth=3, epochs=4, lr=2e-4,
                             max_length=48, seed=0, arch="cross")
    assert rep["arch"] == "cross" and rep["epoch_losses"][-1] < rep["epoch_losses"][0]
    r = load_chain_reader(ck, kg)
    assert r.arch == "cross"
    born, country, continent = ("P99311",), ("P99311", "P99312"), ("P99311", "P99312", "P99313")
    name = PEOPLE[HELD_OUT[0]]
    q = f"In which country was {name} born?"
    s = dict(zip([country, born, continent], r.score(q, [country, born, continent])))
    assert s[country] > s[born] and s[country] > s[continent], s


def test_vispath_answers_with_the_reader_and_says_so(trained):
    kg, ck, _ = trained
    p = run_kgqa("ask", f"In which country was {PEOPLE[HELD_OUT[1]]} born?", "--entity", HELD_OUT[1],
                 "-o", f"reader_checkpoint={ck}", "--json", env={"KGQA_CHAT_BACKEND": "none"})
    assert p.returncode == 0, p.stderr
    ans = json.loads(p.stdout)
    assert ans["details"]["chain_scores"] == "chain reader" and ans["details"]["dmax"] == 4
    assert ans["answer"] == "Kaldoria"                  # person 15 → Drevnik → Kaldoria
    assert not [f for f in ans["fallbacks"] if f["code"] == "checkpoint"]


def test_a_missing_reader_is_one_fallback_line_and_the_rules_answer(reader_kg, tmp_path):
    missing = tmp_path / "none.safetensors"
    p = run_kgqa("ask", f"Where was {PEOPLE['Q9931003']} born?", "--entity", "Q9931003",
                 "-o", f"reader_checkpoint={missing}", "--json", env={"KGQA_CHAT_BACKEND": "none"})
    assert p.returncode == 0, p.stderr
    ans = json.loads(p.stdout)
    fb = [f for f in ans["fallbacks"] if f["code"] == "checkpoint"]
    assert len(fb) == 1 and str(missing) in fb[0]["message"] and "the rules take over" in fb[0]["message"]
    assert ans["details"]["chain_scores"] == "rules" and ans["answer"] == CITIES["Q9931080"]


def test_cli_prints_what_it_trained_and_refuses_a_bad_file(reader_kg, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answer": "a", "topic": {"id": "nope"}}\n')
    p = run_kgqa("train", "paths", "--data", str(bad), "--examples", "0", "--checkpoint", str(tmp_path / "x.st"))
    assert p.returncode == 2 and "bad.jsonl:1" in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_train_terminal_learns_weights_for_its_reader_and_ask_uses_only_those(trained, tmp_path):
    import shutil

    _, ck, _ = trained
    mine = tmp_path / "mine.safetensors"
    shutil.copy(ck, mine)
    p = run_kgqa("train", "terminal", "--questions", "40", "--reader", str(mine), "--json",
                 env={"KGQA_CHAT_BACKEND": "none"})
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    beside = tmp_path / "mine.terminal.json"
    assert rep["file"] == str(beside) and beside.is_file() and rep["groups"] >= 10
    assert set(rep["weights"]) == {"reader", "rules", "typing", "depth_gap", "len1", "len2", "len3", "len4", "kind"}
    q = ("ask", f"In which country was {PEOPLE[HELD_OUT[1]]} born?", "--entity", HELD_OUT[1], "--json")
    a = json.loads(run_kgqa(*q, "-o", f"reader_checkpoint={mine}", env={"KGQA_CHAT_BACKEND": "none"}).stdout)
    assert a["details"]["terminal"] == "learned" and a["answer"] == "Kaldoria"
    assert not [f for f in a["fallbacks"] if f["code"] == "checkpoint"]
    # weights fitted for another reader (another SHA-256): one fallback line, the fixed sum ranks
    body = json.loads(beside.read_text())
    beside.write_text(json.dumps({**body, "reader_sha256": "0" * 64}))
    p = run_kgqa(*q, "-o", f"reader_checkpoint={mine}", env={"KGQA_CHAT_BACKEND": "none"})
    a = json.loads(p.stdout)
    fb = [f for f in a["fallbacks"] if f["code"] == "checkpoint"]
    assert a["details"]["terminal"] == "fixed" and len(fb) == 1 and "another chain reader" in fb[0]["message"]


def test_doctor_names_the_chain_reader_a_question_gets_and_what_answers_without_it(trained, settings, tmp_path,
                                                                                  monkeypatch):
    import re

    from kgqa.app import doctor_models as D
    from kgqa.models.heads import chain_reader

    _, ck, _ = trained
    monkeypatch.setattr(chain_reader, "default_chain_reader_checkpoint", lambda s: ck)
    row = D._chain_reader_check(settings, True)
    assert row.ok and not row.required and str(ck) in row.detail
    assert re.search(r"trained on (\d+) relations, \1 of them in the loaded KG", row.detail)
    missing = tmp_path / "none.safetensors"
    monkeypatch.setattr(chain_reader, "default_chain_reader_checkpoint", lambda s: missing)
    row = D._chain_reader_check(settings, True)
    assert not row.ok and not row.required and "\n" not in row.detail
    assert "kgqa train paths" in row.detail and "VisPath's path rules answer" in row.detail


def test_init_starts_training_from_the_given_reader_and_by_default_from_the_one_it_replaces(trained, tmp_path):
    """With a learning rate far too small to move a weight, what a run writes is what it started from: the --init
    reader's parameters, by default the reader at --checkpoint it replaces, with --init base the untrained model."""
    import shutil

    import torch
    from safetensors.torch import load_file

    _, ck, _ = trained
    env = {"KGQA_CHAT_BACKEND": "none", "KGQA_TORCH_THREADS": "1"}
    tiny = ("train", "paths", "--examples", "12", "--epochs", "1", "--lr", "1e-12", "--depth", "2", "--check", "0",
            "--json")

    def run(*extra) -> tuple[dict, dict]:
        p = run_kgqa(*tiny, *extra, env=env)
        assert p.returncode == 0, p.stderr
        rep = json.loads(p.stdout)
        return rep, load_file(rep["checkpoint"])

    same = lambda a, b: a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)     # noqa: E731
    start = load_file(str(ck))
    rep, got = run("--init", str(ck), "--checkpoint", str(tmp_path / "from-init.safetensors"))
    assert rep["init"] == str(ck) and rep["walks"] == "weighted" and same(got, start)
    mine = tmp_path / "mine.safetensors"
    shutil.copy(ck, mine)
    rep, got = run("--checkpoint", str(mine))                                    # the reader it replaces
    assert rep["init"] == str(mine) and same(got, start)
    rep, got = run("--init", "base", "--walks", "uniform", "--checkpoint", str(tmp_path / "base.safetensors"))
    assert rep["init"] is None and rep["walks"] == "uniform" and not same(got, start)
    assert_one_line_error(run_kgqa("train", "paths", "--init", str(tmp_path / "none.safetensors"), env=env),
                          "none.safetensors")
