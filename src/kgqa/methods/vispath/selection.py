"""Terminal selection by a learned ranker over the retained paths (``-o selector=learned``; ours).

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843) leaves terminal selection to the LLM: with no hop judged answerable, the endpoints of
the retained paths are ranked and the top ones verified against the image. Graph-only (no LLM step gives
the sketch), the rules rank by the chain score σ, answer typing weighed in (``Scorer.rank_endpoints``). The
miss they leave most often at scale is "retained but not selected": the gold path is among the retained
paths and an extension of it by one more edge, whose relation matches some leftover phrase of the
question, outranks it ("the highest point in the country where this mountain is *located*" → country →
highest point → *location*).

This module scores each retained path by a linear function of a few features that are question-relative
and name no word, relation or entity (``FEATURES``), learned from question/answer pairs: for each question,
a softmax over its retained paths, the paths whose endpoint is the answer the positives (a listwise
ranking loss, L2-regularised; ``fit``). What it can learn is how much each signal the rules already
compute should weigh against the others (coverage against length, the order in which the question names
the hops, typing), not which words matter.

Weights are a small JSON file (``Selector.save``/``load_selector``): feature names, standardisation and
weights, and what they were trained on. A missing or unreadable file is one line (``InvalidInput``); the
method then keeps the rules' order and records the fallback (code ``checkpoint``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.core.question import greedy_relation_matches, mention_tokens
from kgqa.methods.vispath.records import ReasoningPath, RelationSketch

#: the features of one retained path, in the order of a weight file's ``weights``
FEATURES = (
    "sigma",            # the chain score σ the path was retained with (coverage: Eq. 8's graph-only reading)
    "edges",            # its length
    "paired_share",     # share of its edges paired one to one with a question phrase at ≥ sketch_min_cos
    "last_sim",         # cos(relation, phrase) of the last edge's pair (0 unpaired)
    "min_sim",          # the weakest edge's pair cosine (0 when an edge has no pair)
    "typing",           # answer typing's score (Scorer.path_typing)
    "reverse_reading",  # share of consecutive paired edges whose phrases come in reverse question order
    "mention_order",    # share of consecutive paired edges whose phrase lies farther from the topic mention
    "uncovered",        # relation phrases of the question's sketch that no edge of the path pairs with
    "depth_over",       # edges beyond the sketch's depth range (lo, hi)
    "depth_under",      # edges short of it
    "extends",          # 1 when the path without its last edge is itself retained (an extension by one edge)
    "gain",             # σ gained by that last edge over the retained prefix (σ itself when there is none)
)

#: the weight file shipped with kgqa (trained by bench/selector.py; what on is in its ``trained_on``)
SHIPPED = Path(__file__).with_name("selector.json")


def _share(values: list[int]) -> float:
    """Share of consecutive pairs (a, b) with b > a; 0.5 with fewer than two values."""
    if len(values) < 2:
        return 0.5
    return sum(b > a for a, b in zip(values, values[1:])) / (len(values) - 1)


class QuestionView:
    """What the features need of one question, computed once: its phrase positions, the topic mention's
    tokens and the phrases the non-LLM sketch matched."""

    def __init__(self, question: str, has_image: bool, rs: RelationSketch, min_cos: float, limit: int):
        self.rs = rs
        self.min_cos = min_cos
        excluded, _ = mention_tokens(question, has_image)
        self.mention = sorted(excluded)
        picked = (greedy_relation_matches(rs.phrases, rs.sims, min_cos, limit)
                  if rs.sims is not None and rs.phrases else [])
        self.sketch_spans = [set(range(rs.phrases[a][0], rs.phrases[a][1])) for a, _, _ in picked]

    def distance(self, phrase: int) -> int:
        """Tokens between a phrase and the nearest token of the topic mention (0 with no mention)."""
        if not self.mention:
            return 0
        a, b, _ = self.rs.phrases[phrase]
        return min(min(abs(m - a), abs(m - (b - 1))) for m in self.mention)

    def features(self, path: ReasoningPath, typing: float, prefix_sigma: float | None = None) -> list[float]:
        """``FEATURES`` of one path; ``prefix_sigma``: σ of the retained path it extends by its last edge."""
        rs = self.rs
        n = len(path.edges)
        pairs = [(k, a, s) for k, a, s in rs.pairs(path) if s >= self.min_cos] if rs.sims is not None else []
        by_edge = {k: (a, s) for k, a, s in pairs}
        sims = [by_edge[k][1] if k in by_edge else 0.0 for k in range(n)]
        ordered = [by_edge[k][0] for k in range(n) if k in by_edge]
        positions = [rs.phrases[a][0] for a in ordered]
        used = set().union(*(set(range(rs.phrases[a][0], rs.phrases[a][1])) for a in ordered)) if ordered else set()
        lo, hi = rs.depth if rs.depth else (n, n)
        return [
            float(path.sigma if path.sigma is not None else 0.0),
            float(n),
            len(pairs) / max(1, n),
            sims[-1] if sims else 0.0,
            min(sims) if sims else 0.0,
            float(typing),
            1.0 - _share(positions) if len(positions) >= 2 else 0.5,
            _share([self.distance(a) for a in ordered]),
            float(sum(1 for span in self.sketch_spans if not span & used)),
            float(max(0, n - hi)),
            float(max(0, lo - n)),
            float(prefix_sigma is not None),
            float((path.sigma or 0.0) - (prefix_sigma if prefix_sigma is not None else 0.0)),
        ]


@dataclass
class Selector:
    """A linear ranker: score = Σ w_j · (f_j − mean_j) / scale_j over ``FEATURES``."""

    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    meta: dict = field(default_factory=dict)

    def scores(self, X: np.ndarray) -> np.ndarray:
        return ((np.asarray(X, dtype=np.float64) - self.mean) / self.scale) @ self.weights

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"features": list(FEATURES), "weights": self.weights.round(6).tolist(),
                                    "mean": self.mean.round(6).tolist(), "scale": self.scale.round(6).tolist(),
                                    **self.meta}, indent=2) + "\n", encoding="utf-8")


def load_selector(path: Path) -> Selector:
    """A weight file, checked: one line (``InvalidInput``) naming the file and what is wrong."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no selector weights (bench/selector.py fit writes them)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidInput(f"{path}: unreadable selector weights ({type(e).__name__})") from None
    if not isinstance(d, dict) or d.get("features") != list(FEATURES):
        raise InvalidInput(f"{path}: selector weights for other features (expected {', '.join(FEATURES)})")
    try:
        w, m, s = (np.asarray(d[k], dtype=np.float64) for k in ("weights", "mean", "scale"))
    except (KeyError, TypeError, ValueError):
        raise InvalidInput(f"{path}: selector weights need numeric 'weights', 'mean' and 'scale'") from None
    if not (w.shape == m.shape == s.shape == (len(FEATURES),)) or not np.all(np.isfinite(w)) or np.any(s <= 0):
        raise InvalidInput(f"{path}: selector weights of the wrong shape or not finite")
    return Selector(w, m, s, {k: v for k, v in d.items() if k not in ("features", "weights", "mean", "scale")})


