"""GraSP's optimisation (Section 4.4): training examples, their subgraphs, the ``kgqa train grasp`` run.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting"
trains the GAT and its projector on question/answer pairs with the soft-prompt LLM frozen:
the loss is the LLM's cross-entropy on the gold answer given the soft prompt and LLM_select's
prompt. The examples come from a JSONL file (the ``kgqa eval`` format) or are verbalised from
paths of the loaded KG; each is extracted exactly as inference extracts (``GraSP.extract``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from kgqa.methods.grasp.algorithm import GraSP
from kgqa.methods.grasp.options import GraSPOptions, default_checkpoint
from kgqa.methods.grasp.subgraph import graph_tensors, triple_texts
from kgqa.core.errors import InvalidInput
from kgqa.core.qa_examples import TrainingExample, UniqueOutFacts, read_examples, topics_of


def generate_examples(method: GraSP, n: int, seed: int, exclude_topics: set[str]) -> list[TrainingExample]:
    """Questions verbalised from paths of the loaded KG (Section 4.4 trains on question/answer pairs).

    How they are made: topic entities are drawn (seeded shuffle of the entities with outgoing
    facts, minus ``exclude_topics``, e.g. the eval set's topics); from each, a random walk of 1 or 2
    outgoing facts whose (head, relation) has exactly one tail, so the answer is unique; the path is
    verbalised with the relation names: "What is the {r1} of {topic}?" or "What is the {r2} of the
    {r1} of {topic}?" (a few phrasings, the topic sometimes only "this" as in an image question);
    the answer is the walk's last entity. The topics are passed over again (new walks, new
    phrasings) until ``n`` distinct questions are made or a pass adds none.
    """
    rng = random.Random(seed)
    rel_ids = list(method.kg.relations())
    names = method.relation_names()
    ids = [r["id"] for r in method.graph.read("grasp_training_topics", relation_ids=rel_ids, limit=200_000)]
    ids = [i for i in ids if i not in exclude_topics]
    rng.shuffle(ids)
    unique_out = UniqueOutFacts(method.graph, rel_ids)

    out: list[TrainingExample] = []
    seen: set[tuple[str, str]] = set()
    for _ in range(max(1, 4 * n // max(len(ids), 1) + 2) if ids else 0):
        before = len(out)
        _one_pass(ids, n, rng, names, unique_out, out, seen)
        if len(out) >= n or len(out) == before:
            break
    return out


_ONE = ("What is the {r1} of {t}?", "Which {r1} does {t} have?", "{t}: what is its {r1}?",
        "What is the {r1} of this {k}?")
_TWO = ("What is the {r2} of the {r1} of {t}?", "Which {r2} has the {r1} of {t}?",
        "What is the {r2} of the {r1} of this {k}?")
_KINDS = ("entity", "place", "person", "thing", "object")


def _one_pass(ids, n, rng, names, unique_out, out, seen) -> None:
    for tid in ids:
        if len(out) >= n:
            break
        walk = unique_out.walk(tid, rng)
        if not walk:
            continue
        f1 = walk[0]
        topic = f1["head_name"] or tid
        r1 = names.get(f1["relation_id"], f1["relation_id"])
        r2 = names.get(walk[-1]["relation_id"], walk[-1]["relation_id"])
        form = rng.choice(_ONE if len(walk) == 1 else _TWO)
        q = form.format(r1=r1, r2=r2, t=topic, k=rng.choice(_KINDS))
        if (tid, q) in seen:
            continue
        seen.add((tid, q))
        last = walk[-1]
        src = "generated: " + " ".join([tid] + [f"-{f['relation_id']}-> {f['tail_id']}" for f in walk])
        out.append(TrainingExample(q, tid, last["tail_name"] or last["tail_id"], last["tail_id"], src))


@dataclass
class Prepared:
    example: TrainingExample
    prompt: str
    inputs: tuple          # graph_tensors(...) for gat and nodes; (triple embeddings,) for text
    nodes: int
    target: int = -1       # nodes head: the gold node's index in the subgraph


def prepare_examples(method: GraSP, examples: list[TrainingExample], on_item=None) -> tuple[list[Prepared], int]:
    """Extract each example's subgraph as inference would; keep those whose answer is a node of it.

    Returns (prepared, dropped): an answer the subgraph does not hold cannot be selected, so
    training on it would teach the small LLM to name entities it was not shown.
    """
    import torch

    prepared: list[Prepared] = []
    dropped = 0
    q_vecs = method.kg.embed([ex.question for ex in examples]) if examples else []
    for ex, q_vec in zip(examples, q_vecs):
        row = method.kg.entity(ex.topic_id)
        if row is None:
            raise InvalidInput(f"{ex.source}: topic {ex.topic_id} is not in the graph")
        sub = method.extract(ex.topic_id, row["name"] or ex.topic_id, q_vec, [])
        low = ex.answer.strip().lower()
        hit = (ex.answer_id in sub.names and ex.answer_id != ex.topic_id) if ex.answer_id else any(
            nm.strip().lower() == low for n, nm in sub.names.items() if n != ex.topic_id)
        if not sub.facts or not hit:
            dropped += 1
        else:
            if method.variant == "text":
                inputs = (torch.from_numpy(method.kg.embed(triple_texts(sub, method.relation_names()))),)
            else:
                inputs = graph_tensors(method, sub, q_vec)
            gold = ex.answer_id if ex.answer_id in sub.names else next(
                n for n, nm in sub.names.items() if n != ex.topic_id and nm.strip().lower() == low)
            target = sub.names[gold]
            prompt = "" if method.variant == "nodes" else method.select_prompt(ex.question, sub)
            prepared.append(Prepared(TrainingExample(ex.question, ex.topic_id, target, gold, ex.source),
                                     prompt, inputs, len(sub.names), sub.node_ids.index(gold)))
        if on_item:
            on_item()
    return prepared, dropped


def new_encoder(variant: str, llm_hidden: int, hops: int, seed: int):
    """A freshly initialised encoder: the GAT has one layer per hop (Section 4.2: an l-layer GNN)."""
    import torch

    from kgqa.gnn.encoder import GraphNodeScorer, GraphSoftPromptEncoder, TextSoftPromptEncoder

    torch.manual_seed(seed)
    if variant == "nodes":
        return GraphNodeScorer(384, 384, hidden_channels=128, num_layers=hops, heads=4)
    if variant == "text":
        return TextSoftPromptEncoder(384, llm_hidden)
    return GraphSoftPromptEncoder(384, 384, llm_hidden, hidden_channels=128, num_layers=hops, heads=4)


def soft_prompt_loss(softprompt):
    """Section 4.4's objective: the frozen small LLM's cross-entropy on the gold answer tokens,
    given the soft prompt and LLM_select's prompt; gradients reach only the encoder."""
    if not hasattr(softprompt, "loss"):
        raise InvalidInput("kgqa train grasp needs KGQA_SOFTPROMPT_BACKEND=local (gradients flow only "
                           "through the in-process model)")

    def fn(encoder, p: Prepared):
        return softprompt.loss(encoder(*p.inputs), p.prompt, p.example.answer)

    return fn


