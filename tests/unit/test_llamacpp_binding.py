"""Which Python binding runs the llama.cpp runtime (KGQA_LLAMACPP_BINDING), without loading a model."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("binding, cls", [("xllamacpp", "XLlamaCppChat"), ("llama-cpp-python", "LlamaCppChat"),
                                          ("auto", "XLlamaCppChat")])
def test_the_binding_setting_picks_the_chat_class_and_both_share_replay_keys(binding, cls):
    from kgqa.core.config import Settings
    from kgqa.models.llamacpp_chat import llamacpp_chat_class
    from kgqa.models.local_chat import LocalChat

    s = Settings(llamacpp_binding=binding)
    assert llamacpp_chat_class(s).__name__ == cls          # auto: xllamacpp is what `make setup` installs
    chat = LocalChat(s.model_copy(update={"local_llm_runtime": "llamacpp"}))
    assert type(chat._llamacpp).__name__ == cls and chat.backend == "llamacpp"


def test_auto_falls_back_to_llama_cpp_python_without_xllamacpp(monkeypatch):
    from kgqa.core.config import Settings
    from kgqa.models import xllamacpp_chat
    from kgqa.models.llamacpp_chat import LlamaCppChat, llamacpp_chat_class

    monkeypatch.setattr(xllamacpp_chat, "available", lambda: False)
    assert llamacpp_chat_class(Settings(llamacpp_binding="auto")) is LlamaCppChat

