"""Contract tests of the OpenAI-compatible backends (chat, vision, soft prompt).

These are CONTRACT tests, not tests against vLLM: a stdlib HTTP server on
127.0.0.1 checks each request exactly as vLLM's OpenAI-compatible API documents
it (chat completions with ``response_format`` json_schema, image parts as
``data:`` URLs, completions with ``echo``/``logprobs``, completions with
``prompt_embeds`` = base64 of ``torch.save(tensor)`` and ``prompt=""``), answers
in the documented reply shape, and can fail on demand (HTTP 4xx/5xx, a hang).
A request that breaks the contract gets HTTP 422 and is recorded, so the test
fails naming the violation.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel, Field

from kgqa.core.errors import BadModelReply, ModelUnavailable


class Verdict(BaseModel):
    answerable: bool
    answer: str = Field("", max_length=50)


class ContractServer:
    def __init__(self):
        self.replies: list = []        # queued message texts / callables / (status, body)
        self.requests: list[dict] = []
        self.violations: list[str] = []
        self.hang_s = 0.0
        srv = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path == "/v1/models":
                    return self._send(200, {"object": "list", "data": [
                        {"id": "served-model", "object": "model", "owned_by": "vllm"}]})
                self._send(404, {"object": "error", "message": f"no route {self.path}", "code": 404})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                srv.requests.append({"path": self.path, **body})
                if srv.hang_s:
                    time.sleep(srv.hang_s)
                problems = srv.check(self.path, body, self.headers)
                if problems:
                    srv.violations += problems
                    return self._send(422, {"object": "error", "message": "; ".join(problems), "code": 422})
                reply = srv.replies.pop(0) if srv.replies else "ok"
                if isinstance(reply, tuple):
                    return self._send(*reply)
                if self.path == "/v1/chat/completions":
                    return self._send(200, chat_reply(body, reply))
                return self._send(200, completion_reply(body, reply))

        class Quiet(ThreadingHTTPServer):
            def handle_error(self, request, client_address):
                pass  # the hang test's client has gone away: a broken pipe is expected

        self.httpd = Quiet(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    # -- the contract --------------------------------------------------------
    def check(self, path: str, b: dict, headers) -> list[str]:
        p: list[str] = []
        if headers.get("Authorization") != "Bearer EMPTY":
            p.append("Authorization must be 'Bearer <OPENAI_API_KEY>'")
        if not isinstance(b.get("model"), str) or not b["model"]:
            p.append("model: a non-empty string is required")
        if "max_tokens" in b and not (isinstance(b["max_tokens"], int) and b["max_tokens"] > 0):
            p.append("max_tokens must be a positive int")
        if path == "/v1/chat/completions":
            msgs = b.get("messages")
            if not isinstance(msgs, list) or not msgs:
                p.append("messages: a non-empty list is required")
                return p
            for m in msgs:
                if m.get("role") not in ("system", "user", "assistant"):
                    p.append(f"messages[].role {m.get('role')!r}")
                c = m.get("content")
                if isinstance(c, list):
                    for part in c:
                        if part.get("type") == "text":
                            if not isinstance(part.get("text"), str):
                                p.append("text part without text")
                        elif part.get("type") == "image_url":
                            url = (part.get("image_url") or {}).get("url", "")
                            if not url.startswith("data:image/") or ";base64," not in url:
                                p.append("image_url.url must be a data:image/...;base64, URL")
                            else:
                                base64.b64decode(url.split(",", 1)[1], validate=True)
                        else:
                            p.append(f"unknown content part type {part.get('type')!r}")
                elif not isinstance(c, str):
                    p.append("messages[].content must be a string or a list of parts")
            rf = b.get("response_format")
            if rf is not None:
                js = rf.get("json_schema") or {}
                if rf.get("type") != "json_schema" or not isinstance(js.get("name"), str) \
                        or not isinstance(js.get("schema"), dict) or "properties" not in js["schema"]:
                    p.append("response_format must be {type: json_schema, json_schema: {name, schema}}")
        elif path == "/v1/completions":
            if "prompt_embeds" in b:
                import torch

                try:
                    t = torch.load(io.BytesIO(base64.b64decode(b["prompt_embeds"])), weights_only=True)
                except Exception as e:  # noqa: BLE001
                    p.append(f"prompt_embeds is not base64 of torch.save(tensor): {e}")
                else:
                    if not isinstance(t, torch.Tensor) or t.dim() != 2:
                        p.append("prompt_embeds must be a 2-D tensor (seq_len, hidden_size)")
                    self.last_embeds = t
                if b.get("prompt") not in ("", None):
                    p.append("with prompt_embeds the text prompt must be empty")
            elif not isinstance(b.get("prompt"), (str, list)):
                p.append("prompt: a string or list of strings is required")
        else:
            p.append(f"unknown endpoint {path}")
        return p


def chat_reply(body, text):
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}}


def completion_reply(body, reply):
    prompts = body.get("prompt")
    if body.get("echo"):  # legacy logprobs: one token per character, log p = -0.5 each; last = generated
        choices = []
        for i, text in enumerate(prompts if isinstance(prompts, list) else [prompts]):
            choices.append({"index": i, "text": text + "x", "finish_reason": "length", "logprobs": {
                "tokens": list(text) + ["x"], "token_logprobs": [None] + [-0.5] * (len(text) - 1) + [-9.0],
                "text_offset": list(range(len(text) + 1)), "top_logprobs": None}})
        return {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": body["model"],
                "choices": choices, "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}
    return {"id": "cmpl-1", "object": "text_completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "text": reply, "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}}


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
