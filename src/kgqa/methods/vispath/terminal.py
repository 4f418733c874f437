"""VisPath's terminal selection under the chain reader, with weights learned on the loaded KG (ours).

When no hop is judged answerable, VisPath ranks the retained paths of every hop and answers with the best
one's end entity ("VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question
Answering", arXiv 2609.20843, terminal selection). With the chain reader standing in for the LLM, a path's
score was a fixed sum: the reader's logit + ``reader_rules_weight`` × the rules' Eq. 8 σ + the answer-type
match. How much each part deserves depends on the graph: on a small KG the rules' σ is the better guide, among
200,000 distractors the reader is (docs/benchmarks.md, the chain reader, round 3). So the weights are learned
per KG, from questions generated from that KG's own walks (no evaluation question):

- ``kgqa train terminal`` generates questions (``kgqa.core.walk_questions``), answers each with VisPath (gold
  start, the chain reader), and keeps, per question, every candidate path's features and whether it ends at
  the answer;
- ``fit`` learns one weight per feature by a listwise softmax over each question's candidates (the gold
  endpoints share the target mass), L2-regularised towards the fixed sum, the strength chosen on a held-out
  fifth of the questions (on a tie the strongest, closest to the fixed sum);
- the weights are written beside the reader's checkpoint (``<reader>.terminal.json``) with the reader's
  SHA-256, and used only with that reader (another reader: the fixed sum ranks, one fallback line).

Features of a path (``FEATURES``): the reader's logit / 20, the rules' σ × ``reader_rules_weight`` / 20 (the
fixed sum's two terms on one scale), the answer-type match, the distance (in hops) from the depth range the
question's relation sketch reads, its length (one-hot 1–4, longer paths share the last), and ``kind``.

What kind of answer is asked (``kind``, ours): the reader, which reads a question against relation chains, also
reads it against what kind of thing the path's end is, and that score / 20 is a feature. The kind is the end's
classes in the KG (``instance of``, ``subclass of``) or else its description (``KG.entity_kinds``); for an end
with neither, the relation that reaches it stands in (what that relation leads to). So "Which school did the
engineer who designed this bridge attend?" reads *university* far above *human* (the engineer, one hop short of
the answer), and two ends of one chain, which the reader's chain score cannot tell apart, differ by their kind.
Its weight is fitted with the others on the KG's generated questions, whose answers' kinds come from the KG; the
fixed sum gives it none and uses it only to break a tie (``Scorer.rank_endpoints``). A weights file fitted
before it loads with a zero weight for it.

Ends shared (``ends_split``, ours): the reader scores a relation chain, not an entity, so every entity one chain
reaches from the start gets that chain's score, and a chain that reaches k entities is a k-way guess. The ranking
treats its score as the chain's and shares the chain's probability evenly among its ends: −log k in the units of
the softmax that ranks (the fit's X·w for learned weights; the reader's logits, X·w × ``SCALE``, for the fixed
sum). k counts the distinct end entities of the retained paths with that relation chain. No weight is fitted for
it: the fit learns the other weights with the split in place.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.models.heads.chain_reader import TERMINAL_SCALE, checkpoint_sha256, log_chain_ends, terminal_weights_path

FORMAT = "kgqa-vispath-terminal/1"
FEATURES = ("reader", "rules", "typing", "depth_gap", "len1", "len2", "len3", "len4", "kind")
#: the features of a weights file written before ``kind`` (it loads with a zero weight for ``kind``)
FEATURES_V1 = FEATURES[:8]
SCALE = TERMINAL_SCALE
L2_GRID = (1e-3, 1e-2, 1e-1, 1.0)


def feature_rows(paths, typing: dict[int, float], depth_range: tuple[int, int] | None, rules_weight: float,
                 kind: dict[str, float] | None = None) -> np.ndarray:
    """One row of ``FEATURES`` per path (paths scored by the chain reader: ``reader_score``, ``rules_sigma``;
    ``kind``: end entity id → the reader's score of the question against what kind of thing it is)."""
    lo, hi = depth_range if depth_range else (0, 99)
    rows = []
    for p in paths:
        n = len(p.edges)
        rows.append([(p.reader_score or 0.0) / SCALE, rules_weight * (p.rules_sigma or 0.0) / SCALE,
                     typing.get(id(p), 0.0), float(max(lo - n, n - hi, 0)),
                     float(n == 1), float(n == 2), float(n == 3), float(n >= 4),
                     (kind.get(p.end_id, 0.0) if kind else 0.0) / SCALE])
    return np.asarray(rows, dtype=np.float64).reshape(-1, len(FEATURES))


def chain_ends(paths) -> np.ndarray:
    """log k per path: k = the distinct end entities that the paths with its relation chain reach
    (``chain_reader.log_chain_ends``, which GraSP shares)."""
    return log_chain_ends([tuple(e.relation_id for e in p.edges) for p in paths], [p.end_id for p in paths])


def split_offset(log_ends: np.ndarray, learned: bool) -> np.ndarray:
    """What ``ends_split`` adds to X·w: −log k in the ranking softmax's units (see the module text)."""
    return -log_ends if learned else -log_ends / SCALE


def _offset(group) -> np.ndarray:
    """A group's fixed offset on X·w (its third element: the ends split in the fit's units), else none."""
    return group[2] if len(group) > 2 else np.zeros(len(group[1]))


def fixed_weights(typing_weight: float) -> np.ndarray:
    """The fixed sum (reader + λ·rules + typing_weight·typing) as weights over ``FEATURES``."""
    return np.array([1.0, 1.0, typing_weight / SCALE, 0, 0, 0, 0, 0, 0], dtype=np.float64)


def _train(groups: list[tuple], l2: float, steps: int = 600, lr: float = 0.3) -> np.ndarray:
    """Listwise softmax regression: per group, cross-entropy between softmax(X·w + offset) and the gold rows'
    uniform share; full-batch gradient descent from the fixed sum's weights, L2 towards them (a strong L2 keeps
    the fixed sum)."""
    w0 = fixed_weights(1.0)
    w = w0.copy()
    for _ in range(steps):
        g = l2 * (w - w0)
        for grp in groups:
            X, y = grp[0], grp[1]
            s = X @ w + _offset(grp)
            p = np.exp(s - s.max())
            p /= p.sum()
            g += X.T @ (p - y / y.sum()) / len(groups)
        w = w - lr * g
    return w


def top1(groups: list[tuple], w: np.ndarray, offset_scale: float = 1.0) -> float:
    """Share of groups whose best-scored row (X·w + offset_scale × offset) is gold (groups with no gold row
    count as misses)."""
    return sum(bool(g[1][int(np.argmax(g[0] @ w + offset_scale * _offset(g)))]) for g in groups) / max(len(groups), 1)


def fit(groups: list[tuple], seed: int = 0) -> tuple[np.ndarray, dict]:
    """Weights over ``FEATURES`` from (features, is-gold[, offset]) groups; the L2 strength of ``L2_GRID`` that
    puts the most held-out groups' gold first (a fifth held out, drawn with ``seed``), then refitted on all of
    them. An offset (the ends split, in the fit's units) is added to X·w and not fitted."""
    usable = [g for g in groups if len(g[1]) and g[1].any()]
    if len(usable) < 10:
        raise InvalidInput(f"terminal weights: {len(usable)} generated questions reached their answer; at least "
                           "10 are needed (a bigger --questions, or a KG with longer walks)")
    order = np.random.default_rng(seed).permutation(len(usable))
    k = max(2, len(usable) // 5)
    held, train = [usable[i] for i in order[:k]], [usable[i] for i in order[k:]]
    scores = {l2: top1(held, _train(train, l2)) for l2 in L2_GRID}
    best = max(L2_GRID, key=lambda l2: (scores[l2], l2))
    w = _train(usable, best)
    return w, {"l2": best, "held_out_top1": {str(k): round(v, 4) for k, v in scores.items()},
               "groups": len(usable), "fixed_top1": round(top1(usable, fixed_weights(1.0), 1 / SCALE), 4),
               "learned_top1": round(top1(usable, w), 4)}


sha256 = checkpoint_sha256          # the reader a weights file was fitted for


def terminal_path(reader_checkpoint: Path) -> Path:
    """Where the weights of a reader live: beside its checkpoint (``chain_reader.terminal_weights_path``)."""
    return terminal_weights_path(reader_checkpoint)


@dataclass
class TerminalWeights:
    weights: np.ndarray
    reader_sha256: str
    meta: dict = field(default_factory=dict)

    def save(self, path: Path) -> Path:
        body = {"format": FORMAT, "features": list(FEATURES), "weights": [round(float(x), 6) for x in self.weights],
                "reader_sha256": self.reader_sha256, **self.meta}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        tmp.replace(path)
        return path


def load_weights(path: Path, reader_checkpoint: Path | None) -> TerminalWeights:
    """The weights at ``path``; with ``reader_checkpoint``, only when they were fitted for that reader (else
    InvalidInput, one line)."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise InvalidInput(f"{path}: unreadable terminal weights ({type(e).__name__})") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT or body.get("features") not in (
            list(FEATURES), list(FEATURES_V1)):
        raise InvalidInput(f"{path}: not terminal weights of this kgqa ({FORMAT})")
    w = np.asarray(body.get("weights"), dtype=np.float64)
    if body["features"] == list(FEATURES_V1) and w.shape == (len(FEATURES_V1),):
        w = np.append(w, 0.0)                         # fitted before ``kind``: it does not count
    if w.shape != (len(FEATURES),) or not np.isfinite(w).all():
        raise InvalidInput(f"{path}: weights must be {len(FEATURES)} finite numbers")
    if reader_checkpoint is not None and body.get("reader_sha256") != sha256(reader_checkpoint):
        raise InvalidInput(f"{path}: fitted for another chain reader than {reader_checkpoint}; refit with "
                           "kgqa train terminal")
    return TerminalWeights(w, str(body.get("reader_sha256")), {k: v for k, v in body.items()
                                                                 if k not in ("weights", "features", "format")})


#: ``-o terminal_weights=fixed``: the fixed sum even where weights fitted for the reader exist
FIXED = "fixed"


class TerminalSlot:
    """The weights one VisPath instance uses, loaded on first use: ``explicit`` (-o terminal_weights=P, used as
    given; ``fixed``: none, the fixed sum) or the file beside the reader's checkpoint when it exists and was fitted for that reader. ``get(run)``
    is the weights or None (the fixed sum); an unusable file is one fallback line on the run."""

    def __init__(self, reader_checkpoint: Path, explicit: str = ""):
        self.path = Path(explicit) if explicit else terminal_path(Path(reader_checkpoint))
        self.reader = None if explicit else Path(reader_checkpoint)
        self.explicit = bool(explicit)
        self._done, self._w, self.error = explicit == FIXED, None, None

    def get(self, run) -> np.ndarray | None:
        if not self._done:
            self._done = True
            if self.explicit or self.path.is_file():
                try:
                    self._w = load_weights(self.path, self.reader).weights
                except InvalidInput as e:
                    self.error = str(e)
        if self.error:
            run.fell_back(f"terminal selection: {self.error}; the fixed sum ranks", "checkpoint")
        return self._w


def kind_scores(reader, kg, question: str, paths) -> dict[str, float]:
    """End entity id → the reader's score of ``question`` against what kind of thing that end is: its classes or
    description (``KG.entity_kinds``), else the relation its first path here reaches it by (``kind``, above)."""
    reached_by: dict[str, str] = {}
    for p in paths:
        reached_by.setdefault(p.end_id, p.edges[-1].relation_id)
    if not reached_by:
        return {}
    text = kg.kind_texts(reached_by)
    s = reader.score_texts(question, [text[e] for e in reached_by], kept=True)      # the graph's texts: kept
    return {e: float(v) for e, v in zip(reached_by, s)}


def collect(vispath, questions, on_question=None) -> list[tuple]:
    """(features, is-gold, offset) of the terminal candidates of each question (gold start, the chain reader
    scoring): ``questions`` are (question, topic id, answer id); the offset is the ends split in the fit's units
    when VisPath's ``ends_split`` is on, else 0."""
    groups = []
    for k, (q, topic, answer) in enumerate(questions, 1):
        run = vispath.run(q, entity_id=topic)
        cand = run.terminal_candidates
        if cand is not None:
            X, ends, log_ends = cand
            off = split_offset(log_ends, True) if vispath.opt.ends_split else np.zeros(len(ends))
            groups.append((X, np.array([e == answer for e in ends], dtype=np.float64), off))
        if on_question:
            on_question(k, len(questions))
    return groups


__all__ = ["FEATURES", "feature_rows", "kind_scores", "chain_ends", "split_offset", "fixed_weights", "fit", "top1", "collect", "load_weights",
           "TerminalWeights", "TerminalSlot", "terminal_path", "sha256"]
