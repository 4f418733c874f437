"""``kgqa train``: the arguments of each model's training entry point, which returns a report that prints itself
(``kgqa.core.report.Report``; ``--json`` the same way for every command). The chain reader and the path
retriever (``kgqa train paths``), the span reader (``reader``) and the passage ranker (``ranker``) are trained by
``kgqa.training``; a method's own subcommands (GraSP's ``grasp``, VisPath's ``terminal``, or a plugin's) come
from ``kgqa.methods.registry.train_commands`` (``common.TrainGroup``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kgqa.app.cli.common import train_app, train_command
from kgqa.core.report import Report, TrainSession


def train_paths(
    session: TrainSession,
    data: Optional[Path] = typer.Option(None, "--data", help="Question/answer pairs (JSON lines, the kgqa eval "
                                        "format: question, answer, aliases, topic.id); only the answer is used, the "
                                        "relation chains to it are searched in the graph."),
    kind: str = typer.Option("reader", "--kind", help="reader (the chain reader: all-MiniLM-L6-v2 fine-tuned to score "
                             "(question, relation chain), see --arch; VisPath's and GraSP's default when it exists) or retriever (the "
                             "older bi-encoder head, VisPath's -o path_scorer=learned|mixed)."),
    arch: str = typer.Option("bi", "--arch", help="reader: bi (question and chain encoded apart, compared by "
                             "cosine; chains cached across questions) or cross (one pass over the pair)."),
    examples: Optional[int] = typer.Option(None, "--examples", min=0, help="How many questions to generate from "
                                           "the KG (reader: 2000, walks of 1–4 facts phrased many ways; retriever: "
                                           "400); 0 with --data: the file only."),
    exclude: Optional[list[Path]] = typer.Option(None, "--exclude", help="A question file whose topic entities "
                                                 "generated questions must not use (e.g. the eval set); repeatable."),
    depth: Optional[int] = typer.Option(None, "--depth", min=1, max=4, help="Longest relation chain (reader: 4, "
                                        "retriever: 3)."),
    epochs: Optional[int] = typer.Option(None, "--epochs", min=1, help="Epochs (reader: 2, retriever: 10)."),
    lr: Optional[float] = typer.Option(None, "--lr", help="AdamW learning rate (reader: 8e-5, retriever: 1e-3)."),
    prior: float = typer.Option(0.0, "--prior", min=0.0, help="retriever: weight of the head's squared norm in "
                                "the loss (keeps it near the untrained encoder's cosine; 0: none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generated questions, the initial weights and the order."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Checkpoint file (safetensors). Default: "
                                              "<data dir>/models/paths/chain-reader.safetensors (reader) or "
                                              "path-retriever.safetensors, what VisPath and GraSP load first."),
    resume: bool = typer.Option(False, "--resume", help="retriever: continue after the checkpoint's last epoch."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="reader: loss curve PNG (default: beside the "
                                        "checkpoint)."),
    check: int = typer.Option(36, "--check", min=0, help="reader: afterwards, answer this many held-out-template "
                              "questions of the loaded KG (phrasings and walks training never draws; VisPath, gold "
                              "start, graph-only) with the new reader and the one it replaces (the checkpoint's "
                              "file, else the one VisPath loads when it fits the KG); when the new one reads worse "
                              "(lower EM) it is written beside the checkpoint as *.rejected.safetensors and the old "
                              "one stays. 0: no check."),
    keep_new: bool = typer.Option(False, "--keep-new", "--force", help="reader: install the new reader even when "
                                  "the check finds it reads worse."),
    init: Optional[str] = typer.Option(None, "--init", help="reader: start from this chain-reader checkpoint, or "
                                       "'base' (the untrained all-MiniLM-L6-v2). Default: the reader this run "
                                       "replaces (see --check) when it fits the loaded KG, else base."),
    walks: str = typer.Option("weighted", "--walks", help="reader: weighted (topics drawn by how many facts point "
                              "at them and how asked their relations are, each step by its relation; 'asked' = "
                              "the relations the --init reader was trained on) or uniform (every topic and fact "
                              "alike)."),
) -> Report:
    """Train the chain reader (default) or the relation-path retriever on the loaded KG; loss per step window,
    examples/s, the held-out gold-first rate."""
    from kgqa.core.errors import InvalidInput

    s = session.settings
    if kind not in ("reader", "retriever"):
        raise InvalidInput(f"--kind {kind!r}: choose reader or retriever")
    excl = list(exclude or [])
    if kind == "reader":
        if arch not in ("bi", "cross"):
            raise InvalidInput(f"--arch {arch!r}: choose bi or cross")
        if walks not in ("weighted", "uniform"):
            raise InvalidInput(f"--walks {walks!r}: choose weighted or uniform")
        from kgqa.app.eval.reader_check import reader_check
        from kgqa.core.qa_examples import topics_of
        from kgqa.models.heads.chain_reader import read_meta
        from kgqa.training.chain_reader import train_chain_reader
        from kgqa.training.walk_prior import walk_weights

        examples = 2000 if examples is None else examples
        with session.context() as ctx:
            replaces = replaced_reader(s, ctx.kg, checkpoint)
            start = None if init == "base" else Path(init) if init else replaces
            if start is not None and not start.is_file():
                raise InvalidInput(f"--init {start}: no such checkpoint")
            weights = walk_weights(ctx.graph, ctx.kg, read_meta(start) if start else None) \
                if walks == "weighted" else None
            test = None
            if check:
                excl_topics: set[str] = set()
                for f in excl:
                    excl_topics |= topics_of(f)
                test = reader_check(s, ctx, n=check, exclude=excl_topics, train_examples=examples, train_seed=seed,
                                    depth=depth or 4, train_weights=weights)
            return train_chain_reader(ctx.graph, ctx.kg, checkpoint=checkpoint, models_dir=s.models_dir, data=data,
                                      examples=examples, exclude=excl, depth=depth or 4, epochs=epochs or 2,
                                      lr=lr or 8e-5, seed=seed, threads=s.torch_threads, arch=arch, plot=plot,
                                      say=session.say, check=test, replaces=replaces if check else None,
                                      keep_new=keep_new, init=start, weights=weights)
    from kgqa.training.path_supervision import train_path_retriever

    if len(excl) > 1:
        raise InvalidInput("--kind retriever takes one --exclude file")
    examples = 400 if examples is None else examples
    with session.context() as ctx:
        return train_path_retriever(
            ctx.graph, ctx.kg, checkpoint=checkpoint or Path(s.models_dir) / "paths" / "path-retriever.safetensors",
            data=data, examples=examples, generated=examples > 0, exclude=excl[0] if excl else None,
            depth=depth or 3, epochs=epochs or 10, lr=lr or 1e-3, seed=seed, resume=resume, prior=prior,
            encoder_name=Path(s.encoder_model).name if s.encoder_model else "all-MiniLM-L6-v2",
            threads=s.torch_threads, say=session.say)


def replaced_reader(settings, kg, checkpoint: Optional[Path]) -> Optional[Path]:
    """The chain reader a ``kgqa train paths`` run would replace: the file at ``checkpoint`` when there is one;
    without ``checkpoint``, the one VisPath loads (<data dir>/models/paths/, else the shipped one); None when
    there is none or it does not fit the loaded KG (VisPath would not use it)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.models.heads.chain_reader import check_catalogue, default_chain_reader_checkpoint, read_meta

    path = Path(checkpoint) if checkpoint else default_chain_reader_checkpoint(settings)
    if not path.is_file():
        return None
    try:
        check_catalogue(path, read_meta(path), {rid: name for rid, (name, _) in kg.relations().items()})
    except (InvalidInput, OSError, ValueError):      # not a reader, unreadable, another KG: VisPath would not use it
        return None
    return path


