"""Contract tests of the OpenAI-compatible backends (chat, vision, soft prompt).

These are CONTRACT tests, not tests against vLLM: ``ContractServer`` (tests/fakes/vllm_server.py), a
stdlib HTTP server on 127.0.0.1, checks each request exactly as vLLM's OpenAI-compatible API
documents it (chat completions with ``response_format`` json_schema, image parts as ``data:`` URLs,
completions with ``echo``/``logprobs``, completions with ``prompt_embeds`` = base64 of
``torch.save(tensor)`` and ``prompt=""``), answers in the documented reply shape, and can fail on
demand (HTTP 4xx/5xx, a hang). A request that breaks the contract gets HTTP 422 and is recorded, so
the test fails naming the violation.
"""

from __future__ import annotations

import base64

import pytest
from pydantic import BaseModel, Field

from kgqa.core.errors import BadModelReply, ModelUnavailable
from tests.fakes.vllm_server import ContractServer


class Verdict(BaseModel):
    answerable: bool
    answer: str = Field("", max_length=50)


@pytest.fixture()
def server():
    s = ContractServer()
    yield s
    s.httpd.shutdown()
    assert not s.violations, s.violations


@pytest.fixture()
def settings_for(tmp_path):
    from kgqa.core.config import Settings

    def make(url: str, **kw):
        return Settings(data_dir=tmp_path, openai_base_url=url, openai_api_key="EMPTY", chat_model="served-model",
                        vision_model="served-vlm", softprompt_model="served-model", model_timeout_s=2.0, **kw)
    return make


@pytest.fixture()
def png(tmp_path):
    from PIL import Image

    from kgqa.core.images import load_image

    p = tmp_path / "red.png"
    Image.new("RGB", (32, 24), (200, 10, 10)).save(p)
    return load_image(p)


def test_chat_generate_and_usage_is_metered(server, settings_for):
    from kgqa.models.accounting import Meter
    from kgqa.models.openai_backend import OpenAIChat

    meter = Meter()
    chat = OpenAIChat(settings_for(server.url), meter=meter)
    server.replies.append("Paris")
    with meter.question("q1"):
        assert chat.generate("Capital of France?", system="Be brief.", max_tokens=5) == "Paris"
    req = server.requests[-1]
    assert req["model"] == "served-model" and req["max_tokens"] == 5 and req["temperature"] == 0.0
    assert req["messages"] == [{"role": "system", "content": "Be brief."},
                               {"role": "user", "content": "Capital of France?"}]
    cost = meter.costs("q1")["chat"]
    assert (cost.calls, cost.prompt_tokens, cost.completion_tokens) == (1, 11, 7)


def test_chat_json_sends_schema_and_retries_a_bad_reply(server, settings_for):
    from kgqa.models.openai_backend import OpenAIChat

    chat = OpenAIChat(settings_for(server.url, json_retries=1))
    server.replies += ['{"answerable": "perhaps"}', '{"answerable": true, "answer": "Paris"}']
    v = chat.generate_json("Is it answerable?", Verdict)
    assert v == Verdict(answerable=True, answer="Paris")
    first, second = server.requests[-2:]
    assert first["response_format"]["json_schema"]["schema"] == Verdict.model_json_schema()
    assert first["response_format"]["json_schema"]["name"] == "Verdict"
    assert first["temperature"] == 0.0 and second["temperature"] > 0  # a retry is not the same greedy call


def test_chat_json_gives_up_with_bad_model_reply(server, settings_for):
    from kgqa.models.openai_backend import OpenAIChat

    chat = OpenAIChat(settings_for(server.url, json_retries=2))
    server.replies += ["not json"] * 3
    with pytest.raises(BadModelReply, match=r"no valid Verdict JSON after 3 tries"):
        chat.generate_json("Is it answerable?", Verdict)
    assert len(server.requests) == 3


def test_choose_scores_options_from_echoed_logprobs(server, settings_for):
    from kgqa.models.openai_backend import CHOOSE_FRAME, OpenAIChat

    chat = OpenAIChat(settings_for(server.url))
    scores = chat.choose("Pick one", ["ab", "abcd"])
    req = server.requests[-1]
    prefix = CHOOSE_FRAME.format(prompt="Pick one")
    assert req["prompt"] == [prefix + "ab", prefix + "abcd"] and req["echo"] is True and req["logprobs"] == 0
    # the contract server gives -0.5 per echoed character: only the option's characters count
    assert scores == [-1.0, -2.0]
    assert chat.choose("Pick one", ["ab", "abcd"], per_token=True) == [-0.5, -0.5]


