"""The converted GGUF is cached once per user, not per data dir (issue 26, item 4): a new data dir
does not convert SmolLM2 again (50-85 s each time before)."""

from __future__ import annotations

from kgqa.core.config import Settings
from kgqa.models.gguf import hf_folder


def test_two_data_dirs_share_one_converted_model_under_xdg_cache_home(tmp_path, monkeypatch):
    gguf = tmp_path / "w" / "Tiny.Q4_1.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF" + b"\0" * 60)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    a = hf_folder(Settings(data_dir=tmp_path / "a", local_llm_gguf=gguf))
    b = hf_folder(Settings(data_dir=tmp_path / "b", local_llm_gguf=gguf))
    assert a == b
    assert a.parent == tmp_path / "xdg" / "kgqa" / "models" and a.name.startswith("Tiny.Q4_1-")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert hf_folder(Settings(data_dir=tmp_path / "a", local_llm_gguf=gguf)).parent == \
        tmp_path / "home" / ".cache" / "kgqa" / "models"


def test_another_gguf_of_the_same_name_is_not_taken_for_the_cached_one(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    g1, g2 = tmp_path / "1" / "M.gguf", tmp_path / "2" / "M.gguf"
    for g, n in ((g1, 10), (g2, 20)):
        g.parent.mkdir()
        g.write_bytes(b"GGUF" + b"\0" * n)
    s1 = Settings(data_dir=tmp_path / "d", local_llm_gguf=g1)
    assert hf_folder(s1) != hf_folder(Settings(data_dir=tmp_path / "d", local_llm_gguf=g2))


def test_a_folder_converted_under_the_data_dir_by_an_older_version_is_still_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    gguf = tmp_path / "M.gguf"
    gguf.write_bytes(b"GGUF")
    s = Settings(data_dir=tmp_path / "d", local_llm_gguf=gguf)
    old = s.models_dir / "M-hf"
    old.mkdir(parents=True)
    (old / "config.json").write_text("{}")
    assert hf_folder(s) == old
