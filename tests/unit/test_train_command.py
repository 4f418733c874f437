"""``kgqa train``'s one mechanism: a method's own training subcommand, registered from its own package
(tests/toy_method: a fifth method, no file of ``kgqa.app`` touched), is listed and run like the shipped ones,
and its report prints as text or as JSON the same way (``kgqa.core.report.Report``)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kgqa.app.cli.common import app
from kgqa.core.method import Query
from tests import toy_method


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    monkeypatch.setenv("KGQA_DATA_DIR", str(tmp_path / "data"))
    toy_method.register()
    yield tmp_path
    toy_method.unregister()


def test_a_method_registers_its_own_train_subcommand_and_the_cli_runs_it(toy):
    runner = CliRunner()
    listed = runner.invoke(app, ["train", "--help"], env={"COLUMNS": "120"})
    assert listed.exit_code == 0 and "toy" in listed.output and "Learn the toy method's number" in listed.output
    assert "grasp" in listed.output and "terminal" in listed.output and "reader" in listed.output
    own = runner.invoke(app, ["train", "toy", "--help"], env={"COLUMNS": "120"})
    assert own.exit_code == 0 and "--value" in own.output and "--json" in own.output

    ckpt = toy / "toy.json"
    text = runner.invoke(app, ["train", "toy", "--value", "1", "--value", "2.5", "--checkpoint", str(ckpt)])
    assert text.exit_code == 0, text.output
    assert text.output.splitlines() == ["fitting 2 values", "toy: mean 1.75 of 2 values", f"checkpoint: {ckpt}"]
    as_json = runner.invoke(app, ["train", "toy", "--value", "3", "--json"])
    assert as_json.exit_code == 0, as_json.output
    rep = json.loads(as_json.output)
    assert rep == {"count": 1, "mean": 3.0, "checkpoint": str(toy / "data" / "models" / "toy" / "toy.json")}

    # what it trained is what the method answers with
    method = toy_method.Toy.__new__(toy_method.Toy)
    method.opt = toy_method.ToyOptions(checkpoint=str(ckpt))
    assert method.solve(Query(question="How much?")).answer == "1.75"


def test_an_unregistered_toy_is_gone_and_a_taken_name_is_refused(toy):
    from kgqa.methods import registry

    with pytest.raises(ValueError, match="already registered"):
        registry.register_train_command("grasp", toy_method.train_toy)
    toy_method.unregister()
    gone = CliRunner().invoke(app, ["train", "toy", "--value", "1"])
    assert gone.exit_code != 0
    toy_method.register()
