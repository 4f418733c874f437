"""A stand-in for vLLM's OpenAI-compatible API that checks each request against its documented contract.

A stdlib HTTP server on 127.0.0.1 checks each request exactly as vLLM's OpenAI-compatible API
documents it (chat completions with ``response_format`` json_schema, image parts as ``data:``
URLs, completions with ``echo``/``logprobs``, completions with ``prompt_embeds`` = base64 of
``torch.save(tensor)`` and ``prompt=""``), answers in the documented reply shape, and can fail
on demand (queued ``(status, body)`` replies, ``hang_s``). A request that breaks the contract
gets HTTP 422 and is recorded in ``violations``.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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