def test_vision_sends_the_image_as_a_data_url(server, settings_for, png):
    from kgqa.models.openai_backend import OpenAIVision

    vis = OpenAIVision(settings_for(server.url))
    server.replies += ["Eiffel Tower.", '{"answerable": false}']
    assert vis.recognize(png, "tower") == "Eiffel Tower"
    parts = server.requests[0]["messages"][0]["content"]
    assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert base64.b64decode(parts[0]["image_url"]["url"].split(",", 1)[1]) == png.data
    assert "tower" in parts[1]["text"] and server.requests[0]["model"] == "served-vlm"
    assert vis.generate_json(png, "Answerable?", Verdict) == Verdict(answerable=False)


def test_softprompt_sends_prompt_embeds(server, settings_for):
    import torch

    from kgqa.models.openai_backend import OpenAISoftPrompt

    embedder = lambda text: torch.ones(len(text.split()), 8)  # noqa: E731 - the served model's embedding stand-in
    sp = OpenAISoftPrompt(settings_for(server.url), embedder=embedder, hidden_size=8)
    server.replies.append("Paris")
    soft = torch.full((3, 8), 0.25, requires_grad=True)
    assert sp.generate(soft, "capital of France", max_tokens=4) == "Paris"
    req = server.requests[-1]
    assert req["prompt"] == "" and req["max_tokens"] == 4
    sent = server.last_embeds
    assert sent.shape == (3 + 3, 8)
    assert torch.equal(sent[:3], soft.detach()) and torch.equal(sent[3:], torch.ones(3, 8))


@pytest.mark.parametrize("status,fragment", [(500, "HTTP 500: engine crashed"), (400, "HTTP 400: bad model")])
def test_http_errors_are_one_line_model_unavailable(server, settings_for, status, fragment):
    from kgqa.models.openai_backend import OpenAIChat

    chat = OpenAIChat(settings_for(server.url))
    msg = fragment.split(": ", 1)[1]
    server.replies.append((status, {"object": "error", "message": msg, "type": "BadRequestError", "code": status}))
    with pytest.raises(ModelUnavailable) as e:
        chat.generate("hi")
    assert fragment in str(e.value) and server.url in str(e.value) and "\n" not in str(e.value)


def test_timeout_is_model_unavailable(server, settings_for):
    from kgqa.models.openai_backend import OpenAIChat

    server.hang_s = 1.5
    chat = OpenAIChat(settings_for(server.url).model_copy(update={"model_timeout_s": 0.3}))
    with pytest.raises(ModelUnavailable, match="timed out"):
        chat.generate("hi")


def test_server_down_is_model_unavailable(settings_for):
    import socket

    from kgqa.models.openai_backend import OpenAIChat

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    chat = OpenAIChat(settings_for(f"http://127.0.0.1:{port}/v1"))
    with pytest.raises(ModelUnavailable, match=r"cannot connect \(is the server running\?\)"):
        chat.generate("hi")


def test_replay_cache_answers_without_the_server(server, settings_for, tmp_path):
    from kgqa.models.accounting import Meter, ReplayCache
    from kgqa.models.openai_backend import OpenAIChat

    cache = ReplayCache(tmp_path / "replay")
    meter = Meter()
    chat = OpenAIChat(settings_for(server.url), meter=meter, cache=cache)
    server.replies.append("Paris")
    assert chat.generate("Capital of France?") == "Paris"
    server.httpd.shutdown()  # a second identical call must not need the server
    assert chat.generate("Capital of France?") == "Paris"
    assert meter.costs()["chat"].calls == 2 and meter.cache_hits == {"chat": 1}
    assert len(server.requests) == 1


def test_doctor_rows_for_remote_roles(server, settings_for):
    from kgqa.app.doctor_models import _chat_check, _softprompt_check, _vision_check

    s = settings_for(server.url, chat_backend="vllm", vision_backend="vllm", softprompt_backend="vllm")
    server.replies.append("Paris")
    chat = _chat_check(s, True, None)
    assert chat.ok and "vllm · served-model @ " + server.url in chat.detail and "smoke: 'Paris'" in chat.detail
    vision = _vision_check(s, True, None)  # the server does not serve the configured VLM
    assert not vision.ok and "reachable, but serves served-model" in vision.detail
    soft = _softprompt_check(s.model_copy(update={"softprompt_model": "served-model"}), True, None)
    assert soft.ok and not soft.required and "--enable-prompt-embeds" in soft.detail
    configured_only = _chat_check(s, False, None)  # smoke=False contacts nothing
    assert configured_only.ok and len(server.requests) == 1
