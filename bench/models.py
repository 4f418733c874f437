"""Benchmark of the local model backends, printed as tables.

    .venv/bin/python -m bench.models                 # everything (a few minutes on 2 cores)
    .venv/bin/python -m bench.models --only grounder,json --json-n 3

Sections (each compares against a baseline measured in the same run):

- encoder     all-MiniLM-L6-v2 strings/s, batch 64 vs 256, torch threads 1 vs 2
- chat        SmolLM2-135M tokens/s (greedy generate) and choose() ms per option
- json        valid-JSON rate on VisPath's own prompts+schemas: free generation
              (parse what the model writes) vs. constrained decoding (outlines)
- grounder    ReferenceImageGrounder top-1 accuracy and ms/image on perturbed
              copies of scikit-image sample photos; baseline: the global
              descriptor alone (pHash at 4 rotations + hue-saturation histogram)
- softprompt  SmolLM2 with an 8-vector soft prompt: forward ms, forward+backward ms

Torch threads are pinned (``--threads``, default settings.torch_threads) and
printed with each table. Models load once; their load time is printed apart.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench._common import table

REPO = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- encoder
def bench_encoder(settings, threads: int) -> None:
    import torch

    from kgqa.models.encoder import SentenceEncoder

    enc = SentenceEncoder(settings.encoder_model, device=settings.device)
    t0 = time.perf_counter()
    enc.encode(["warm up"])
    load = time.perf_counter() - t0
    texts = [f"entity number {i} located in the city of place {i % 97}" for i in range(1024)]
    rows = []
    for th in (1, 2):
        torch.set_num_threads(th)
        for bs in (64, 256):
            enc.encode(texts[:bs], batch_size=bs)
            t0 = time.perf_counter()
            enc.encode(texts, batch_size=bs)
            dt = time.perf_counter() - t0
            rows.append([th, bs, len(texts), f"{len(texts) / dt:,.0f}"])
    torch.set_num_threads(threads)
    table(f"encoder all-MiniLM-L6-v2 (load {load:.1f} s)", ["torch threads", "batch", "strings", "strings/s"], rows)


# --------------------------------------------------------------------------- chat
def bench_chat(chat, threads: int) -> None:
    prompts = ["What is the capital of France?", "Name three rivers in Europe.",
               "Describe the Eiffel Tower in one sentence."]
    rows = []
    for p in prompts:
        before = chat.meter.costs().get("chat")
        toks0 = before.completion_tokens if before else 0
        t0 = time.perf_counter()
        chat.generate(p, max_tokens=48)
        dt = time.perf_counter() - t0
        toks = chat.meter.costs()["chat"].completion_tokens - toks0
        rows.append(["generate (greedy)", p[:40], toks, f"{dt:.2f}", f"{toks / dt:.1f}"])
    opts = ["Paris", "Berlin", "London", "Madrid", "Rome", "Vienna", "Lisbon", "Prague"]
    t0 = time.perf_counter()
    scores = chat.choose("What is the capital of France? Answer with the name only.", opts)
    dt = time.perf_counter() - t0
    best = opts[max(range(len(opts)), key=scores.__getitem__)]
    rows.append(["choose (8 options)", f"best: {best}", "-", f"{dt:.2f}", f"{1000 * dt / len(opts):.0f} ms/option"])
    table(f"chat SmolLM2-135M-Instruct (torch threads {threads})",
          ["call", "prompt", "new tokens", "s", "tokens/s"], rows)


# --------------------------------------------------------------------------- structured output
def json_cases(n: int):
    """VisPath's structured-output calls for ``n`` sample questions: (prompt, schema) pairs (also bench/llm.py's)."""
    from kgqa.methods.vispath import prompts as P

    questions = [
        ("Who designed the building shown in the image?", "Eiffel Tower"),
        ("In which country was the person in the picture born?", "Albert Einstein"),
        ("What river flows through the city in the image?", "Paris"),
        ("Which company makes the vehicle shown here?", "Ford Model T"),
        ("What is the capital of the country whose flag is shown?", "France"),
    ][:n]
    cases = []
    for q, obj in questions:
        paths = [f"{obj} → architect → Gustave Eiffel", f"{obj} → country → France"]
        names = [obj, obj + " (film)", "Paris"]
        cases += [
            (P.build_referring_expression(q, has_image=True), P.ReferringExpression),
            (P.build_question_analysis(q), P.QuestionSketch),
            (P.build_candidate_ranking(q, "the object", obj, names),
             P.candidate_ranking_schema(tuple(names), 3)),          # as VisPath asks: listed names, ≤ rank_top
            (P.build_hop_intent(q, 1, paths[:1]), P.HopIntent),
            (P.build_chain_examination(q, ["architect"], paths, 2), P.chain_selection_schema(2, len(paths))),
            (P.build_evidence_statement(q, paths), P.EvidenceStatement),
            (P.build_answerability(q, f"The {obj} was designed by Gustave Eiffel."), P.Answerability),
            (P.build_final_answer(q, f"The {obj} was designed by Gustave Eiffel."), P.FinalAnswer),
        ]
    return cases


def bench_json(chat, n: int, threads: int) -> None:
    from kgqa.methods.vispath import prompts as P
    from kgqa.models.accounting import CallRecord
    from kgqa.models.structured import parse

    from kgqa.core.errors import ModelUnavailable

    cases = json_cases(n)
    results = {"free generation + pydantic": [], "outlines constrained + pydantic": []}
    retried = []  # generate_json end to end: constrained, then up to settings.json_retries sampled retries
    per_schema: dict[str, list[int]] = {}
    for prompt, schema in cases:
        for method in results:
            t0 = time.perf_counter()
            rec = CallRecord()
            if method.startswith("free"):
                text = chat.generate_once(prompt, P.VISPATH_SYSTEM, 128, 0.0, rec)
            else:
                text = chat.generate_json_once(prompt, P.VISPATH_SYSTEM, schema, 128, rec)
            dt = time.perf_counter() - t0
            try:
                parse(text, schema)
                ok = 1
            except ValueError:
                ok = 0
            results[method].append((ok, dt))
            per_schema.setdefault(f"{schema.__name__}", [0, 0, 0, 0])
            per_schema[schema.__name__][0 if method.startswith("free") else 1] += ok
        if not ok:  # the first (greedy) try failed: what do the sampled retries give?
            t0 = time.perf_counter()
            try:
                chat.generate_json(prompt, schema, system=P.VISPATH_SYSTEM, max_tokens=128)
                ok = 1
            except ModelUnavailable:
                ok = 0
            retried.append((ok, dt + time.perf_counter() - t0))
        else:
            retried.append((1, dt))
        per_schema[schema.__name__][2] += ok
        per_schema[schema.__name__][3] += 1
    results[f"constrained + up to {chat.settings.json_retries} sampled retries (generate_json)"] = retried
    rows = []
    for method, rs in results.items():
        ok = sum(r[0] for r in rs)
        rows.append([method, len(rs), ok, f"{100 * ok / len(rs):.0f}%", f"{statistics.mean(r[1] for r in rs):.2f}"])
    table(f"structured output, first try, VisPath prompts (SmolLM2-135M, greedy, max 128 tokens, "
          f"torch threads {threads})", ["method", "prompts", "valid", "rate", "s/call"], rows)
    table("valid replies per schema", ["schema", "free", "constrained", "with retries", "prompts"],
          [[k, *v] for k, v in per_schema.items()])


# --------------------------------------------------------------------------- grounder
def bench_grounder(settings) -> None:
    import hashlib

    from kgqa.core.images import load_image
    from kgqa.models.grounder import ReferenceImageGrounder, Reference, global_similarity
    from kgqa.models.grounder_eval import PERTURBATIONS, perturbed, sample_images, write_jpeg

    work = Path(tempfile.mkdtemp(prefix="kgqa-bench-grounder-"))
    imgs = sample_images()
    refs = []
    for name, im in imgs.items():
        p = work / f"{name}.png"
        im.save(p)
        refs.append(Reference(f"Q_{name}", name, hashlib.sha256(p.read_bytes()).hexdigest(), p))
    g = ReferenceImageGrounder(settings.model_copy(update={"data_dir": work / "data"}), references=refs)
    t0 = time.perf_counter()
    ref_feats = {r.entity_id: g.reference_features(r) for r in refs}
    index_s = time.perf_counter() - t0
    rows = []
    tot = [0, 0, 0, 0.0]
    for kind in PERTURBATIONS:
        hits = base_hits = 0
        ms = []
        for i, (name, im) in enumerate(imgs.items()):
            q = work / f"q-{kind}-{name}.jpg"
            write_jpeg(perturbed(im, kind, seed=i), q)
            img = load_image(q)
            t0 = time.perf_counter()
            top = g.rank(img, 1)[0][0]
            ms.append(1000 * (time.perf_counter() - t0))
            hits += top == f"Q_{name}"
            qf = g.query_features(img)
            base = max(ref_feats, key=lambda e: global_similarity(qf, ref_feats[e]))
            base_hits += base == f"Q_{name}"
        n = len(imgs)
        tot[0] += hits
        tot[1] += base_hits
        tot[2] += n
        tot[3] += sum(ms)
        rows.append([kind, n, f"{hits}/{n}", f"{base_hits}/{n}", f"{statistics.mean(ms):.0f}"])
    rows.append(["total", tot[2], f"{tot[0]}/{tot[2]} ({100 * tot[0] / tot[2]:.0f}%)",
                 f"{tot[1]}/{tot[2]} ({100 * tot[1] / tot[2]:.0f}%)", f"{tot[3] / tot[2]:.0f}"])
    table(f"reference-image grounder (stand-in, not a VLM): {len(refs)} skimage reference photos, "
          f"index {index_s:.1f} s", ["perturbation", "queries", "top-1 grounder", "top-1 baseline global",
                                      "ms/image (grounder)"], rows)


def bench_grounder_demo(settings) -> None:
    """The demo KG's own entity images (data/demo) against its perturbed query copies."""
    import hashlib

    from kgqa.core.images import load_image
    from kgqa.models.grounder import Reference, ReferenceImageGrounder

    demo = REPO / "data" / "demo"
    tsv = demo / "entity_images.tsv"
    if not tsv.exists():
        print("\n(demo KG images not found: data/demo/entity_images.tsv)")
        return
    refs = []
    for line in tsv.read_text(encoding="utf-8").splitlines():
        qid, rel = line.split("\t")
        p = demo / rel
        refs.append(Reference(qid, p.stem, hashlib.sha256(p.read_bytes()).hexdigest(), p))
    work = Path(tempfile.mkdtemp(prefix="kgqa-bench-demo-"))
    g = ReferenceImageGrounder(settings.model_copy(update={"data_dir": work}), references=refs)
    rows = {"photos": [0, 0, 0, 0, 0.0], "flags": [0, 0, 0, 0, 0.0]}
    for ref in refs:
        q = demo / "queries" / f"{ref.path.stem}.jpg"
        t0 = time.perf_counter()
        top, score = g.rank(load_image(q), 1)[0]
        ms = 1000 * (time.perf_counter() - t0)
        r = rows["flags" if ref.path.stem.startswith("flag_") else "photos"]
        r[0] += 1
        r[1] += top == ref.entity_id
        r[2] += top == ref.entity_id and score >= settings.grounder_min_score
        r[3] += top != ref.entity_id and score >= settings.grounder_min_score
        r[4] += ms
    table(f"reference-image grounder on the demo KG: {len(refs)} entity images vs data/demo/queries "
          f"(recognised = top-1 and score >= {settings.grounder_min_score})",
          ["pictures", "queries", "top-1", "recognised", "wrongly recognised", "ms/image"],
          [[k, n, hit, rec, wrong, f"{ms / max(n, 1):.0f}"] for k, (n, hit, rec, wrong, ms) in rows.items()])


