"""``kgqa train``: GraSP's GAT + projector (Section 4.4), the chain reader, VisPath's terminal selection, the span
reader and the passage ranker."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from kgqa.app.cli.common import console, env_settings, per_second, train_app


@train_app.command("grasp")
def train_grasp_cmd(
    data: Optional[Path] = typer.Option(None, "--data", help="Question/answer pairs (JSON lines: question, answer, "
                                        "topic.id; the kgqa eval format). Default: generated from the loaded KG; "
                                        "with --examples N as well, both."),
    head: str = typer.Option("auto", "--head", help="nodes (a node-scoring head on the GAT, no LLM: minutes on a "
                             "CPU) or softprompt (the paper's soft prompt, the small LLM frozen); auto = nodes unless "
                             "a soft-prompt server is configured."),
    examples: Optional[int] = typer.Option(None, "--examples", min=1, help="How many questions to generate from the "
                                           "KG (default 5000 for --head nodes, 64 for softprompt; with --data: "
                                           "added to the file's)."),
    exclude: Optional[Path] = typer.Option(None, "--exclude", help="A question file whose topic entities generated "
                                           "questions must not use (e.g. the eval set)."),
    variant: str = typer.Option("gat", "--variant", help="gat (GraSP) or text (the text soft-prompt ablation)."),
    epochs: int = typer.Option(3, "--epochs", min=1, help="Epochs (Section 4.4: 3)."),
    lr: Optional[float] = typer.Option(None, "--lr", help="AdamW learning rate (default: Section 4.4's 2e-4; "
                                       "1e-3 for --head nodes)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generated questions, the initial weights and the order."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Checkpoint file (safetensors). Default: "
                                              "<data dir>/models/grasp/grasp-<nodes|gat|text>.safetensors, what "
                                              "ask loads."),
    resume: bool = typer.Option(False, "--resume", help="Continue from the checkpoint's last saved step."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Loss curve PNG (default: beside the checkpoint)."),
    option: Optional[list[str]] = typer.Option(None, "-o", "--option", metavar="KEY=VALUE",
                                               help="A GraSP extraction option (k1, k2, hops, cap, scan_cap)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Train GraSP's GAT: a node-scoring head (--head nodes, no LLM) or the GAT + projector with the
    soft-prompt LLM frozen (Section 4.4); seeded, resumable."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from kgqa.app.runtime import open_runtime
    from kgqa.core.method import parse_kv, parse_options
    from kgqa.methods.grasp.algorithm import GraSP
    from kgqa.methods.grasp.training import train_grasp

    from kgqa.core.errors import InvalidInput

    s = env_settings()
    if head == "auto":
        head = "softprompt" if s.softprompt_backend in ("openai", "vllm") else "nodes"
    if head not in ("nodes", "softprompt"):
        raise InvalidInput(f"--head {head!r}: choose nodes or softprompt")
    if head == "nodes":
        if variant != "gat":
            raise InvalidInput("--variant text is a soft-prompt ablation; use --head softprompt")
        variant = "nodes"
    with_generated = data is not None and examples is not None
    examples = examples or (5000 if head == "nodes" else 64)
    lr = lr or (1e-3 if head == "nodes" else 2e-4)
    opts = parse_options(GraSP, {**parse_kv(option), "triples_only": True})      # extraction options only
    opts = opts.model_copy(update={"triples_only": False})
    err = console(stderr=True)
    lines: list[str] = []

    def say(msg: str) -> None:
        lines.append(msg)
        if not as_json:
            print(msg, flush=True)

    with open_runtime(s) as rt:
        ctx = rt.context()
        with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                      TimeRemainingColumn(), console=err, disable=not sys.stderr.isatty(), transient=True) as bar:
            prep = bar.add_task("subgraphs", total=None)
            steps = bar.add_task("training", total=None, visible=False)

            def on_step(epoch, k, loss):
                bar.update(steps, visible=True, description=f"epoch {epoch + 1}/{epochs} loss {loss:.3f}",
                           completed=k + 1)

            def on_epoch(epoch, mean):
                say(f"epoch {epoch + 1}/{epochs}: mean loss {mean:.4f}")

            rep = train_grasp(ctx, options=opts, variant=variant, data=data, with_generated=with_generated,
                              examples=examples, exclude=exclude,
                              epochs=epochs, lr=lr, seed=seed, checkpoint=checkpoint, resume=resume, plot=plot,
                              on_prepare=lambda: bar.advance(prep), on_step=on_step, on_epoch=on_epoch,
                              on_ready=lambda n, r: (bar.update(prep, visible=False),
                                                     bar.update(steps, total=n),
                                                     say(f"resumed after epoch {r[0]} (step {r[1]} of it)") if r
                                                     else None))
    if as_json:
        print(json.dumps(rep, indent=2, ensure_ascii=False, default=str))
        return
    print(f"examples: {rep['examples']} ({rep['how']}); {rep['used']} used, {rep['dropped_answer_not_in_subgraph']} "
          f"dropped (answer not in the extracted subgraph)")
    sec = rep["seconds"]
    print(f"time: generate {sec['generate']:.1f} s, subgraphs {sec['prepare']:.1f} s, train {sec['train']:.1f} s "
          f"({per_second(rep['used'] * epochs / max(sec['train'], 1e-9))} examples/s over {epochs} epochs); "
          f"KG fingerprint {rep['kg_fingerprint']}")
    print(f"encoder: {rep['variant']}, {rep['parameters']:,} parameters · {rep['steps']} steps in all · "
          f"torch threads {s.torch_threads}")
    print(f"loss per epoch: " + ", ".join(f"{v:.4f}" for v in rep["epoch_losses"]))
    print(f"checkpoint: {rep['checkpoint']} ({rep['bytes'] / 1e6:.1f} MB)")
    print(f"loss curve: {rep['plot']}")


@train_app.command("paths")
def train_paths_cmd(
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
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Train the chain reader (default) or the relation-path retriever on the loaded KG; loss per step window,
    examples/s, the held-out gold-first rate."""
    from kgqa.app.runtime import open_runtime
    from kgqa.core.errors import InvalidInput

    s = env_settings()
    if kind not in ("reader", "retriever"):
        raise InvalidInput(f"--kind {kind!r}: choose reader or retriever")
    excl = list(exclude or [])
    if kind == "reader":
        if arch not in ("bi", "cross"):
            raise InvalidInput(f"--arch {arch!r}: choose bi or cross")
        _train_reader(s, data, examples, excl, depth or 4, epochs or 2, lr or 8e-5, seed, checkpoint, plot, as_json,
                      arch)
        return
    from kgqa.models.path_supervision import train_paths

    if len(excl) > 1:
        raise InvalidInput("--kind retriever takes one --exclude file")
    examples = 400 if examples is None else examples
    depth, epochs, lr = depth or 3, epochs or 10, lr or 1e-3
    ckpt = checkpoint or Path(s.models_dir) / "paths" / "path-retriever.safetensors"
    encoder_name = Path(s.encoder_model).name if s.encoder_model else "all-MiniLM-L6-v2"

    def on_epoch(epoch: int, mean: float) -> None:
        if not as_json:
            print(f"epoch {epoch + 1}/{epochs}: mean loss {mean:.4f}", flush=True)

    with open_runtime(s) as rt:
        ctx = rt.context()
        rep = train_paths(ctx.graph, ctx.kg, checkpoint=ckpt, data=data, examples=examples,
                          generated=examples > 0, exclude=excl[0] if excl else None, depth=depth, epochs=epochs,
                          lr=lr, seed=seed, resume=resume, encoder_name=encoder_name, on_epoch=on_epoch, prior=prior)
    if as_json:
        print(json.dumps(rep, indent=2, ensure_ascii=False, default=str))
        return
    sec = rep["seconds"]
    print(f"examples: {rep['examples']} ({rep['how']}); {rep['used']} used, {rep['dropped_no_path']} dropped "
          f"(no chain of ≤ {depth} relations reaches the answer); {rep['chains']} distinct relation chains")
    if rep["resumed_from_epoch"]:
        print(f"resumed after epoch {rep['resumed_from_epoch']}")
    print(f"loss per epoch: " + ", ".join(f"{v:.4f}" for v in rep["epoch_losses"]))
    print(f"seconds: search {sec['search']}, encode {sec['encode']}, train {sec['train']}, total {sec['total']} · "
          f"{rep['examples_per_s']} examples/s in training · torch threads {s.torch_threads}")
    print(f"checkpoint: {rep['checkpoint']} ({rep['bytes'] / 1e6:.2f} MB)")


