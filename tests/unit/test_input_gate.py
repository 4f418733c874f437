"""The one input gate (issue 62, item 4; issue 58): a question, an id, a pattern or an option value is checked
once, where it enters, and a bad one is one line (exit 2) or a 400, never a traceback or a 500."""

from __future__ import annotations

import os
import subprocess

import pytest

from kgqa.core.errors import InvalidInput
from tests.conftest import KGQA, assert_one_line_error, run_kgqa
from tests.unit.test_method_contract import lookup  # noqa: F401 (the fixture)

NO_GRAPH = {"NEO4J_URI": "bolt://127.0.0.1:9", "KGQA_NEO4J_TIMEOUT_S": "1"}


@pytest.mark.parametrize("text,fragment", [
    ("Where was \udcff born?", "question is not valid UTF-8 text (byte 0xff) at character 11"),
    ("Where \ud800 is it?", "question is not valid UTF-8 text at character 7"),
    ("Who\x00 is it?", "question holds a control character (U+0000) at character 4"),
    ("Who\x1b[2J is it?", "question holds a control character (U+001B)"),
    ("   ", "question is empty"),
    (12, "question: expected text, got int"),
])
def test_a_bad_question_is_one_line_naming_what_and_where(text, fragment):
    from kgqa.core.inputs import check_question

    with pytest.raises(InvalidInput) as e:
        check_question(text)
    assert fragment in str(e.value)


def test_a_good_question_becomes_a_question_and_passes_the_gate_once():
    from kgqa.core.inputs import Question, check_question

    q = check_question("  Where was\tthe architect\nborn?  ")
    assert isinstance(q, Question) and q == "Where was\tthe architect\nborn?"
    assert check_question(q) is q                      # validated where it entered: passed on as it is