# --------------------------------------------------------------------------- soft prompt
def bench_softprompt(settings, threads: int) -> None:
    import torch

    from kgqa.models.softprompt_local import LocalSoftPrompt

    sp = LocalSoftPrompt(settings)
    h = sp.hidden_size
    soft = (torch.randn(8, h) * 0.02).requires_grad_(True)
    prompt, target = "Which country is the Eiffel Tower in?", "France"
    sp.loss(soft, prompt, target)
    fwd, fb = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        with torch.no_grad():
            sp.loss(soft, prompt, target)
        fwd.append(1000 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        sp.loss(soft, prompt, target).backward()
        fb.append(1000 * (time.perf_counter() - t0))
    t0 = time.perf_counter()
    with torch.no_grad():
        model, tok = sp.model_and_tokenizer()
        model(input_ids=tok(prompt, return_tensors="pt")["input_ids"])
    plain = 1000 * (time.perf_counter() - t0)
    table(f"soft prompt SmolLM2-135M (8 soft vectors × {h}, torch threads {threads})",
          ["pass", "ms (median of 5)"],
          [["forward (soft prompt + chat prompt + target)", f"{statistics.median(fwd):.0f}"],
           ["forward + backward to the soft prompt", f"{statistics.median(fb):.0f}"],
           ["baseline: plain forward of the bare prompt tokens", f"{plain:.0f}"]])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="encoder,chat,json,grounder,softprompt")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json-n", type=int, default=4, help="questions for the JSON section (7 prompts each)")
    args = ap.parse_args()

    import torch

    from kgqa.core.config import Settings

    settings = Settings()
    threads = args.threads or settings.torch_threads
    settings = settings.model_copy(update={"torch_threads": threads})
    torch.set_num_threads(threads)
    only = set(args.only.split(","))
    print(f"torch {torch.__version__}, torch threads {threads}, device {settings.device}")

    chat = None
    if only & {"chat", "json"}:
        from kgqa.models.local_chat import LocalChat

        chat = LocalChat(settings)
        t0 = time.perf_counter()
        chat.model  # noqa: B018 - load once, timed apart
        print(f"SmolLM2 load: {time.perf_counter() - t0:.1f} s")
    if "encoder" in only:
        bench_encoder(settings, threads)
    if "chat" in only:
        bench_chat(chat, threads)
    if "json" in only:
        bench_json(chat, args.json_n, threads)
    if "grounder" in only:
        bench_grounder(settings)
        bench_grounder_demo(settings)
    if "softprompt" in only:
        bench_softprompt(settings, threads)


if __name__ == "__main__":
    main()
