"""Every model call counted, and an opt-in replay cache.

``Meter`` counts calls, prompt/completion tokens and seconds per role
(``encoder``, ``chat``, ``vision``, ``softprompt``), in total and per question::

    meter = Meter()
    with meter.question("q1"):
        models.chat.generate(...)        # recorded under q1 and in the total
    meter.costs("q1")  # -> {"chat": RoleCost(calls=1, ...)}
    meter.costs()      # -> the total

``ReplayCache`` stores each model reply on disk under a key made of
(backend, model, prompt, image sha256, params), so that an evaluation can be
re-run deterministically without calling the model again. It is off unless a
directory is given (``KGQA_MODEL_CACHE_DIR``).
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator

from kgqa.core.result import RoleCost

ROLES = ("encoder", "chat", "vision", "softprompt")

_QUESTION: contextvars.ContextVar[str | None] = contextvars.ContextVar("kgqa_question", default=None)


class CallRecord:
    """Filled in by a backend while a metered call runs (tokens are known at the end)."""

    __slots__ = ("prompt_tokens", "completion_tokens", "cached")

    def __init__(self) -> None:
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached = False


class Meter:
    """Counts model use per role, per question and in total. Thread-safe.

    Per-question costs are kept for the ``max_questions`` most recent questions only (the pipeline
    reads a question's costs as soon as it is answered), so a long-running ``kgqa serve`` does not
    grow without bound; the totals are kept whole."""

    def __init__(self, max_questions: int = 1024) -> None:
        self.max_questions = max_questions
        self._lock = threading.Lock()
        self._total: dict[str, RoleCost] = {}
        self._questions: dict[str, dict[str, RoleCost]] = {}
        self.cache_hits: dict[str, int] = {}

    # -- recording ------------------------------------------------------------
    @contextmanager
    def question(self, qid: str) -> Iterator[dict[str, RoleCost]]:
        """Attribute the calls made inside the block to question ``qid``.

        Yields the question's live cost dict; entering the same qid again adds to it.
        """
        with self._lock:
            costs = self._questions.pop(qid, None) or {}
            self._questions[qid] = costs                    # most recent last
            while len(self._questions) > self.max_questions:
                self._questions.pop(next(iter(self._questions)))
        token = _QUESTION.set(qid)
        try:
            yield costs
        finally:
            _QUESTION.reset(token)

    @property
    def current_question(self) -> str | None:
        return _QUESTION.get()

    def record(self, role: str, *, prompt_tokens: int = 0, completion_tokens: int = 0,
               seconds: float = 0.0, calls: int = 1, cached: bool = False) -> None:
        qid = _QUESTION.get()
        with self._lock:
            targets = [self._total.setdefault(role, RoleCost())]
            if qid is not None:
                targets.append(self._questions.setdefault(qid, {}).setdefault(role, RoleCost()))
            for c in targets:
                c.calls += calls
                c.prompt_tokens += prompt_tokens
                c.completion_tokens += completion_tokens
                c.seconds += seconds
            if cached:
                self.cache_hits[role] = self.cache_hits.get(role, 0) + calls

    @contextmanager
    def call(self, role: str) -> Iterator[CallRecord]:
        """Time one model call; the backend sets tokens on the yielded record.

        The call is recorded even when it raises (it cost time all the same).
        """
        rec = CallRecord()
        t0 = time.perf_counter()
        try:
            yield rec
        finally:
            self.record(role, prompt_tokens=rec.prompt_tokens, completion_tokens=rec.completion_tokens,
                        seconds=time.perf_counter() - t0, cached=rec.cached)

    # -- reading --------------------------------------------------------------
    def costs(self, qid: str | None = None) -> dict[str, RoleCost]:
        """A copy of the per-role costs of question ``qid``, or of the total when None."""
        with self._lock:
            src = self._total if qid is None else self._questions.get(qid, {})
            return {role: replace(c) for role, c in src.items()}

    def questions(self) -> list[str]:
        with self._lock:
            return list(self._questions)

    def reset(self) -> None:
        with self._lock:
            self._total.clear()
            self._questions.clear()
            self.cache_hits.clear()


class ReplayCache:
    """On-disk model replies keyed by (backend, model, prompt, image sha256, params).

    One JSON file per key under ``<dir>/<key[:2]>/<key>.json``, written atomically.
    Deterministic: the key is a sha256 of canonical JSON (sorted keys).
    """

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)

    @staticmethod
    def key(backend: str, model: str, prompt: Any, image_sha256: str | None = None,
            params: dict | None = None) -> str:
        blob = json.dumps({"backend": backend, "model": model, "prompt": prompt,
                           "image": image_sha256, "params": params or {}},
                          sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        p = self._path(key)
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # a damaged entry is a miss; it is overwritten on the next put

    def put(self, key: str, value: dict) -> None:
        p = self._path(key)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(value, f, ensure_ascii=False, sort_keys=True)
            os.replace(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.dir.glob("*/*.json")) if self.dir.exists() else 0


def replayed_text_call(meter: "Meter", role: str, cache: ReplayCache | None, key_parts: tuple, run) -> str:
    """One metered model call that returns text, through the replay cache when there is one.

    ``key_parts`` are ReplayCache.key's arguments; ``run(rec)`` makes the real call and
    fills ``rec``'s token counts. A hit is recorded as a cached call with its stored tokens.
    """
    key = ReplayCache.key(*key_parts) if cache is not None else None
    if key is not None:
        hit = cache.get(key)
        if hit is not None:
            meter.record(role, prompt_tokens=hit.get("prompt_tokens", 0),
                         completion_tokens=hit.get("completion_tokens", 0), cached=True)
            return hit["text"]
    with meter.call(role) as rec:
        text = run(rec)
    if key is not None:
        cache.put(key, {"text": text, "prompt_tokens": rec.prompt_tokens,
                        "completion_tokens": rec.completion_tokens})
    return text
