"""GraSP's optimisation (Section 4.4): training examples, their subgraphs, the ``kgqa train grasp`` run.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting"
trains the GAT and its projector on question/answer pairs with the soft-prompt LLM frozen:
the loss is the LLM's cross-entropy on the gold answer given the soft prompt and LLM_select's
prompt. The examples come from a JSONL file (the ``kgqa eval`` format) or are verbalised from
paths of the loaded KG; each is extracted exactly as inference extracts (``GraSP.extract``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgqa.methods.grasp.algorithm import GraSP
from kgqa.methods.grasp.options import GraSPOptions, default_checkpoint
from kgqa.methods.grasp.questions import generate_questions
from kgqa.methods.grasp.subgraph import PATH_FEATURES, graph_tensors, triple_texts
from kgqa.core.errors import InvalidInput
from kgqa.core.qa_examples import TrainingExample, read_examples, topics_of


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
                inputs = graph_tensors(method, sub, q_vec, with_paths=method.variant == "nodes")  # new_encoder's
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
        return GraphNodeScorer(384, 384, hidden_channels=128, num_layers=hops, heads=4, hop_features=4,
                               path_features=PATH_FEATURES)
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
                with_generated: bool = False, examples: int = 64, exclude: Path | None = None, epochs: int = 3,
                lr: float = 2e-4, seed: int = 0,
                checkpoint: Path | None = None, resume: bool = False, plot: Path | None = None,
                on_prepare=None, on_step=None, on_epoch=None, on_ready=None) -> dict:
    """``kgqa train grasp``: examples → subgraphs → train the encoder (the LLM frozen, or the nodes head
    with no LLM) → checkpoint + loss PNG. ``variant`` "nodes" is the node-scoring head. Examples: the QA
    pairs of ``data``, else (or also, with ``with_generated``) ``examples`` questions generated from the KG."""
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
    raw: list[TrainingExample] = []
    hows: list[str] = []
    if data is not None:
        raw = read_examples(Path(data))
        hows.append(f"{len(raw)} read from {data}")
    if data is None or with_generated:
        excl = topics_of(Path(exclude)) if exclude else set()
        gen = generate_questions(method.graph, method.kg, examples, seed, excl, max_hops=opt.hops)
        raw += gen
        hows.append(f"{len(gen)} generated from the loaded KG: 1-{min(3, opt.hops)} hop walks verbalised with "
                    f"relation labels and aliases in varied templates, seed {seed}"
                    + (f", topics disjoint from {exclude}" if exclude else ""))
    how = " + ".join(hows)
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


__all__ = ["TrainingExample", "read_examples", "topics_of", "generate_questions", "Prepared", "prepare_examples",
           "new_encoder", "soft_prompt_loss", "train_grasp"]