@pytest.mark.parametrize("value,fragment", [
    ("Q\udce990", "--entity is not valid UTF-8 text (byte 0xe9)"),
    ("x" * 1001, "--entity is 1,001 characters"),
    ("", "--entity is empty"),
])
def test_ids_and_patterns_pass_the_same_gate(value, fragment):
    from kgqa.core.inputs import check_text

    with pytest.raises(InvalidInput, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        check_text(value, "--entity")


@pytest.mark.parametrize("method,options,fragment", [
    ("vispath", {"pre_cut": str(2**70)}, "vispath option pre_cut="),
    ("vispath", {"M1": str(2**70)}, "vispath option M1="),
    ("vispath", {"K": 2**70}, "vispath option K="),
    ("grasp", {"scan_cap": str(2**70)}, "grasp option scan_cap="),
    ("vispath", {"M1": "9" * 5000}, "vispath option M1: a number of 5,000 digits is out of range"),
    ("vispath", {"M1": 10**4000}, "vispath option M1: a number of about 4,001 digits is out of range"),
    ("vispath", {"delta": "nan"}, "vispath option delta='nan': must be a finite number"),
    ("vispath", {"typing_weight": "inf"}, "must be a finite number"),
    ("mkgrag", {"threshold": float("-inf")}, "must be a finite number"),
])
def test_numbers_out_of_range_are_one_line(method, options, fragment):
    from kgqa.core.method import parse_options
    from kgqa.methods.registry import get_method

    with pytest.raises(InvalidInput) as e:
        parse_options(get_method(method), options)
    assert fragment in str(e.value) and len(str(e.value)) < 400


def test_a_number_out_of_range_on_the_command_line_is_one_line_exit_2_before_anything_connects():
    p = run_kgqa("ask", "Where was Michael Collins born?", "-o", f"pre_cut={2**70}", "-o", "M1=3", env=NO_GRAPH)
    assert_one_line_error(p, "vispath option pre_cut=", code=2)


def _bounds(field):
    """The field's own constraints, and those of the numeric member of a union (``float`` bounded | "auto")."""
    from typing import Annotated, get_args, get_origin

    found = list(field.metadata)
    for member in get_args(field.annotation):
        if get_origin(member) is Annotated:
            for m in get_args(member)[1:]:
                found.extend(getattr(m, "metadata", [m]))
    return found


def test_every_numeric_option_of_every_method_says_its_range():
    import annotated_types as at

    from kgqa.methods.registry import method_classes

    for c in method_classes().values():
        for n, f in c.Options.model_fields.items():
            if any(t in str(f.annotation) for t in ("int", "float")):
                bounds = _bounds(f)
                assert any(isinstance(m, (at.Ge, at.Gt)) for m in bounds), (c.name, n)
                assert any(isinstance(m, (at.Le, at.Lt)) for m in bounds), (c.name, n)


def test_a_union_option_refuses_numbers_out_of_its_range_nan_and_infinity():
    from kgqa.core.method import parse_options
    from kgqa.methods.registry import get_method

    grasp = get_method("grasp")
    for bad in ("101", "-1", "nan", "inf", "often"):
        with pytest.raises(InvalidInput) as e:
            parse_options(grasp, {"reader_kind_weight": bad})
        assert "reader_kind_weight" in str(e.value) and len(str(e.value)) < 400
    assert parse_options(grasp, {"reader_kind_weight": "auto"}).reader_kind_weight == "auto"
    assert parse_options(grasp, {"reader_kind_weight": "0.5"}).reader_kind_weight == 0.5


def test_a_question_or_doc_id_in_invalid_utf8_on_the_command_line_is_one_line_exit_2():
    env = {**os.environ, **NO_GRAPH}
    env.pop("KGQA_DEBUG", None)
    for argv, fragment in (([b"ask", b"Where was \xe9 born?"], "question is not valid UTF-8 text (byte 0xe9)"),
                           ([b"ask", b"--method", b"mkgrag", b"--doc", b"caf\xe9", b"What is it?"],
                            "--doc/--docs: a document id or pattern is not valid UTF-8")):
        p = subprocess.run([KGQA.encode(), *argv], env=env, capture_output=True, timeout=120)
        p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode("utf-8", "replace")
        assert "NEO4J_URI" not in p.stderr, p.stderr
        assert_one_line_error(p, fragment, code=2)


def test_the_question_of_one_kgqa_ask_is_validated_once(monkeypatch, lookup):
    """Issue 58: the CLI gate, the pipeline, the Query and BaseMethod.answer each checked it (four times)."""
    from kgqa.app import pipeline as pipeline_mod
    from kgqa.app.cli import ask as ask_cli
    from kgqa.core import inputs
    from tests.unit.test_method_contract import DictGraph

    calls = []
    real = inputs._bad_character
    monkeypatch.setattr(inputs, "_bad_character", lambda t, ok: calls.append(t) or real(t, ok))
    _, question = ask_cli._ask_args(["What is Q90?"])
    models = type("M", (), {"encoder": None, "chat": None, "vision": None, "softprompt": None, "meter": None})()
    p = pipeline_mod.Pipeline(None, "lookup", graph=DictGraph({"Q90": "Paris"}), models=models, kg=object(),
                              write_trace=False)
    ans = p.answer(question)
    assert ans.answer == "Paris"
    assert calls == ["What is Q90?"]


# --------------------------------------------------------------------------- the full-disk line (item 5)
def test_a_full_disk_line_names_the_full_filesystem_not_the_working_folder(tmp_path, monkeypatch):
    """A write to an open file fails without a file name: the line named "." (the working folder) and its free
    space, though the full filesystem was the data dir's."""
    import errno
    import shutil
    from collections import namedtuple

    from kgqa.core.errors import no_space

    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("KGQA_DATA_DIR", str(data))
    Usage = namedtuple("Usage", "total used free")
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10, 10, 0) if str(p).startswith(str(data))
                        else real(p))
    line = str(no_space(OSError(errno.ENOSPC, "No space left on device"), None))
    assert "writing ." not in line and str(data) in line and "0.0 MB free there" in line, line
    assert "the data dir" in line and "on the filesystem at /" in line, line
    named = str(no_space(OSError(errno.ENOSPC, "No space left on device", str(data / "x.tsv")), None))
    assert f"writing {data / 'x.tsv'}: the filesystem at " in named and "0.0 MB free there" in named, named
