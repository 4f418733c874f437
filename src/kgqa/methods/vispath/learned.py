"""VisPath with the learned relation-path retriever (``-o path_scorer=learned``).

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843) scores edges against the hop intent q_i (Eq. 5) and chains against Q ‖ S_Q ‖ q_i
(Eq. 8), both from LLM steps. When no LLM step gives the intent (the graph-only setting), this module
lets a retriever trained by ``kgqa train paths`` (``kgqa.models.heads.path_retriever``; weakly supervised as in
"Subgraph Retrieval Enhanced Model for Multi-hop Knowledge Base Question Answering", Zhang et al., ACL
2022) take the rules' place:

* hop intent: q_i = Q itself (the retriever reads the question; no relation phrases are guessed);
* Eq. 5 relation score of r at hop i: the retriever's score of the chain (relations of the frontier path
  so far) → r, the best over the frontier paths that end where the edge starts;
* Eq. 8 σ of a candidate path: the retriever's score of its whole relation chain;
* terminal selection: endpoints by that σ (chains of different lengths are scored under one question, and
  the retriever was trained to put the gold chain above its own prefix, so depth comes from the score).

With ``-o path_scorer=mixed`` the rules keep every step and the retriever's chain score, weighed by
``learned_weight``, is added to theirs: to Eq. 5's relation score (per frontier path, as above) and to Eq. 8's
σ (so to terminal selection's order by σ, the rules' other keys unchanged).

A missing or unreadable checkpoint is one line (``LearnedPaths.error``); the rules take over and each
question records it as a fallback (code ``checkpoint``).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from kgqa.core.config import own_or_shipped
from kgqa.core.errors import InvalidInput
from kgqa.models.heads.path_retriever import PathRetriever, load_retriever
from kgqa.methods.vispath.records import ReasoningPath

CHECKPOINT_NAME = "path-retriever.safetensors"


def default_checkpoint(settings) -> Path:
    """<data dir>/models/paths/ when `kgqa train paths` wrote one there, else the shipped demo checkpoint."""
    return own_or_shipped(settings, "paths", CHECKPOINT_NAME)


class LearnedPaths:
    """The retriever one VisPath instance uses, loaded on first use (once, under a lock)."""

    def __init__(self, kg, settings, checkpoint: str = ""):
        self.kg = kg
        self.path = Path(checkpoint) if checkpoint else default_checkpoint(settings)
        self.encoder_name = (Path(settings.encoder_model).name if getattr(settings, "encoder_model", None)
                             else "all-MiniLM-L6-v2")
        self._lock = threading.Lock()
        self._loaded = False
        self._retriever: PathRetriever | None = None
        self.error: str | None = None

    def retriever(self) -> PathRetriever | None:
        """The retriever, or None with ``error`` set (one line) when the checkpoint cannot be used."""
        with self._lock:
            if not self._loaded:
                try:
                    self._retriever = load_retriever(self.path, self.kg.embed, self.encoder_name)
                except InvalidInput as e:
                    self.error = str(e)
                except Exception as e:  # noqa: BLE001 - any unreadable checkpoint: one line, the rules take over
                    self.error = f"{self.path}: unusable path-retriever checkpoint ({type(e).__name__})"
                self._loaded = True
        return self._retriever

    # ------------------------------------------------------------------ Eq. 5
    def relation_scores(self, question: str, paths: list[ReasoningPath]) -> dict[str, dict[str, float]]:
        """Frontier entity → relation id → score of (its best path's chain → r), for every relation of the
        catalogue (frontier paths come best first, so the first path to reach an entity is its prefix)."""
        r = self._retriever
        rel = self.kg.relations()
        rids = list(rel)
        out: dict[str, dict[str, float]] = {}
        for p in paths:
            if p.end_id in out:
                continue
            prefix = [e.relation_name for e in p.edges]
            s = r.score(question, [prefix + [rel[rid][0]] for rid in rids])
            out[p.end_id] = dict(zip(rids, (float(x) for x in s)))
        return out

    # ------------------------------------------------------------------ Eq. 8
    def chain_scores(self, question: str, cand: list[ReasoningPath]) -> list[ReasoningPath]:
        """σ = the retriever's score of each path's relation chain; sorted best first (ties: Verbalize(p))."""
        s = self._retriever.score(question, [[e.relation_name for e in p.edges] for p in cand])
        for p, v in zip(cand, np.asarray(s, dtype=np.float64)):
            p.sigma = float(v)
        return sorted(cand, key=lambda p: (-p.sigma, p.verbalize()))

    def add_chain_scores(self, question: str, ranked: list[ReasoningPath], weight: float) -> list[ReasoningPath]:
        """path_scorer=mixed: σ ← the rules' σ + weight · the retriever's score of each path's relation chain;
        sorted best first (ties: Verbalize(p)). weight = 0 leaves the rules' order as it was."""
        if not ranked or weight == 0:
            return ranked
        s = self._retriever.score(question, [[e.relation_name for e in p.edges] for p in ranked])
        for p, v in zip(ranked, np.asarray(s, dtype=np.float64)):
            p.sigma = float(p.sigma if p.sigma is not None else 0.0) + weight * float(v)
        return sorted(ranked, key=lambda p: (-p.sigma, p.verbalize()))


__all__ = ["LearnedPaths", "default_checkpoint", "CHECKPOINT_NAME"]