def _train_reader(s, data, examples, exclude, depth, epochs, lr, seed, checkpoint, plot, as_json, arch) -> None:
    """``kgqa train paths --kind reader``: the chain reader (kgqa.models.chain_training)."""
    import time

    from kgqa.app.runtime import open_runtime
    from kgqa.models.plot import plot_losses
    from kgqa.models.chain_training import train_reader

    examples = 2000 if examples is None else examples
    ckpt = checkpoint or Path(s.models_dir) / "paths" / "chain-reader.safetensors"
    window: list[float] = []
    t0 = time.perf_counter()

    def on_step(step: int, total: int, loss: float) -> None:
        window.append(loss)
        if not as_json and (step % 50 == 0 or step == total):
            el = time.perf_counter() - t0
            print(f"step {step}/{total}: mean loss {sum(window) / len(window):.4f} (last {len(window)} steps) · "
                  f"{el:.0f} s", flush=True)
            window.clear()

    if not as_json:
        print(f"preparing: {examples} generated questions (walks of 1–{depth} facts)"
              + (f" + {data}" if data else "") + f" · torch threads {s.torch_threads}", flush=True)
    with open_runtime(s) as rt:
        ctx = rt.context()
        t0 = time.perf_counter()
        rep = train_reader(ctx.graph, ctx.kg, checkpoint=ckpt, data=data, examples=examples, exclude=exclude,
                           depth=depth, epochs=epochs, lr=lr, seed=seed, threads=s.torch_threads, on_step=on_step,
                           arch=arch)
    from kgqa.methods.vispath.terminal import terminal_path

    stale = terminal_path(Path(ckpt))          # VisPath's terminal weights were fitted for the previous reader
    if stale.is_file():
        stale.unlink()
        rep["terminal_weights_removed"] = str(stale)
    png = plot or Path(ckpt).with_suffix(".loss.png")
    plot_losses(rep.pop("step_losses"), rep["epoch_losses"], png, title="chain reader training loss")
    rep["plot"] = str(png)
    if as_json:
        print(json.dumps(rep, indent=2, ensure_ascii=False, default=str))
        return
    sec = rep["seconds"]
    ho = rep["held_out"]
    print(f"questions: {rep['questions']} ({rep['generated']} generated, {rep['from_file']} from the file, "
          f"{rep['file_dropped_no_path']} of those dropped: no chain reaches the answer); by hops "
          + ", ".join(f"{h}: {n}" for h, n in rep["hops"].items()))
    print(f"pairs: {rep['pairs']} ({rep['arch']}) · {rep['epochs']} epoch(s) · loss per epoch "
          + ", ".join(f"{v:.4f}" for v in rep["epoch_losses"]))
    print(f"time: prepare {sec['prepare']} s, train {sec['train']} s ({rep['pairs_per_s']} pairs/s), total "
          f"{sec['total']} s · torch threads {rep['threads']}")
    if ho["questions"]:
        print(f"held out: the gold chain outscores every other candidate for {ho['gold_first']} of "
              f"{ho['questions']} questions ({100 * ho['rate']:.1f} %)")
    print(f"checkpoint: {rep['checkpoint']} ({rep['bytes'] / 1e6:.1f} MB)")
    print(f"loss curve: {rep['plot']}")
    print("next: kgqa train terminal" + (f" --reader {ckpt}" if checkpoint else "")
          + " learns VisPath's terminal selection for this reader (a few minutes on a small KG)"
          + (f"; removed {rep['terminal_weights_removed']}, fitted for the previous reader"
             if rep.get("terminal_weights_removed") else ""))