def train_reader(
    session: TrainSession,
    data: list[Path] = typer.Option(..., "--data", help="SQuAD v1.1-format file(s) (.json or .json.gz) to train "
                                    "on, e.g. ../shared/datasets/squad/train-sample-44.json.gz; never an "
                                    "evaluation set."),
    holdout: int = typer.Option(4, "--holdout", min=0, help="Whole articles held out of training, where the "
                                "abstention threshold is chosen (and held-out EM/F1 reported)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Train on the first N questions of the "
                                        "shuffled training articles only (a quick run)."),
    generated: int = typer.Option(0, "--generated", min=0, help="Also train on up to N reading questions "
                                  "generated from the loaded graph (WikiReading-style: a fact whose object is named "
                                  "in its subject's description or linked document chunks); a tenth of their "
                                  "subjects is held out and read after training."),
    exclude: Optional[list[Path]] = typer.Option(None, "--exclude", help="With --generated: a question file whose "
                                                 "topic entities and supporting documents the generated "
                                                 "questions must not use (e.g. an eval set); repeatable."),
    epochs: int = typer.Option(2, "--epochs", min=1, help="Epochs over the training windows."),
    steps: Optional[int] = typer.Option(None, "--steps", min=1, help="Train exactly this many steps (overrides "
                                        "--epochs; the learning rate decays to 0 at the last): runs on different "
                                        "data at equal compute."),
    batch_size: int = typer.Option(16, "--batch-size", min=1, help="Windows per step."),
    lr: float = typer.Option(1e-4, "--lr", help="AdamW peak learning rate (linear warm-up over 10 %, then decay)."),
    max_length: int = typer.Option(384, "--max-length", min=64, max=512, help="Tokens per window."),
    doc_stride: int = typer.Option(128, "--doc-stride", min=16, help="Passage tokens shared by two windows."),
    max_answer_tokens: int = typer.Option(30, "--max-answer-tokens", min=1, help="Longest answer span trained on "
                                          "(reading caps it at 20 tokens, kgqa.models.heads.span_reader.ANSWER_CAP)."),
    negatives: float = typer.Option(0.1, "--negatives", min=0.0, max=1.0, help="Share of questions also paired "
                                    "with another paragraph of their article (target: no answer)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the held-out split (unless --split-seed), the order and "
                          "the head's weights."),
    split_seed: Optional[int] = typer.Option(None, "--split-seed", help="Seed of the held-out split alone "
                                             "(default: --seed): readers trained with other seeds on the same "
                                             "split compare on the same held-out articles."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Stop training after this many seconds."),
    attention_dropout: float = typer.Option(0.0, "--attention-dropout", min=0.0, max=0.9, help="Dropout on the "
                                            "attention probabilities (the base model's 0.1 costs a quarter of "
                                            "each step on a CPU)."),
    hidden_dropout: float = typer.Option(0.1, "--hidden-dropout", min=0.0, max=0.9, help="Dropout elsewhere."),
    eval_every: int = typer.Option(0, "--eval-every", min=0, help="Also print held-out EM/F1 every N steps (it "
                                   "is printed at each epoch's end)."),
    shared_norm: int = typer.Option(0, "--shared-norm", min=0, help="Shared normalisation (Clark and Gardner, "
                                    "ACL 2018, arXiv:1710.10723): read each question with its gold paragraph and "
                                    "this many other paragraphs of its article (most words in common with it, none "
                                    "holding an answer), one start/end softmax over all their windows; the "
                                    "checkpoint is then read with spans ranked by raw score across passages."),
    init: Optional[Path] = typer.Option(None, "--init", help="Start from this span-reader checkpoint instead of "
                                        "the base model (e.g. data/reader/span-reader.safetensors); recorded in "
                                        "the new checkpoint's metadata."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Checkpoint file (safetensors). Default: "
                                              "<data dir>/models/reader/span-reader.safetensors, what mkgrag's "
                                              "learned reader (the CPU default) loads first (else the shipped data/reader/ one)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Loss curve PNG (default: beside the checkpoint)."),
) -> Report:
    """Fine-tune all-MiniLM-L6-v2 end to end as an extractive span reader (start/end) on SQuAD-format data;
    prints the loss and windows/s per step window, chooses the abstention threshold on held-out articles."""
    from kgqa.models.heads.span_reader import CHECKPOINT_NAME
    from kgqa.training.span_reader import train_span_reader_on_files

    s = session.settings
    return train_span_reader_on_files(
        data, checkpoint=checkpoint or Path(s.models_dir) / "reader" / CHECKPOINT_NAME, holdout=holdout, limit=limit,
        split_seed=seed if split_seed is None else split_seed, seed=seed, threads=s.torch_threads,
        generated=generated, exclude=list(exclude or []), graph_context=session.context, say=session.say,
        epochs=epochs, steps=steps, batch_size=batch_size, lr=lr, max_length=max_length, doc_stride=doc_stride,
        max_answer_tokens=max_answer_tokens, negatives=negatives, time_limit=time_limit,
        attention_dropout=attention_dropout, hidden_dropout=hidden_dropout, eval_every=eval_every,
        shared_norm=shared_norm, init=init, plot=plot)


def train_ranker(
    session: TrainSession,
    data: list[Path] = typer.Option(..., "--data", help="SQuAD v1.1-format file(s) (.json or .json.gz) to train "
                                    "on, e.g. ../shared/datasets/squad/train-sample-44.json.gz; never an "
                                    "evaluation set."),
    holdout: int = typer.Option(4, "--holdout", min=0, help="Whole articles held out of training, where the "
                                "ranker's recall is reported beside the sentence encoder's (the span reader's "
                                "split with the same seed)."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Train on the first N questions of the "
                                        "shuffled training articles only (a quick run)."),
    negatives: int = typer.Option(3, "--negatives", min=1, help="Other paragraphs of the article per question."),
    hard: int = typer.Option(2, "--hard", min=0, help="Of those, the ones the sentence encoder ranks highest "
                             "(the rest drawn at random)."),
    epochs: int = typer.Option(1, "--epochs", min=1, help="Epochs over the groups."),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Questions (groups) per step."),
    lr: float = typer.Option(5e-5, "--lr", help="AdamW peak learning rate (linear warm-up over 10 %, then decay)."),
    max_length: int = typer.Option(224, "--max-length", min=32, max=512, help="Tokens of a training pair."),
    read_length: int = typer.Option(384, "--read-length", min=32, max=512, help="Tokens of a pair when ranking "
                                    "(mKG-RAG's chunks are longer than SQuAD's paragraphs)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the held-out split, the negatives, the order and the head."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Stop training after this many seconds."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Checkpoint file (safetensors). Default: "
                                              "<data dir>/models/ranker/passage-ranker.safetensors, what mkgrag "
                                              "loads first (else the shipped data/ranker/ one)."),
) -> Report:
    """Fine-tune all-MiniLM-L6-v2 end to end as a cross-encoder passage ranker (question, paragraph → relevance)
    on SQuAD-format data; prints the loss and groups/s, and held-out recall@k beside the sentence encoder's."""
    from kgqa.models.encoder import encoder_for
    from kgqa.models.heads.passage_ranker import CHECKPOINT_NAME
    from kgqa.training.passage_ranker import train_passage_ranker_on_files

    s = session.settings
    enc = encoder_for(s)
    return train_passage_ranker_on_files(
        data, checkpoint=checkpoint or Path(s.models_dir) / "ranker" / CHECKPOINT_NAME,
        encode=lambda texts: enc.encode(texts, threads=s.torch_threads), holdout=holdout, limit=limit, seed=seed,
        threads=s.torch_threads, say=session.say, negatives=negatives, hard=hard, epochs=epochs,
        batch_size=batch_size, lr=lr, max_length=max_length, read_length=read_length, time_limit=time_limit)


for _name, _fn in (("paths", train_paths), ("reader", train_reader), ("ranker", train_ranker)):
    train_app.command(_name)(train_command(_fn))
