"""The runtime layer (kgqa.models.runtime): the learned reader and ranker on onnxruntime with the same word pieces
as the transformers tokenizer they were trained with, torch's answers, and no torch import once exported; one
CPU bf16 probe for the encoder and the heads; every name imported from kgqa exists."""

import json
import subprocess
import sys

import numpy as np
import pytest

from kgqa.core.errors import InvalidInput
from kgqa.models.encoder import default_model_path
from kgqa.models.heads import span_reader as S
from kgqa.models.heads.passage_ranker import PassageRankerUnavailable
from kgqa.models.heads.passage_ranker import load_passage_ranker as load_ranker
from kgqa.models.runtime import backend as B
from kgqa.models.runtime import tokens as R
from kgqa.models.runtime.tokens import sentence_tokenizer
from tests.conftest import REPO

READER = REPO / "data" / "reader" / "span-reader.safetensors"
RANKER = REPO / "data" / "ranker" / "passage-ranker.safetensors"

PASSAGES = [
    "The bridge was designed by Skidmore, Owings and Merrill in 1998 and opened two years later.",
    "Café Ünïcödé in Zürich — naïve façades, 東京 and Москва; it cost about 330 metres of rope (≈ €1,200).",
    "The Sydney Opera House is a multi-venue performing arts centre in Sydney. It was designed by Danish "
    "architect Jørn Utzon and formally opened on 20 October 1973. " * 6,
]
QUESTIONS = ["Who designed the bridge?", "How much rope did it cost?", "When was the Opera House opened?"]


@pytest.fixture(scope="module")
def hf():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(default_model_path())