@train_app.command("terminal")
def train_terminal_cmd(
    questions: int = typer.Option(300, "--questions", min=10, help="Questions generated from the KG's walks "
                                  "(2–4 facts) and answered by VisPath to learn from."),
    exclude: Optional[list[Path]] = typer.Option(None, "--exclude", help="A question file whose topic entities "
                                                 "generated questions must not use (e.g. the eval set); repeatable."),
    reader: Optional[Path] = typer.Option(None, "--reader", help="The chain reader's checkpoint (default: the one "
                                          "VisPath loads); the weights are written beside it."),
    seed: int = typer.Option(0, "--seed", help="Seed of the generated questions and the held-out split."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Learn VisPath's terminal selection under the chain reader on the loaded KG: how much the reader, the rules'
    σ, the answer type and the depth each count (kgqa.methods.vispath.terminal)."""
    import time

    from kgqa.app.pipeline import Pipeline
    from kgqa.app.runtime import open_runtime
    from kgqa.core.errors import InvalidInput
    from kgqa.core.qa_examples import topics_of
    from kgqa.core.walk_questions import generate_walk_questions
    from kgqa.methods.vispath.terminal import FEATURES, TerminalWeights, collect, fit, sha256, terminal_path

    s = env_settings()
    t0 = time.perf_counter()
    with open_runtime(s) as rt:
        opts = {"path_scorer": "reader", **({"reader_checkpoint": str(reader)} if reader else {})}
        p = Pipeline(s, "vispath", options=opts, graph=rt.graph, models=rt.models, kg=rt.kg, write_trace=False)
        slot = p.method.reader
        if slot.get() is None:
            raise InvalidInput(f"kgqa train terminal: {slot.error}")
        excl: set[str] = set()
        for f in exclude or []:
            excl |= topics_of(f)
        gen = generate_walk_questions(rt.graph, rt.kg, questions, seed, excl, hop_weights=(0.0, 0.4, 0.4, 0.2))
        items = [(g.example.question, g.example.topic_id, g.example.answer_id) for g in gen]
        if not as_json:
            print(f"{len(items)} generated questions · VisPath with the chain reader {slot.path} · torch threads "
                  f"{s.torch_threads}", flush=True)

        def tick(k: int, n: int) -> None:
            if not as_json and (k % 50 == 0 or k == n):
                print(f"answered {k}/{n} · {time.perf_counter() - t0:.0f} s", flush=True)

        groups = collect(p.method, items, tick)
    w, rep = fit(groups, seed)
    split = p.method.opt.ends_split
    out = TerminalWeights(w, sha256(slot.path), {"questions": len(items), "seed": seed, **rep, "ends_split": split,
                                                 "exclude": [str(f) for f in exclude or []]}
                          ).save(terminal_path(slot.path))
    rep = {**rep, "weights": dict(zip(FEATURES, (round(float(x), 4) for x in w))), "file": str(out),
           "ends_split": split, "seconds": round(time.perf_counter() - t0, 1)}
    if as_json:
        print(json.dumps(rep, indent=2))
        return
    print("weights: " + ", ".join(f"{k} {v:+.3f}" for k, v in rep["weights"].items())
          + (" · a chain's score shared among its ends (ends_split)" if rep["ends_split"] else ""))
    print(f"gold answer ranked first on the {rep['groups']} questions whose answer was kept: fixed sum "
          f"{100 * rep['fixed_top1']:.1f} %, learned {100 * rep['learned_top1']:.1f} % (L2 {rep['l2']}, chosen on a "
          f"held-out fifth)")
    print(f"weights: {out} · {rep['seconds']} s")


def _reading_questions(s, n: int, exclude: list[Path], seed: int, say):
    """Reading questions generated from the loaded graph (``core.reading_questions``), as SQuAD-style QA:
    nine tenths of their subjects to train on, one tenth held out; and what they were made of."""
    import random as _random

    from kgqa.app.runtime import open_runtime
    from kgqa.core.qa_examples import topics_of
    from kgqa.core.reading_questions import documents_of, generate_reading_questions
    from kgqa.models.span_reader import QA

    topics: set[str] = set()
    docs: set[str] = set()
    for p in exclude:
        topics |= topics_of(p)
        docs |= documents_of(p)
    with open_runtime(s) as rt:
        got = generate_reading_questions(rt.graph, rt.kg, n, seed, exclude_topics=topics, exclude_documents=docs)
    if not got:
        from kgqa.core.errors import InvalidInput

        raise InvalidInput("--generated: the loaded graph has no fact whose object is named in a text about its "
                           "subject (load a KG with descriptions, or documents)")
    subjects = sorted({g.subject_id for g in got})
    _random.Random(seed + 31).shuffle(subjects)
    held_s = set(subjects[: max(1, len(subjects) // 10)])
    train, held = [], []
    for k, g in enumerate(got):
        (held if g.subject_id in held_s else train).append(
            QA(f"gen-{k}", g.question, g.context, [(g.answer, g.start)], f"kg:{g.subject_id}"))
    info = {"questions": len(train), "subjects": len(subjects) - len(held_s), "held_out_questions": len(held),
            "held_out_subjects": len(held_s), "excluded_topics": len(topics), "excluded_documents": sorted(docs),
            "examples": [{"question": q.question, "answer": q.answers[0][0]} for q in train[:5]]}
    say(f"generated {len(got)} reading questions from the loaded graph on {len(subjects)} subjects "
        f"({len(topics)} topics and {len(docs)} documents excluded): {len(train)} to train on, {len(held)} held out")
    for q in train[:5]:
        say(f"  e.g. {q.question!r} → {q.answers[0][0]!r}")
    return train, held, info


def _sayer(as_json: bool):
    """print, flushed, unless the command prints its report as JSON."""
    def say(msg: str) -> None:
        if not as_json:
            print(msg, flush=True)
    return say


def _squad_split(data: list[Path], holdout: int, seed: int, limit: int | None, s, say) -> tuple[list, list]:
    """(train, held out) of the SQuAD-format files: ``holdout`` whole articles held out with ``seed``, the first
    ``limit`` questions of the shuffled rest (all without); says what it trains on."""
    import random as _random

    from kgqa.models.span_reader import load_squad, split_articles

    qas = []
    for p in data:
        qas += load_squad(p)
    train, held = split_articles(qas, holdout, seed)
    if limit:
        _random.Random(seed).shuffle(train)
        train = train[:limit]
    say(f"training on {len(train)} questions ({len({q.article for q in train})} articles) of "
        f"{', '.join(p.name for p in data)}; {len(held)} held out ({holdout} articles); torch threads "
        f"{s.torch_threads} (KGQA_TORCH_THREADS)")
    return train, held


@train_app.command("reader")
def train_reader_cmd(
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
                                          "(reading caps it at 20 tokens, kgqa.models.span_reader.ANSWER_CAP)."),
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
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Fine-tune all-MiniLM-L6-v2 end to end as an extractive span reader (start/end) on SQuAD-format data;
    prints the loss and windows/s per step window, chooses the abstention threshold on held-out articles."""
    from kgqa.models.span_reader import CHECKPOINT_NAME, train_reader

    s = env_settings()
    ckpt = checkpoint or Path(s.models_dir) / "reader" / CHECKPOINT_NAME
    say = _sayer(as_json)
    split_seed = seed if split_seed is None else split_seed
    train, held = _squad_split(data, holdout, split_seed, limit, s, say)
    gen_train, gen_held, gen_info = _reading_questions(s, generated, list(exclude or []), seed, say) \
        if generated else ([], [], {})
    train = train + gen_train
    rep = train_reader(train, held, checkpoint=ckpt, epochs=epochs, batch_size=batch_size, lr=lr,
                       max_length=max_length, doc_stride=doc_stride, max_answer_tokens=max_answer_tokens,
                       negatives=negatives, seed=seed, threads=s.torch_threads, plot=plot, say=say,
                       time_limit=time_limit, attention_dropout=attention_dropout,
                       hidden_dropout=hidden_dropout, eval_every=eval_every, steps=steps,
                       holdout_generated=gen_held or None, shared_norm=shared_norm, init=init,
                       trained_on={"files": [p.name for p in data], "questions": len(train) - len(gen_train),
                                   "articles": len({q.article for q in train if not q.article.startswith("kg:")}),
                                   "limit": limit, "holdout_articles": sorted({q.article for q in held}),
                                   "split_seed": split_seed,
                                   "generated": gen_info})
    if gen_held:
        g = rep.meta["holdout_generated"]
        say(f"generated reading questions held out ({g['questions']} questions on {gen_info['held_out_subjects']} "
            f"subjects never trained on), best span: EM {g['em']} F1 {g['f1']}")
    if as_json:
        from dataclasses import asdict

        print(json.dumps(asdict(rep), indent=2, ensure_ascii=False, default=str))
        return
    sec = rep.seconds
    print(f"examples: {rep.examples} questions + {rep.negatives} no-answer pairs = {rep.windows} windows; "
          f"{rep.steps} steps over {rep.epochs} epochs")
    print(f"time: prepare {sec['prepare']} s, train {sec['train']} s ({rep.examples_per_s} windows/s), held-out "
          f"{sec['holdout']} s, held-out probes {sec.get('held_out_probes', 0)} s (not in the training time) · torch threads {rep.meta['torch_threads']} · bf16 autocast {rep.meta['bf16_autocast']}")
    print("loss per epoch: " + ", ".join(f"{v:.4f}" for v in rep.epoch_losses))
    if rep.meta.get("held_out_curve"):
        print("held-out probe (best span): " + ", ".join(f"{c['epochs']} ep EM {c['em']} F1 {c['f1']}"
                                                      for c in rep.meta["held_out_curve"]))
    h = rep.holdout
    if h:
        if "em_with_distractors" in h:
            print(f"held out with {h['distractors']} distractors each (best span by margin): EM "
                  f"{h['em_with_distractors']} F1 {h['f1_with_distractors']}")
        print(f"held out ({h['questions']} questions, {h['articles']} articles): EM {h['em']} F1 {h['f1']}; "
              f"abstention threshold (margin) {rep.threshold}: answers {h['answered_own']} % on the own paragraph, "
              f"abstains {h['abstained_other']} % on another article's")
    print(f"checkpoint: {rep.checkpoint} ({rep.bytes / 1e6:.1f} MB)")
    print(f"loss curve: {rep.plot}")


@train_app.command("ranker")
def train_ranker_cmd(
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
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
):
    """Fine-tune all-MiniLM-L6-v2 end to end as a cross-encoder passage ranker (question, paragraph → relevance)
    on SQuAD-format data; prints the loss and groups/s, and held-out recall@k beside the sentence encoder's."""
    from kgqa.models.encoder import encoder_for
    from kgqa.models.passage_ranker import CHECKPOINT_NAME, train_ranker

    s = env_settings()
    ckpt = checkpoint or Path(s.models_dir) / "ranker" / CHECKPOINT_NAME
    say = _sayer(as_json)
    train, held = _squad_split(data, holdout, seed, limit, s, say)
    enc = encoder_for(s)
    rep = train_ranker(train, held, checkpoint=ckpt, encode=lambda texts: enc.encode(texts, threads=s.torch_threads),
                       negatives=negatives, hard=hard, epochs=epochs, batch_size=batch_size, lr=lr,
                       max_length=max_length, read_length=read_length, seed=seed, threads=s.torch_threads,
                       time_limit=time_limit, say=say,
                       trained_on={"files": [p.name for p in data], "questions": len(train),
                                   "articles": len({q.article for q in train}), "limit": limit,
                                   "holdout_articles": sorted({q.article for q in held})})
    if as_json:
        print(json.dumps({k: v for k, v in rep.items() if k != "losses"}, indent=2, ensure_ascii=False))
        return
    sec = rep["seconds"]
    print(f"examples: {rep['groups']} groups; {rep['steps']} steps, {rep['epochs']} epochs")
    print(f"time: prepare {sec['prepare']} s, train {sec['train']} s ({rep['groups_per_s']} groups/s, "
          f"{rep['pairs_per_s']} pairs/s), held-out {sec['held_out']} s · torch threads {rep['threads']} · bf16 "
          f"autocast {rep['bf16_autocast']}")
    h = rep["held_out"]
    if h:
        fmt = lambda r: " ".join(f"{k} {v}" for k, v in r.items())  # noqa: E731
        print(f"held out ({h['questions']} questions, {h['articles']} articles; own paragraph among its "
              f"article's): sentence encoder recall {fmt(h['encoder'])} · ranker (its top {h['reranked_top']}) "
              f"recall {fmt(h['ranker'])}")
    print(f"checkpoint: {rep['checkpoint']} ({rep['bytes'] / 1e6:.1f} MB)")