def fit(groups: list[tuple[np.ndarray, np.ndarray]], *, l2: float = 0.01, steps: int = 3000,
        lr: float = 0.1) -> Selector:
    """Listwise ranking: per question (X: its retained paths' features, y: 1 where the endpoint is the
    answer), maximise log Σ_pos softmax(X·w); groups without a positive or without a negative teach
    nothing and are skipped. Features standardised over every path; plain gradient descent (the loss is
    convex), deterministic."""
    groups = [(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=bool)) for X, y in groups]
    groups = [(X, y) for X, y in groups if y.any() and not y.all()]
    if not groups:
        raise ValueError("no question has both a right and a wrong retained endpoint: nothing to learn")
    allx = np.concatenate([X for X, _ in groups])
    mean = allx.mean(axis=0)
    scale = allx.std(axis=0)
    scale[scale < 1e-9] = 1.0
    # padded to (questions, most paths, features) so that each step is a few array operations
    width = max(len(y) for _, y in groups)
    Z = np.zeros((len(groups), width, len(FEATURES)))
    pos = np.zeros((len(groups), width), dtype=bool)
    real = np.zeros((len(groups), width), dtype=bool)
    for i, (X, y) in enumerate(groups):
        Z[i, :len(y)] = (X - mean) / scale
        pos[i, :len(y)] = y
        real[i, :len(y)] = True
    w = np.zeros(len(FEATURES))
    for _ in range(steps):
        s = np.where(real, Z @ w, -np.inf)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        q = np.where(pos, p, 0.0)
        q /= q.sum(axis=1, keepdims=True)
        w -= lr * (l2 * w + np.einsum("qp,qpf->f", p - q, Z) / len(groups))
    return Selector(w, mean, scale)


def loss(sel: Selector, groups: list[tuple[np.ndarray, np.ndarray]]) -> float:
    """Mean −log Σ_pos softmax over the groups with a positive (what ``fit`` minimises, without L2)."""
    out = []
    for X, y in groups:
        y = np.asarray(y, dtype=bool)
        if not y.any():
            continue
        s = sel.scores(X)
        out.append(np.log(np.exp(s - s.max()).sum()) + s.max() - np.log(np.exp(s[y] - s.max()).sum()) - s.max())
    return float(np.mean(out)) if out else float("nan")
