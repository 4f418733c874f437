"""Logic around the llama.cpp chat backend that needs no model: the grammar's schema, deadlines."""

from __future__ import annotations

import time

import pytest

from kgqa.core.errors import ModelUnavailable


def test_gbnf_compatible_spells_out_whitespace_classes_everywhere():
    from kgqa.models.llamacpp_base import gbnf_compatible

    js = {"type": "object", "properties": {
        "a": {"type": "string", "pattern": r"^[^\s<>]{0,5}$"},
        "b": {"type": "array", "items": {"type": "string", "pattern": r"^\s?x$"}},
        "c": {"type": "integer"}}}
    out = gbnf_compatible(js)
    assert out["properties"]["a"]["pattern"] == "^[^ \\t\\n\\r<>]{0,5}$"
    assert out["properties"]["b"]["items"]["pattern"] == "^[ \\t\\n\\r]?x$"
    assert out["properties"]["c"] == {"type": "integer"}
    assert js["properties"]["a"]["pattern"] == r"^[^\s<>]{0,5}$"   # the caller's schema is not changed


def test_small_integer_ranges_become_enums_the_grammar_enforces():
    from kgqa.models.llamacpp_base import gbnf_compatible

    out = gbnf_compatible({"type": "object", "properties": {
        "depth": {"type": "integer", "minimum": 1, "maximum": 8},
        "count": {"type": "integer", "minimum": 0},
        "big": {"type": "integer", "minimum": 0, "maximum": 10_000}}})["properties"]
    assert out["depth"]["enum"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert "enum" not in out["count"] and "enum" not in out["big"]


def test_vispath_decoding_schemas_convert_to_a_grammar():
    """Every schema VisPath decodes under becomes a GBNF grammar without a regex llama.cpp lacks."""
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    from kgqa.models.llamacpp_base import gbnf_compatible
    from kgqa.models.structured import decoding_schema

    try:
        from kgqa.methods.vispath import prompts as P
    except ImportError:
        from kgqa import prompts as P
    import json

    for schema in (P.ReferringExpression, P.CandidateRanking, P.QuestionSketch, P.HopIntent, P.ChainSelection,
                   P.EvidenceStatement, P.Answerability, P.FinalAnswer, P.CandidateCheck):
        gbnf = json_schema_to_gbnf(json.dumps(gbnf_compatible(decoding_schema(schema.model_json_schema()))))
        assert "root ::=" in gbnf and "\\s" not in gbnf, schema.__name__


def test_deadline_raises_model_unavailable_naming_the_setting():
    from kgqa.models.llamacpp_base import _Deadline

    d = _Deadline(0.0, "local LLM X (llama.cpp)")
    time.sleep(0.001)
    assert d.over()
    with pytest.raises(ModelUnavailable, match=r"local LLM X \(llama.cpp\): no reply within 0 s \(KGQA_MODEL_TIMEOUT_S\)"):
        d.check()
    _Deadline(60.0, "x").check()   # well within: no error


def test_vispath_llm_steps_name_the_model_asked_steps():
    from pydantic import ValidationError

    from kgqa.methods.vispath.options import LLM_STEPS, VisPathOptions, parse_llm_steps

    assert parse_llm_steps("all") == frozenset(LLM_STEPS) and parse_llm_steps("none") == frozenset()
    assert parse_llm_steps(" Sketch, chain ") == {"sketch", "chain"}
    assert VisPathOptions().llm_steps == "auto"     # the paper's every step, unless the model is the bundled 135M
    with pytest.raises(ValidationError, match="unknown step.*sketches"):
        VisPathOptions(llm_steps="sketches")