def test_word_pieces_and_offsets_are_the_transformers_tokenizers(hf):
    """Checkpoints were trained on transformers' tokenisation; reading without it must see the same ids."""
    tk = R.wordpieces(default_model_path())
    ids, offs = R.encode_texts(tk, PASSAGES + QUESTIONS)
    ref = hf(PASSAGES + QUESTIONS, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    assert ids == ref["input_ids"]
    assert [[tuple(o) for o in x] for x in offs] == [[tuple(o) for o in x] for x in ref["offset_mapping"]]
    for max_length in (24, 384):
        got = R.pair_batch(tk, QUESTIONS, PASSAGES, max_length)
        want = hf(QUESTIONS, PASSAGES, padding=True, truncation="only_second", max_length=max_length,
                  return_tensors="np")
        for k in ("input_ids", "token_type_ids", "attention_mask"):
            assert (got[k] == want[k]).all(), k


def test_the_query_encoders_tokenizer_is_the_transformers_one(hf):
    texts = PASSAGES + QUESTIONS + ["", "Q42", "x" * 2000]
    got = sentence_tokenizer(default_model_path(), 256)(texts)
    want = hf(texts, padding=True, truncation=True, max_length=256, return_tensors="np")
    for k in ("input_ids", "token_type_ids", "attention_mask"):
        assert (got[k] == want[k]).all(), k


def test_onnx_reader_reads_torch_fp32s_spans(tmp_path):
    torch_reader = S.load_span_reader(READER)
    onnx_reader = S.load_span_reader(READER, backend="onnx", cache_dir=tmp_path)
    assert onnx_reader.runtime == "onnx" and torch_reader.runtime == "torch"
    assert onnx_reader.threshold == torch_reader.threshold
    for q in QUESTIONS:
        a = torch_reader.read(q, PASSAGES, top=3, bf16=False)
        b = onnx_reader.read(q, PASSAGES, top=3)
        assert [(x.passage, x.text) for x in a] == [(x.passage, x.text) for x in b]
        assert np.allclose([x.score for x in a], [x.score for x in b], atol=1e-3)
    assert "1973" in onnx_reader.read(QUESTIONS[2], PASSAGES, top=1)[0].text


def test_onnx_ranker_scores_as_torch_fp32(tmp_path):
    a = load_ranker(RANKER).score(QUESTIONS[2], PASSAGES, bf16=False)
    b = load_ranker(RANKER, backend="onnx", cache_dir=tmp_path).score(QUESTIONS[2], PASSAGES)
    assert np.allclose(a, b, atol=1e-3) and int(np.argmax(b)) == 2


def test_a_second_process_reads_from_the_export_without_importing_torch(tmp_path, capfd):
    """What makes a cold `kgqa ask --method mkgrag` quick: once exported, neither torch nor transformers load.
    The export itself says so, once, on stderr (the first ask waits for it)."""
    S.load_span_reader(READER, backend="onnx", cache_dir=tmp_path)
    load_ranker(RANKER, backend="onnx", cache_dir=tmp_path)
    said = capfd.readouterr().err
    assert "exporting span-reader to ONNX once" in said and "exporting passage-ranker to ONNX once" in said
    code = (
        "import sys, json\n"
        "from kgqa.models.heads.span_reader import load_span_reader\n"
        "from kgqa.models.heads.passage_ranker import load_passage_ranker as load_ranker\n"
        f"r = load_span_reader({str(READER)!r}, backend='onnx', cache_dir={str(tmp_path)!r})\n"
        f"k = load_ranker({str(RANKER)!r}, backend='onnx', cache_dir={str(tmp_path)!r})\n"
        f"g = r.read({QUESTIONS[2]!r}, {PASSAGES!r}, top=1)[0].text\n"
        f"s = k.score({QUESTIONS[0]!r}, {PASSAGES!r}).tolist()\n"
        "print(json.dumps([g, s, 'torch' in sys.modules, 'transformers' in sys.modules]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "exporting" not in out.stderr
    text, scores, torch_loaded, transformers_loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert "1973" in text and len(scores) == 3
    assert not torch_loaded and not transformers_loaded


def test_a_damaged_export_is_one_line_naming_it(tmp_path):
    load_ranker(RANKER, backend="onnx", cache_dir=tmp_path)
    (onnx,) = tmp_path.glob("passage-ranker-*/model.onnx")
    onnx.write_bytes(b"not an onnx file")
    other = tmp_path / "copy.safetensors"                         # another path: not the loaded one
    other.write_bytes(RANKER.read_bytes())
    with pytest.raises(PassageRankerUnavailable, match=r"ONNX export .*model\.onnx.*KGQA_READER_BACKEND=torch"):
        load_ranker(other, backend="onnx", cache_dir=tmp_path)


def test_a_checkpoint_of_another_kind_is_refused_before_any_export(tmp_path):
    with pytest.raises(S.SpanReaderUnavailable, match="not a kgqa-span-reader"):
        S.load_span_reader(RANKER, backend="onnx", cache_dir=tmp_path)
    assert not list(tmp_path.rglob("*.onnx"))


def test_backend_setting():
    assert B.resolve_reader_backend("torch") == "torch"
    assert B.resolve_reader_backend("auto", device="cuda") == "torch"
    assert B.resolve_reader_backend("auto") == "onnx"                    # onnxruntime is part of `make setup`
    with pytest.raises(InvalidInput, match="KGQA_READER_BACKEND 'tensorrt'"):
        B.resolve_reader_backend("tensorrt")


CHAIN = REPO / "data" / "demo" / "paths" / "chain-reader.safetensors"


class _Catalogue:
    """The relation catalogue the shipped demo chain reader was trained on (what KG.relations() gives)."""

    def __init__(self):
        from kgqa.models.heads.chain_reader import read_meta

        self.names = {f"P{k}": n for k, n in enumerate(read_meta(CHAIN)["relations"])}

    def relations(self):
        return {rid: (name, None) for rid, name in self.names.items()}

    def relation_aliases(self):
        return {}


def test_onnx_chain_reader_scores_as_torch(tmp_path):
    """VisPath's and GraSP's bi-encoder chain reader on onnxruntime: torch's scores (it runs in fp32 on both)."""
    from kgqa.models.heads.chain_reader import load_chain_reader

    kg = _Catalogue()
    by_name = {n: r for r, n in kg.names.items()}
    chains = [[by_name["architect"]], [by_name["architect"], by_name["place of birth"]],
              [by_name["architect"], by_name["place of birth"], by_name["country"]]]
    q = "Where was the architect of the building shown here born?"
    a = load_chain_reader(CHAIN, kg).score(q, chains)
    onnx = load_chain_reader(CHAIN, kg, backend="onnx", cache_dir=tmp_path)
    assert onnx.runtime == "onnx" and onnx.arch == "bi"
    b = onnx.score(q, chains)
    assert np.allclose(a, b, atol=1e-3) and int(np.argmax(b)) == 1


def test_one_bf16_probe_answers_for_the_encoder_and_the_heads(monkeypatch):
    """The heads' torch runtime asks the runtime's one probe (the span reader once imported a probe that did not
    exist, and a bare except hid it): it answers a bool without raising, the encoder asks the same one, and an
    explicit setting overrides it."""
    from kgqa.models import encoder

    native = B.native_bf16()
    assert isinstance(native, bool) and B.use_bf16() is native
    assert encoder.native_bf16 is B.native_bf16
    for cpu in (True, False):
        monkeypatch.setattr(B, "native_bf16", lambda: cpu)
        assert B.use_bf16() is cpu and B.use_bf16(not cpu) is (not cpu)


def _kgqa_imports():
    """(module file, line, module, name) of every ``from kgqa... import name`` in the package, at any depth."""
    import ast

    src = REPO / "src" / "kgqa"
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("kgqa"):
                for alias in node.names:
                    yield path.relative_to(src), node.lineno, node.module, alias.name


def test_every_name_imported_from_kgqa_exists():
    """An import inside a function fails only when it runs, and a broad except can hide it for good."""
    import importlib

    missing = []
    for where, line, module, name in _kgqa_imports():
        mod = importlib.import_module(module)
        if not hasattr(mod, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"{where}:{line}: {module}.{name}")
    assert not missing, missing