def train_grasp(ctx, *, options: GraSPOptions | None = None, variant: str = "gat", data: Path | None = None,
                examples: int = 64, exclude: Path | None = None, epochs: int = 3, lr: float = 2e-4, seed: int = 0,
                checkpoint: Path | None = None, resume: bool = False, plot: Path | None = None,
                on_prepare=None, on_step=None, on_epoch=None, on_ready=None) -> dict:
    """``kgqa train grasp``: examples → subgraphs → train the encoder (the LLM frozen, or the nodes head
    with no LLM) → checkpoint + loss PNG. ``variant`` "nodes" is the node-scoring head."""
    import time

    from kgqa.gnn.train import TrainConfig, plot_losses, train
    from kgqa.methods.grasp.nodes import kg_fingerprint, node_loss

    if variant not in ("gat", "text", "nodes"):
        raise InvalidInput(f"--variant {variant!r}: choose gat (GraSP) or text (the text soft-prompt ablation)")
    opt = (options or GraSPOptions()).model_copy(update={"text_soft_prompt": variant == "text", "no_soft_prompt": False,
                                                         "triples_only": False,
                                                         "head": "nodes" if variant == "nodes" else "softprompt"})
    method = GraSP(ctx, opt, for_training=True)
    checkpoint = Path(checkpoint) if checkpoint else default_checkpoint(ctx.settings, variant)
    if variant == "nodes":
        def loss_fn(encoder, p: Prepared):
            return node_loss(encoder, p.inputs, p.target)
    else:
        loss_fn = soft_prompt_loss(method.softprompt)
    t_start = time.perf_counter()
    if data is not None:
        raw = read_examples(Path(data))
        how = f"read from {data}"
    else:
        excl = topics_of(Path(exclude)) if exclude else set()
        raw = generate_examples(method, examples, seed, excl)
        how = (f"generated from the loaded KG: 1-2 hop paths verbalised with relation names, seed {seed}"
               + (f", topics disjoint from {exclude}" if exclude else ""))
    if not raw:
        raise InvalidInput("kgqa train grasp: no training examples (is a KG loaded?)")
    t_gen = time.perf_counter() - t_start
    prepared, dropped = prepare_examples(method, raw, on_item=on_prepare)
    t_prep = time.perf_counter() - t_start - t_gen
    if not prepared:
        raise InvalidInput(f"kgqa train grasp: none of the {len(raw)} examples has its answer in its extracted "
                           "subgraph (raise cap/k1/k2?)")
    llm_hidden = 1 if variant == "nodes" else int(method.softprompt.hidden_size)
    encoder = new_encoder(variant, llm_hidden, opt.hops, seed)
    cfg = TrainConfig(epochs=epochs, lr=lr, seed=seed, save_every=500 if variant == "nodes" else 25)
    meta = {"extraction": {k: getattr(opt, k) for k in ("k1", "k2", "hops", "cap", "scan_cap")},
            "examples_how": how, "softprompt_model": "" if variant == "nodes" else getattr(method.softprompt, "name", ""),
            "kg_fingerprint": kg_fingerprint(method.kg.relations()), "kg_relations": len(method.kg.relations()),
            "kg_catalogue": {rid: v[0] for rid, v in sorted(method.kg.relations().items())}}
    import torch

    t_train0 = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, int(ctx.settings.torch_threads)))     # KGQA_TORCH_THREADS, as the encoders
    try:
        report = train(encoder, prepared, loss_fn, variant=variant, checkpoint=checkpoint, config=cfg,
                       resume=resume, meta=meta, on_step=on_step, on_epoch=on_epoch,
                       on_start=(lambda r: on_ready(len(prepared), r)) if on_ready else None)
    finally:
        torch.set_num_threads(threads)
    t_train = time.perf_counter() - t_train0
    png = plot_losses(report.step_losses, report.epoch_losses,
                      Path(plot) if plot else checkpoint.with_suffix(".loss.png"),
                      title=f"GraSP {variant} encoder: loss per step ({len(prepared)} examples, lr {lr}, seed {seed})")
    return {"checkpoint": str(checkpoint), "plot": str(png), "variant": variant, "examples": len(raw),
            "used": len(prepared), "dropped_answer_not_in_subgraph": dropped, "how": how,
            "epochs": report.epochs_done, "steps": report.steps, "epoch_losses": report.epoch_losses,
            "resumed_from": report.resumed_from, "bytes": checkpoint.stat().st_size,
            "parameters": sum(p.numel() for p in report.encoder.parameters()),
            "seconds": {"generate": round(t_gen, 2), "prepare": round(t_prep, 2), "train": round(t_train, 2)},
            "kg_fingerprint": meta["kg_fingerprint"]}


__all__ = ["TrainingExample", "read_examples", "topics_of", "generate_examples", "Prepared", "prepare_examples",
           "new_encoder", "soft_prompt_loss", "train_grasp"]
