"""Weak supervision for the relation-path retriever: relation chains found by bounded search in the graph.

As in "Subgraph Retrieval Enhanced Model for Multi-hop Knowledge Base Question Answering" (Zhang et al.,
ACL 2022), a question/answer pair gives no path; the shortest relation chains from the topic entity to
the answer, found by breadth-first search over the loaded graph, are its labels, and the other chains of
the same neighbourhood its negatives. ``train_path_retriever`` is the whole ``kgqa train paths --kind
retriever`` run: examples (generated from the KG and/or read from a file), search, encode, train the head of
``kgqa.models.heads.path_retriever`` (``kgqa.training.path_retriever``).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.core.report import Report
from kgqa.core.qa_examples import TrainingExample, generate_examples, read_examples, topics_of
from kgqa.models.heads.path_retriever import chain_text
from kgqa.training.path_retriever import RetrieverExample, train_head

#: bounds of the search (per hop: facts read per entity, entities kept per chain, chains kept, entities whose
#: facts are read: on a graph of hubs the last hops would otherwise read tens of thousands of facts per topic)
PER_ENTITY = 200
ENTITIES_PER_CHAIN = 50
MAX_CHAINS = 300
FRONTIER = 500


def _norm(s: str | None) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", (s or "").lower()))


@dataclass
class Neighbourhood:
    """Relation chains from one topic entity: chain (relation ids) → the entities it reaches (bounded)."""
    chains: dict[tuple[str, ...], dict[str, str]] = field(default_factory=dict)   # chain → {entity id: name}


def expanded(level: dict[tuple[str, ...], dict[str, str]], keep: frozenset[str] = frozenset(),
             limit: int = FRONTIER) -> list[str]:
    """The entities of one level whose facts are read next: all of them up to ``limit``; beyond it, those in
    ``keep`` and then each chain's entities in turn (its first, then its second, ...), so that every chain
    still grows and none takes the whole budget."""
    ids = list(dict.fromkeys(e for ents in level.values() for e in ents))
    if len(ids) <= limit:
        return ids
    chosen = dict.fromkeys(e for e in ids if e in keep)
    columns = [list(ents) for ents in level.values()]
    for k in range(max(map(len, columns))):
        for col in columns:
            if len(chosen) >= limit:
                return list(chosen)
            if k < len(col):
                chosen.setdefault(col[k])
    return list(chosen)


def search_chains(graph, topic: str, relation_ids: list[str], depth: int,
                  keep: frozenset[str] = frozenset()) -> Neighbourhood:
    """Breadth-first over outgoing facts: every distinct relation chain of length ≤ ``depth`` from ``topic``
    (at most ``MAX_CHAINS`` per length, ``ENTITIES_PER_CHAIN`` entities each, ``PER_ENTITY`` facts read per
    entity, the facts of at most ``FRONTIER`` entities read per length: see ``expanded``); the entities of
    ``keep`` (a generated question's walk) are kept and searched from beyond those bounds; a chain does not
    return to the topic."""
    out = Neighbourhood()
    level: dict[tuple[str, ...], dict[str, str]] = {(): {topic: topic}}
    for _ in range(depth):
        ids = expanded(level, keep)
        if not ids:
            break
        rows = graph.read("grasp_training_facts", ids=ids, relation_ids=relation_ids, per_entity=PER_ENTITY)
        by_head: dict[str, list[dict]] = {}
        for r in rows:
            by_head.setdefault(r["head_id"], []).append(r)
        nxt: dict[tuple[str, ...], dict[str, str]] = {}
        for chain, ents in level.items():
            for e in ents:
                for r in by_head.get(e, []):
                    if r["tail_id"] == topic:
                        continue
                    c = chain + (r["relation_id"],)
                    if c not in nxt and len(nxt) >= MAX_CHAINS:
                        continue
                    tails = nxt.setdefault(c, {})
                    if len(tails) < ENTITIES_PER_CHAIN or r["tail_id"] in keep:
                        tails[r["tail_id"]] = r["tail_name"] or r["tail_id"]
        out.chains.update(nxt)
        level = nxt
    return out


def gold_chains(nb: Neighbourhood, ex: TrainingExample) -> list[tuple[str, ...]]:
    """The shortest chains reaching the answer: by ``answer_id`` when given, else by name (the answer or
    one of its aliases, compared lower-cased on letters and digits)."""
    names = {_norm(ex.answer)} | {_norm(a) for a in getattr(ex, "aliases", ()) or ()}
    names.discard("")
    hits = [c for c, ents in nb.chains.items()
            if (ex.answer_id in ents if ex.answer_id else any(_norm(n) in names for n in ents.values()))]
    if not hits:
        return []
    shortest = min(len(c) for c in hits)
    return [c for c in hits if len(c) == shortest]


@dataclass
class PreparedSet:
    questions: list[str]
    chain_texts: list[str]
    items: list[RetrieverExample]
    dropped: int                       # examples whose answer no chain reached


def prepare(graph, kg, examples: list[TrainingExample], depth: int = 3,
            on_item: Callable[[], None] | None = None) -> PreparedSet:
    """Search each example's neighbourhood, label its chains and index the texts to encode."""
    rel = kg.relations()
    rel_ids = list(rel)
    names = {rid: name for rid, (name, _) in rel.items()}
    chain_row: dict[str, int] = {}
    questions: list[str] = []
    items: list[RetrieverExample] = []
    dropped = 0
    cache: dict[str, Neighbourhood] = {}
    for ex in examples:
        nb = cache.get(ex.topic_id)
        if nb is None:
            nb = cache[ex.topic_id] = search_chains(graph, ex.topic_id, rel_ids, depth)
        gold = gold_chains(nb, ex)
        if on_item:
            on_item()
        if not gold or len(nb.chains) < 2:
            dropped += 1
            continue
        rows, lengths = [], []
        for c in nb.chains:
            rows.append(chain_row.setdefault(chain_text([names.get(r, r) for r in c]), len(chain_row)))
            lengths.append(len(c))
        row_of = dict(zip(nb.chains, rows))
        prefixes: dict[int, set[int]] = {}
        for g in gold:
            for t in range(1, len(g)):
                if g[:t] in row_of:
                    prefixes.setdefault(t, set()).add(row_of[g[:t]])
        items.append(RetrieverExample(len(questions), rows, lengths, {row_of[g] for g in gold}, prefixes))
        questions.append(ex.question)
    return PreparedSet(questions, list(chain_row), items, dropped)


class PathRetrieverReport(Report):
    """``train_path_retriever``'s report: examples, how, used, dropped_no_path, chains, epochs, resumed_from_epoch,
    epoch_losses, seconds, examples_per_s, checkpoint, bytes; ``depth`` and ``threads`` are the run's."""

    depth = 3
    threads = 1

    def lines(self) -> list[str]:
        sec = self["seconds"]
        out = [f"examples: {self['examples']} ({self['how']}); {self['used']} used, {self['dropped_no_path']} "
               f"dropped (no chain of ≤ {self.depth} relations reaches the answer); {self['chains']} distinct "
               "relation chains"]
        if self["resumed_from_epoch"]:
            out.append(f"resumed after epoch {self['resumed_from_epoch']}")
        return out + [
            "loss per epoch: " + ", ".join(f"{v:.4f}" for v in self["epoch_losses"]),
            f"seconds: search {sec['search']}, encode {sec['encode']}, train {sec['train']}, total {sec['total']} · "
            f"{self['examples_per_s']} examples/s in training · torch threads {self.threads}",
            f"checkpoint: {self['checkpoint']} ({self['bytes'] / 1e6:.2f} MB)"]


def train_path_retriever(graph, kg, *, checkpoint: Path, data: Path | None = None, examples: int = 400,
                         generated: bool = True, exclude: Path | None = None, depth: int = 3, epochs: int = 10,
                         lr: float = 1e-3, batch: int = 16, seed: int = 0, resume: bool = False,
                         encoder_name: str = "", on_epoch: Callable[[int, float], None] | None = None,
                         on_item: Callable[[], None] | None = None, prior: float = 0.0,
                         threads: int = 1, say: Callable[[str], None] | None = None) -> PathRetrieverReport:
    """The ``kgqa train paths --kind retriever`` run; returns its report (counts, seconds per phase, examples/s,
    losses). ``say``: each epoch's mean loss."""
    if say and on_epoch is None:
        def on_epoch(epoch: int, mean: float) -> None:
            say(f"epoch {epoch + 1}/{epochs}: mean loss {mean:.4f}")
    t0 = time.perf_counter()
    raw: list[TrainingExample] = []
    how = []
    if data is not None:
        raw += read_examples(Path(data))
        how.append(f"{len(raw)} from {Path(data).name}")
    if generated and examples > 0:
        excl = topics_of(Path(exclude)) if exclude else set()
        gen = generate_examples(graph, kg, examples, seed, excl, aliases=True)
        raw += gen
        how.append(f"{len(gen)} generated from the KG")
    if not raw:
        raise InvalidInput("kgqa train paths: no training examples (is a KG loaded?)")
    prep = prepare(graph, kg, raw, depth=depth, on_item=on_item)
    if not prep.items:
        raise InvalidInput(f"kgqa train paths: for none of the {len(raw)} examples did a chain of ≤ {depth} "
                           "relations from the topic reach the answer")
    t_search = time.perf_counter() - t0
    t1 = time.perf_counter()
    q_vecs = kg.embed(prep.questions)
    c_vecs = kg.embed(prep.chain_texts)
    t_encode = time.perf_counter() - t1
    meta = {"encoder": encoder_name, "depth": depth, "examples": len(prep.items), "how": "; ".join(how)}
    res = train_head(np.asarray(q_vecs), np.asarray(c_vecs), prep.items, checkpoint=checkpoint, epochs=epochs,
                     lr=lr, batch=batch, seed=seed, resume=resume, meta=meta, on_epoch=on_epoch,
                     prior=prior)
    total = time.perf_counter() - t0
    rep = PathRetrieverReport({
            "examples": len(raw), "how": "; ".join(how), "used": len(prep.items), "dropped_no_path": prep.dropped,
            "chains": len(prep.chain_texts), "epochs": epochs, "resumed_from_epoch": res.resumed_from,
            "epoch_losses": res.epoch_losses, "seconds": {"search": round(t_search, 2), "encode": round(t_encode, 2),
                                                          "train": round(res.seconds, 2), "total": round(total, 2)},
            "examples_per_s": round(len(prep.items) * max(1, epochs - res.resumed_from) / max(res.seconds, 1e-9), 1),
            "checkpoint": str(checkpoint), "bytes": Path(checkpoint).stat().st_size})
    rep.depth, rep.threads = depth, threads
    return rep


__all__ = ["search_chains", "expanded", "gold_chains", "prepare", "train_path_retriever", "PathRetrieverReport", "Neighbourhood",
           "PreparedSet"]
