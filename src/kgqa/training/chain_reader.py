"""Training the chain reader (``kgqa train paths``): questions with their gold relation chain against the
confusions that cost answers.

Examples come from two sources:

* generated from the loaded KG (``kgqa.core.walk_questions``): walks of 1–4 single-tail facts phrased many
  ways; the walk's relation chain is the gold chain;
* question/answer pairs from a file (``--data``, the ``kgqa eval`` format): only the answer is used; the
  gold chains are the shortest relation chains from the topic that reach it, found by bounded search
  (``kgqa.training.path_supervision``), as weak supervision in "Subgraph Retrieval Enhanced Model for
  Multi-hop Knowledge Base Question Answering" (Zhang et al., ACL 2022).

Per question, the pairs (question, chain) and their labels:

    gold chain                                              1
    each proper prefix of it (an answer one hop short)      PREFIX_LABEL (a step on the way, not the answer)
    one-edge extensions (real ones from the graph; else a relation of the catalogue appended)   0
    siblings: the same prefix, another relation at the last hop; another relation at one hop    0
    reversed direction: a relation replaced by the one the graph uses back from its tail        0
    another chain of the topic's neighbourhood, any length                                      0

Chains that reach the answer some other way are left out (they are not wrong). The loss is listwise
cross-entropy over each question's candidates, the gold chain against its own confusions (``bi``: over scaled
cosines; ``cross``: over the pair logits, as the passage ranker), so every other pair, prefixes included,
is ranked below the gold chain (the labels only decide which pairs count as negatives); AdamW with linear
warm-up and decay; the word embeddings stay frozen.
A share of the questions is held out and the report says how often their gold chain outscores every other
candidate.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from kgqa.core.errors import InvalidInput
from kgqa.core.qa_examples import TrainingExample, read_examples, topics_of
from kgqa.core.walk_questions import WalkWeights, generate_walk_questions
from kgqa.core.report import Report
from kgqa.models.heads.chain_reader import (CHECKPOINT_NAME, ChainReader, catalogue_fingerprint, chain_text,
                                            new_bi_encoder, new_cross_encoder, reader_model, save_chain_reader,
                                            terminal_weights_path)
from kgqa.models.plot import plot_losses
from kgqa.training.heldout import reads_worse, rejected_path
from kgqa.training.path_supervision import gold_chains, search_chains
from kgqa.training.walk_prior import relation_counts
from kgqa.training.schedule import warmup_decay

PREFIX_LABEL = 0.2
HELD_OUT = 0.05


@dataclass
class LabelledQuestion:
    question: str
    gold: tuple[str, ...]
    pairs: list[tuple[tuple[str, ...], float]] = field(default_factory=list)    # (chain, label)


def _reachers(nb, answer_id: str | None) -> set[tuple[str, ...]]:
    return {c for c, ents in nb.chains.items() if answer_id and answer_id in ents}


def label_question(question: str, gold: tuple[str, ...], nb, also_gold: set[tuple[str, ...]],
                   rel_ids: list[str], inverse: dict[str, list[str]], rng: random.Random,
                   negatives: int = 6) -> LabelledQuestion:
    """The labelled pairs of one question (see the module text); ``nb``: its topic's neighbourhood,
    ``also_gold``: chains that reach the answer too (left out)."""
    lq = LabelledQuestion(question, gold, [(gold, 1.0)])
    taken = {gold} | set(also_gold)

    def add(c: tuple[str, ...], label: float = 0.0) -> bool:
        if c and c not in taken:
            taken.add(c)
            lq.pairs.append((c, label))
            return True
        return False

    L = len(gold)
    for k in range(1, L):
        add(gold[:k], PREFIX_LABEL)
    chains = list(nb.chains)
    rng.shuffle(chains)
    neg: list[tuple[str, ...]] = []
    ext = [c for c in chains if len(c) == L + 1 and c[:L] == gold][:2]
    if not ext:
        ext = [gold + (rng.choice(rel_ids),)]
    neg += ext
    neg += [c for c in chains if len(c) == L and c[:-1] == gold[:-1]][:2]                    # last-hop siblings
    neg += [c for c in chains if len(c) == L and c[:-1] != gold[:-1]][:1]                    # other same-length
    pos = rng.randrange(L)
    neg.append(gold[:pos] + (rng.choice(rel_ids),) + gold[pos + 1:])                          # any-hop sibling
    inv = [(i, r) for i, r in enumerate(gold) if inverse.get(r)]
    if inv:
        i, r = rng.choice(inv)
        neg.append(gold[:i] + (rng.choice(inverse[r]),) + gold[i + 1:])                       # reversed
    neg += [c for c in chains if len(c) != L][:2]                                            # other lengths
    for c in neg:
        if sum(1 for _, lab in lq.pairs if lab == 0.0) >= negatives:
            break
        add(c)
    return lq


def _question_batches(items: list, batch: int, seed: int) -> list[list[int]]:
    """Shuffled batches of ``batch // 4`` questions (each brings its own ~8 candidate chains)."""
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    per = max(1, batch // 4)                     # = train_chain_reader's per_step
    return [order[i:i + per] for i in range(0, len(order), per)]


def _inverse_relations(graph, facts: list[dict], rel_ids: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for i in range(0, len(facts), 2000):
        for r in graph.read("paths_inverse_relations", facts=facts[i:i + 2000], relation_ids=rel_ids):
            out.setdefault(r["relation_id"], [])
            if r["inverse_id"] not in out[r["relation_id"]]:
                out[r["relation_id"]].append(r["inverse_id"])
    return out


def prepare(graph, kg, *, data: Path | None, examples: int, exclude: list[Path], depth: int, seed: int,
            on_item: Callable[[], None] | None = None,
            weights: WalkWeights | None = None) -> tuple[list[LabelledQuestion], dict]:
    """The labelled questions (generated and/or read) and what they were made of; ``weights``: how the walks
    are drawn (``kgqa.training.walk_prior``; None: uniformly)."""
    rel = kg.relations()
    rel_ids = list(rel)
    rng = random.Random(seed + 104729)
    excl: set[str] = set()
    for p in exclude:
        excl |= topics_of(Path(p))
    gen = generate_walk_questions(graph, kg, examples, seed, excl, max_hops=depth, weights=weights) \
        if examples > 0 else []
    file_ex: list[TrainingExample] = read_examples(Path(data)) if data is not None else []
    if not gen and not file_ex:
        raise InvalidInput("kgqa train paths: no training examples (is a KG loaded?)")
    facts = [{"head": ids[k], "relation": rid, "tail": ids[k + 1]}
             for g in gen for ids in [(g.example.topic_id,) + g.entities] for k, rid in enumerate(g.relations)]
    inverse = _inverse_relations(graph, facts, rel_ids) if facts else {}
    cache: dict[tuple, object] = {}

    def nb_of(topic: str, walk: tuple[str, ...] = ()):      # the walk's entities are always searched from
        key = (topic, walk)
        if key not in cache:
            cache[key] = search_chains(graph, topic, rel_ids, depth, keep=frozenset(walk))
        return cache[key]

    out: list[LabelledQuestion] = []
    dropped = 0
    for g in gen:
        nb = nb_of(g.example.topic_id, g.entities)
        out.append(label_question(g.example.question, g.relations, nb,
                                  _reachers(nb, g.example.answer_id) - {g.relations}, rel_ids, inverse, rng))
        if on_item:
            on_item()
    for ex in file_ex:
        nb = nb_of(ex.topic_id)
        golds = gold_chains(nb, ex)
        if on_item:
            on_item()
        if not golds:
            dropped += 1
            continue
        others = set(golds[1:]) | (_reachers(nb, ex.answer_id) if ex.answer_id else set())
        out.append(label_question(ex.question, golds[0], nb, others - {golds[0]}, rel_ids, inverse, rng))
    info = {"generated": len(gen), "from_file": len(file_ex), "file_dropped_no_path": dropped,
            "hops": {h: sum(1 for q in out if len(q.gold) == h) for h in range(1, depth + 1)},
            "inverse_relations": sum(len(v) for v in inverse.values()), "walks": "weighted" if weights else "uniform"}
    return out, info


class ChainReaderReport(Report):
    """``train_chain_reader``'s report: the walks' counts (generated, from_file, file_dropped_no_path, hops,
    inverse_relations), how they were drawn (walks: weighted or uniform), init (the checkpoint training started from, or None: the base model), arch,
    questions, train_questions, pairs, epochs, epoch_losses, step_losses (not in
    ``--json``), held_out, seconds, pairs_per_s, threads, checkpoint, bytes, terminal_weights_removed (when it
    removed the previous reader's), plot; with ``--check``: check (questions, by_hops, seconds, old and new rows:
    checkpoint, em, hops), and kept + target (the new reader read worse and was not installed) or kept_new."""

    hidden = ("step_losses",)
    named = False            # the checkpoint was named (the "next" line names it too)

    def lines(self) -> list[str]:
        sec, ho = self["seconds"], self["held_out"]
        out = [f"questions: {self['questions']} ({self['generated']} generated, {self['from_file']} from the file, "
               f"{self['file_dropped_no_path']} of those dropped: no chain reaches the answer); by hops "
               + ", ".join(f"{h}: {n}" for h, n in self["hops"].items()),
               f"walks: {self['walks']}" + (" (toward the relations and hubs the start reader was trained on)"
                                            if self['walks'] == "weighted" else "")
               + f" · started from {self.get('init') or 'all-MiniLM-L6-v2 (untrained)'}",
               f"pairs: {self['pairs']} ({self['arch']}) · {self['epochs']} epoch(s) · loss per epoch "
               + ", ".join(f"{v:.4f}" for v in self["epoch_losses"]),
               f"time: prepare {sec['prepare']} s, train {sec['train']} s ({self['pairs_per_s']} pairs/s), total "
               f"{sec['total']} s · torch threads {self['threads']}"]
        if ho["questions"]:
            out.append(f"held out: the gold chain outscores every other candidate for {ho['gold_first']} of "
                       f"{ho['questions']} questions ({100 * ho['rate']:.1f} %)")
        out += self.check_lines()
        if self.get("kept"):
            ck = self["checkpoint"]
            return out + [
                f"kept the previous reader {self['kept']}: the new one reads worse on this KG's held-out-template "
                f"questions (EM {self['check']['new']['em']:.1f} against {self['check']['old']['em']:.1f}); it is "
                f"written to {ck}, not installed (to install it anyway: rerun with --keep-new, or move it to "
                f"{self.get('target', 'the checkpoint')} and run kgqa train terminal)",
                f"loss curve: {self['plot']}"]
        return out + [
            f"checkpoint: {self['checkpoint']} ({self['bytes'] / 1e6:.1f} MB)"
            + (" · installed although it reads worse on the check (--keep-new)" if self.get("kept_new") else ""),
            f"loss curve: {self['plot']}",
            "next: kgqa train terminal" + (f" --reader {self['checkpoint']}" if self.named else "")
            + " learns VisPath's terminal selection for this reader (a few minutes on a small KG)"
            + (f"; removed {self['terminal_weights_removed']}, fitted for the previous reader"
               if self.get("terminal_weights_removed") else "")]

    def check_lines(self) -> list[str]:
        """The held-out-template check's rows, the reader replaced and the new one side by side."""
        ck = self.get("check")
        if not ck:
            return []
        if not ck["questions"]:
            return ["check: no held-out-template question could be drawn from this KG (walks of 2–4 facts): the "
                    "new reader is installed unmeasured"]
        hops = sorted(ck["by_hops"])
        out = [f"check: {ck['questions']} held-out-template questions of this KG ("
               + ", ".join(f"{h}-hop {ck['by_hops'][h]}" for h in hops) + "; gold start, graph-only, terminal "
               f"selection by the fixed sum, {ck['seconds']} s)",
               f"  {'reader':8s} {'EM':>6s} " + " ".join(f"{h}-hop".rjust(6) for h in hops) + "  checkpoint"]
        for name, row in (("before", ck.get("old")), ("new", ck["new"])):
            if row:
                out.append(f"  {name:8s} {row['em']:6.1f} " + " ".join(f"{row['hops'][h]:6.1f}" for h in hops)
                           + f"  {row['checkpoint']}")
        if not ck.get("old"):
            out.append("  (no reader before this one fits this KG: nothing to compare with)")
        return out


def train_chain_reader(graph, kg, *, checkpoint: Path | None = None, models_dir: str | Path | None = None,
                       data: Path | None = None, examples: int = 2000, exclude: list[Path] | None = None,
                       depth: int = 4, epochs: int = 2, lr: float = 8e-5, batch: int = 32, max_length: int = 80,
                       seed: int = 0, threads: int | None = None, arch: str = "bi", scale: float = 20.0,
                       plot: Path | None = None, say: Callable[[str], None] | None = None,
                       on_step: Callable[[int, int, float], None] | None = None,
                       on_item: Callable[[], None] | None = None,
                       check: Callable[[Path, Path | None], dict] | None = None, replaces: Path | None = None,
                       keep_new: bool = False, init: Path | None = None,
                       weights: WalkWeights | None = None) -> ChainReaderReport:
    """The ``kgqa train paths`` run: prepare, fine-tune, save (``checkpoint``, else ``models_dir``/paths/), remove
    VisPath's terminal weights fitted for the previous reader there, draw the loss curve (``plot``, else beside
    the checkpoint); returns its report (counts, seconds, pairs/s, losses, held-out gold-first rate). ``say``:
    a line per 50 steps.

    ``check(new, old)``: the held-out-template rows of the new checkpoint and of ``replaces`` (the reader VisPath
    loaded before this run; None: none fits), ``{"new": {"em": ...}, "old": ... | None, ...}``. With both, the
    new reader is written to a candidate file first and installed only when it does not read worse than the old
    one (``kgqa.training.heldout.reads_worse``) or ``keep_new``; else it goes to ``rejected_path(checkpoint)``
    and the installed files stay as they were.

    ``init``: a chain-reader checkpoint to start from (its arch; None: the untrained base model); ``weights``: how
    the generated walks are drawn (``kgqa.training.walk_prior.walk_weights``; None: uniformly)."""
    named = checkpoint is not None
    checkpoint = Path(checkpoint) if named else Path(models_dir or ".") / "paths" / CHECKPOINT_NAME
    guarded = check is not None and replaces is not None
    write_to = checkpoint.with_name(checkpoint.stem + ".candidate" + checkpoint.suffix) if guarded else checkpoint
    window: list[float] = []
    if say:
        say(f"preparing: {examples} generated questions (walks of 1–{depth} facts)" + (f" + {data}" if data else "")
            + f" · torch threads {threads}")
    t_steps = time.perf_counter()

    def step_done(step: int, total: int, loss: float) -> None:
        window.append(loss)
        if say and (step % 50 == 0 or step == total):
            say(f"step {step}/{total}: mean loss {sum(window) / len(window):.4f} (last {len(window)} steps) · "
                f"{time.perf_counter() - t_steps:.0f} s")
            window.clear()
        if on_step:
            on_step(step, total, loss)

    rep = _fine_tune(graph, kg, checkpoint=write_to, data=data, examples=examples, exclude=exclude, depth=depth,
                     epochs=epochs, lr=lr, batch=batch, max_length=max_length, seed=seed, threads=threads,
                     arch=arch, scale=scale, on_step=step_done, on_item=on_item, init=init, weights=weights)
    installed = _checked(rep, check, write_to, checkpoint, replaces, keep_new, say)
    stale = terminal_weights_path(checkpoint)
    if installed and stale.is_file():
        stale.unlink()
        rep["terminal_weights_removed"] = str(stale)
    png = Path(plot) if plot else Path(rep["checkpoint"]).with_suffix(".loss.png")
    plot_losses(rep["step_losses"], rep["epoch_losses"], png, title="chain reader training loss")
    rep["plot"] = str(png)
    rep.named = named
    return rep


def _checked(rep: ChainReaderReport, check, written: Path, checkpoint: Path, replaces: Path | None,
             keep_new: bool, say: Callable[[str], None] | None) -> bool:
    """The held-out-template check of a new reader (see ``train_chain_reader``): its rows in ``rep["check"]``,
    the candidate moved where it belongs; whether it was installed at ``checkpoint``."""
    if check is None:
        return True
    if say:
        say("checking: the new reader" + (f" and {replaces}" if replaces else "")
            + " on held-out-template questions of this KG")
    try:
        rep["check"] = check(written, replaces)
    except BaseException:                 # the check failed: the old reader stays, the new one is set aside
        if written != checkpoint:
            written.replace(rejected_path(checkpoint))
        raise
    if written == checkpoint:
        return True
    worse = reads_worse(rep["check"]["new"], rep["check"]["old"])
    dest = rejected_path(checkpoint) if worse and not keep_new else checkpoint
    written.replace(dest)
    rep["checkpoint"] = rep["check"]["new"]["checkpoint"] = str(dest)
    if dest != checkpoint:
        rep["kept"], rep["target"] = str(replaces), str(checkpoint)
    elif worse:
        rep["kept_new"] = True
    return dest == checkpoint


def _fine_tune(graph, kg, *, checkpoint: Path, data: Path | None, examples: int, exclude: list[Path] | None,
               depth: int, epochs: int, lr: float, batch: int, max_length: int, seed: int, threads: int | None,
               arch: str, scale: float, on_step: Callable[[int, int, float], None],
               on_item: Callable[[], None] | None, init: Path | None = None,
               weights: WalkWeights | None = None) -> ChainReaderReport:
    """Prepare, fine-tune, save: the report without the loss curve."""
    import torch

    if threads:
        torch.set_num_threads(threads)
    t0 = time.perf_counter()
    items, info = prepare(graph, kg, data=data, examples=examples, exclude=list(exclude or []), depth=depth,
                          seed=seed, on_item=on_item, weights=weights)
    if not items:
        raise InvalidInput(f"kgqa train paths: for none of the examples did a chain of ≤ {depth} relations "
                           "from the topic reach the answer")
    rng = random.Random(seed)
    rng.shuffle(items)
    n_val = int(len(items) * HELD_OUT) if len(items) >= 40 else 0
    val, train = items[:n_val], items[n_val:]
    rel = kg.relations()
    names = {rid: name for rid, (name, _) in rel.items()}
    aliases = kg.relation_aliases()

    def text(c: tuple[str, ...]) -> str:
        return chain_text(c, names, aliases)

    n_pairs = sum(len(q.pairs) for q in train)
    t_prep = time.perf_counter() - t0

    if init is not None:                  # the given reader's weights, its arch and scale
        ce, init_meta = reader_model(Path(init))
        arch, scale = init_meta.get("arch", "cross"), float(init_meta.get("scale", scale))
        torch.manual_seed(seed)
    elif arch == "bi":
        ce = new_bi_encoder(seed)
    else:
        ce = new_cross_encoder(max_length, seed)
    if arch == "bi":
        ce.max_seq_length = max_length
    model = ce if arch == "bi" else ce.model
    tok = ce.tokenizer
    for name, p in model.named_parameters():
        p.requires_grad = ".embeddings." not in name
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    per_step = max(1, batch // 4)                                     # questions per step
    steps_total = epochs * math.ceil(len(train) / per_step)
    warm = max(1, steps_total // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_decay(s, steps_total, warm))
    step_losses: list[float] = []
    epoch_losses: list[float] = []
    t1 = time.perf_counter()
    model.train()
    step = 0
    for ep in range(epochs):
        tot = 0.0
        batches = _question_batches(train, batch, seed + ep)
        for idx in batches:
            # listwise: each question's logits over its own candidates, the gold chain (first) as the target
            qs = [train[j] for j in idx]
            if arch == "bi":       # scaled cosines of the question's vector to its chains' vectors
                texts = list(dict.fromkeys([q.question for q in qs] + [text(c) for q in qs for c, _ in q.pairs]))
                row = {t: k for k, t in enumerate(texts)}
                feats = (getattr(ce, "preprocess", None) or ce.tokenize)(texts)
                emb = torch.nn.functional.normalize(model(feats)["sentence_embedding"], dim=-1)
                per_q = [scale * (emb[torch.tensor([row[text(c)] for c, _ in q.pairs])] @ emb[row[q.question]])
                         for q in qs]
            else:                  # one logit per (question, chain) pair
                enc = tok([q.question for q in qs for _ in q.pairs], [text(c) for q in qs for c, _ in q.pairs],
                          padding=True, truncation=True, max_length=max_length, return_tensors="pt")
                per_q = model(**enc).logits.squeeze(-1).split([len(q.pairs) for q in qs])
            loss = torch.stack([torch.nn.functional.cross_entropy(lg.unsqueeze(0), torch.tensor([0]))
                                for lg in per_q]).mean()
            n = len(qs)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            step_losses.append(float(loss.detach()))
            tot += float(loss.detach()) * n
            on_step(step, steps_total, step_losses[-1])
        epoch_losses.append(tot / len(train))
    t_train = time.perf_counter() - t1
    model.eval()
    first = 0
    if val:
        reader = ChainReader(ce, {"arch": arch, "scale": scale}, names, aliases)
        for q in val:
            s = reader.score_texts(q.question, [text(c) for c, _ in q.pairs])
            first += int(int(np.argmax(s)) == 0 and (len(s) == 1 or s[0] > np.sort(s)[-2]))
    meta = {"base": "all-MiniLM-L6-v2", "arch": arch, "scale": scale, "max_length": max_length, "relations": sorted(set(names.values())),
            "catalogue": catalogue_fingerprint(list(names.values())), "depth": depth,
            "init": str(init) if init else None,
            "relation_counts": relation_counts([q.gold for q in train], names),
            "trained_on": {**info, "data": str(data) if data else None,
                           "exclude": [str(p) for p in exclude or []]},
            "questions": len(train), "pairs": n_pairs, "epochs": epochs, "lr": lr, "batch": batch,
            "seed": seed, "epoch_losses": epoch_losses,
            "held_out": {"questions": len(val), "gold_first": first}}
    save_chain_reader(ce, checkpoint, meta)
    total = time.perf_counter() - t0
    return ChainReaderReport({**info, "init": str(init) if init else None, "arch": arch, "questions": len(items),
                              "train_questions": len(train),
                              "pairs": n_pairs,
            "epochs": epochs, "epoch_losses": epoch_losses, "step_losses": step_losses,
            "held_out": {"questions": len(val), "gold_first": first,
                         "rate": round(first / len(val), 4) if val else None},
            "seconds": {"prepare": round(t_prep, 1), "train": round(t_train, 1), "total": round(total, 1)},
            "pairs_per_s": round(n_pairs * epochs / max(t_train, 1e-9), 1),
            "threads": torch.get_num_threads(), "checkpoint": str(checkpoint),
            "bytes": Path(checkpoint).stat().st_size})


__all__ = ["train_chain_reader", "ChainReaderReport", "prepare", "label_question", "LabelledQuestion", "PREFIX_LABEL"]
