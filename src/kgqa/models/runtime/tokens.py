"""Tokenisation for the BERT models at ask time: Hugging Face ``tokenizers`` over the base model's
``tokenizer.json`` (the same word pieces and character offsets as ``transformers``' fast tokenizer, which
wraps it; tests/unit/test_runtime.py compares them), so reading needs neither ``transformers`` nor torch:
importing those two is most of a cold ``kgqa ask``."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Sequence

import numpy as np


@functools.lru_cache(maxsize=8)
def _tokenizer_json(base: str) -> str:
    return (Path(base) / "tokenizer.json").read_text(encoding="utf-8")


def wordpieces(base: str):
    """A ``tokenizers.Tokenizer`` of the base model without truncation or padding (its tokenizer.json may
    carry a sentence-transformers length): a new object per caller, since those settings live on it."""
    from tokenizers import Tokenizer

    tk = Tokenizer.from_str(_tokenizer_json(base))
    tk.no_truncation()
    tk.no_padding()
    return tk


def encode_texts(tk, texts: Sequence[str]) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
    """(word-piece ids, character offsets) of each text, no special tokens."""
    encs = tk.encode_batch(list(texts), add_special_tokens=False)
    return [e.ids for e in encs], [e.offsets for e in encs]


def special_ids(tk) -> tuple[int, int]:
    """([CLS], [SEP]) ids."""
    return tk.token_to_id("[CLS]"), tk.token_to_id("[SEP]")


def padded_batch(ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]],
                 multiple: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(input ids, segment ids, attention mask) as int64 arrays, the rows padded with zeros to the longest one,
    rounded up to a multiple of ``multiple`` tokens (few distinct shapes keep the CPU kernels' per-shape caches,
    and the process's memory, small)."""
    n = max((len(r) for r in ids), default=0)
    n = -(-n // multiple) * multiple
    out_ids = np.zeros((len(ids), n), dtype=np.int64)
    out_types = np.zeros((len(ids), n), dtype=np.int64)
    mask = np.zeros((len(ids), n), dtype=np.int64)
    for r, (row, ty) in enumerate(zip(ids, types)):
        out_ids[r, :len(row)] = row
        out_types[r, :len(row)] = ty
        mask[r, :len(row)] = 1
    return out_ids, out_types, mask


def pair_batch(tk, questions: Sequence[str], passages: Sequence[str], max_length: int) -> dict[str, np.ndarray]:
    """``[CLS] question [SEP] passage [SEP]`` rows, the passage cut to fit ``max_length``, padded to the
    longest row: input_ids, token_type_ids, attention_mask (int64)."""
    cls, sep = special_ids(tk)
    qs, _ = encode_texts(tk, questions)
    ps, _ = encode_texts(tk, passages)
    rows, types = [], []
    for q, p in zip(qs, ps):
        room = max(0, max_length - len(q) - 3)
        rows.append([cls] + q + [sep] + p[:room] + [sep])
        types.append([0] * (len(q) + 2) + [1] * (min(len(p), room) + 1))
    ids, tt, mask = padded_batch(rows, types)
    return {"input_ids": ids, "token_type_ids": tt, "attention_mask": mask}


def sentence_tokenizer(model_path: str, max_length: int):
    """``texts -> {input_ids, attention_mask, token_type_ids}`` (int64 numpy, padded to the longest, cut at
    ``max_length``) for a sentence-transformers folder: Hugging Face ``tokenizers`` over the folder's
    tokenizer.json when it has one and says how to pad (importing ``transformers`` costs a cold ``kgqa ask``
    about 1.5 s, and pulls in torch), else ``transformers``' AutoTokenizer. Both give the same word pieces
    (tests/unit/test_runtime.py)."""
    path = Path(model_path) / "tokenizer.json"
    if path.is_file():
        from tokenizers import Tokenizer

        tk = Tokenizer.from_file(str(path))
        pad = tk.padding
        if pad and pad.get("pad_token") is not None:
            tk.enable_truncation(max_length)
            tk.enable_padding(pad_id=pad["pad_id"], pad_token=pad["pad_token"], pad_type_id=pad["pad_type_id"])

            def encode(texts: list[str]) -> dict[str, np.ndarray]:
                encs = tk.encode_batch(texts)
                return {"input_ids": np.array([e.ids for e in encs], dtype=np.int64),
                        "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
                        "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64)}

            return encode
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    return lambda texts: {k: np.asarray(v, dtype=np.int64) for k, v in hf(
        texts, padding=True, truncation=True, max_length=max_length, return_tensors="np").items()}
