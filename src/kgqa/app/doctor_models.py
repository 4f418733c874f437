"""``kgqa doctor``'s model rows: per role its backend, model, whether it loads or
answers, and a one-call smoke test with its latency.

Called by ``kgqa.app.doctor.model_checks``. With ``smoke=False`` nothing is loaded
or contacted; the rows only say what is configured.
"""

from __future__ import annotations

import time

from kgqa.core.config import Settings
from kgqa.app.checks import Check
from kgqa.core.errors import KgqaError

SMOKE_PROMPT = "What is the capital of France? Answer with one word."


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _short(s: str, n: int = 40) -> str:
    s = " ".join(str(s).split())
    return repr(s if len(s) <= n else s[: n - 1] + "…")


def _encoder_check(settings: Settings, smoke: bool) -> Check:
    from kgqa.models.encoder import encoder_for

    try:
        enc = encoder_for(settings)
        head = f"local · {enc.name} · {enc.backend} · {settings.device} · threads {settings.torch_threads}"
        if not smoke:
            return Check("model: encoder", True, head + " · not loaded (--no-models smoke)")
        _, load_s = _timed(lambda: enc.model)
        vec, s = _timed(lambda: enc.encode(["Eiffel Tower"]))
        return Check("model: encoder", vec.shape == (1, enc.dim),
                     f"{head} · loaded in {load_s:.1f} s · smoke: 1 string → {vec.shape[1]}-d in {1000 * s:.0f} ms")
    except KgqaError as e:
        return Check("model: encoder", False, str(e))


def _chat_check(settings: Settings, smoke: bool, meter) -> Check:
    name = "model: chat"
    try:
        if settings.chat_backend == "none":
            from kgqa.models.null_chat import GRAPH_ONLY

            return Check(name, True, GRAPH_ONLY)
        if settings.chat_backend == "local":
            from kgqa.models.gguf import hf_folder, locate_gguf
            from kgqa.models.local_chat import LocalChat

            chat = LocalChat(settings, meter=meter)
            head = f"local · {chat.name} ({locate_gguf(settings).name}) · torch threads {settings.torch_threads}"
            if not smoke:
                return Check(name, True, head)
            converted = (hf_folder(settings) / "config.json").exists()
            _, load_s = _timed(lambda: chat.model)
            how = "loaded" if converted else "converted from GGUF and loaded"
            reply, s = _timed(lambda: chat.generate(SMOKE_PROMPT, max_tokens=8))
            return Check(name, bool(reply.strip()),
                         f"{head} · {how} in {load_s:.1f} s · smoke: {_short(reply)} in {s:.2f} s")
        from kgqa.models.openai_backend import OpenAIChat

        chat = OpenAIChat(settings, meter=meter)
        return _served_check(name, settings.chat_backend, chat, smoke, "smoke",
                             lambda: chat.generate(SMOKE_PROMPT, max_tokens=8))
    except KgqaError as e:
        return Check(name, False, str(e))


def _vision_check(settings: Settings, smoke: bool, meter) -> Check:
    name = "model: vision"
    try:
        if settings.vision_backend == "local":
            return _grounder_check(settings, smoke, meter)
        from kgqa.models.openai_backend import OpenAIVision

        vis = OpenAIVision(settings, meter=meter)
        return _served_check(name, settings.vision_backend, vis, smoke, "smoke (red square)",
                             lambda: vis.recognize(_red_square(settings), "shape"))
    except KgqaError as e:
        return Check(name, False, str(e))


def _served_check(name: str, backend: str, client, smoke: bool, what: str, call) -> Check:
    """A model behind an OpenAI-compatible server: named only, or (``smoke``) pinged, checked to be among the
    models the server serves, and asked ``call()``."""
    head = f"{backend} · {client.name} @ {client.base_url}"
    if not smoke:
        return Check(name, True, head)
    served, ping_s = _timed(client.ping)
    if client.name not in served:
        return Check(name, False, f"{head} · reachable, but serves {', '.join(served) or 'nothing'}")
    reply, s = _timed(call)
    return Check(name, bool(reply.strip()),
                 f"{head} · reachable in {1000 * ping_s:.0f} ms · {what}: {_short(reply)} in {s:.2f} s")


def _red_square(settings: Settings):
    from PIL import Image

    from kgqa.core.images import load_image

    p = settings.models_dir / "doctor-red-square.png"
    p.parent.mkdir(parents=True, exist_ok=True)
    if not p.exists():
        Image.new("RGB", (64, 64), (220, 20, 20)).save(p)
    return load_image(p)


def _grounder_check(settings: Settings, smoke: bool, meter) -> Check:
    """The grounder needs entity images in the graph; smoke: one reference image finds itself."""
    from kgqa.core.graph import Graph
    from kgqa.core.images import load_image
    from kgqa.models.grounder import ReferenceImageGrounder

    name = "model: vision"
    head = "local · reference-image grounder (stand-in, not a VLM)"
    if not smoke:
        return Check(name, True, head, required=False)
    with Graph(settings) as g:
        try:
            refs = ReferenceImageGrounder(settings, graph=g, meter=meter).references
        except KgqaError as e:
            return Check(name, False, f"{head} · {e}", required=False)
    if not refs:
        return Check(name, False, f"{head} · the graph has no entity images: questions with an image "
                                  "fall back to the referring expression", required=False)
    readable = [r for r in refs[:50] if r.path.is_file()]
    if not readable:
        return Check(name, False, f"{head} · {len(refs):,} entity images, none of the first 50 files "
                                  f"readable (e.g. {refs[0].path})", required=False)
    sample = readable[:8]
    grounder = ReferenceImageGrounder(settings, meter=meter, references=sample)
    probe = sample[0]
    ranked, s = _timed(lambda: grounder.rank(load_image(probe.path), 1))
    ok = bool(ranked) and ranked[0][0] == probe.entity_id
    return Check(name, ok, f"{head} · {len(refs):,} entity images · smoke: {probe.name} image → "
                           f"{ranked[0][0] if ranked else 'nothing'} (score {ranked[0][1]:.2f}) among "
                           f"{len(sample)} in {s:.2f} s", required=False)


def _softprompt_check(settings: Settings, smoke: bool, meter) -> Check:
    name = "model: softprompt"
    try:
        if settings.softprompt_backend == "local":
            import torch

            from kgqa.models.softprompt_local import LocalSoftPrompt

            sp = LocalSoftPrompt(settings, meter=meter)
            head = f"local · {sp.name} with inputs_embeds"
            if not smoke:
                return Check(name, True, head, required=False)
            soft = torch.randn(1, sp.hidden_size) * 0.02
            reply, s = _timed(lambda: sp.generate(soft, SMOKE_PROMPT, max_tokens=4))
            return Check(name, True, f"{head} · hidden size {sp.hidden_size} · smoke (1 soft vector): "
                                     f"{_short(reply)} in {s:.2f} s", required=False)
        from kgqa.models.openai_backend import OpenAISoftPrompt

        probe = OpenAISoftPrompt(settings, meter=meter)
        head = f"{settings.softprompt_backend} · {probe.name} @ {probe.base_url} (needs --enable-prompt-embeds)"
        if not smoke:
            return Check(name, True, head, required=False)
        served, ping_s = _timed(probe.ping)
        ok = probe.name in served
        return Check(name, ok, f"{head} · reachable in {1000 * ping_s:.0f} ms"
                               + ("" if ok else f", but serves {', '.join(served) or 'nothing'}"), required=False)
    except KgqaError as e:
        return Check(name, False, str(e), required=False)


#: the smoke reads of the learned parts: a question, the passage that answers it and one that does not
SMOKE_QUESTION = "Where was Edwin Hubble born?"
SMOKE_PASSAGES = ("The Eiffel Tower is a wrought-iron lattice tower in Paris, completed in 1889.",
                  "Edwin Hubble was born on 20 November 1889 in Marshfield, Missouri, and studied law at Oxford.")


def _trained_on(meta: dict) -> str:
    """What a checkpoint's metadata says it was trained on, in a few words."""
    on = meta.get("trained_on")
    files = on.get("files") if isinstance(on, dict) else None
    n = meta.get("examples") or (on.get("questions") if isinstance(on, dict) else None)
    return (f"trained on {', '.join(files)}" if files else "trained") + (f" ({n:,} questions)" if n else "")


def _checkpoint_check(name: str, path, smoke: bool, fallback: str, load, unavailable, smoke_read) -> Check:
    """A learned part's row: its checkpoint ``path``, and with ``smoke`` it loaded (``load(path)``, which raises
    ``unavailable`` with one line) and one read (``smoke_read(model)`` → (ok, what it read)); a missing or
    unloadable checkpoint is a warning naming what answers instead (``fallback``)."""
    if not smoke:
        return Check(name, path.is_file(), f"{path}" + ("" if path.is_file() else f": missing; {fallback}"),
                     required=False)
    try:
        model, load_s = _timed(lambda: load(path))
    except unavailable as e:
        return Check(name, False, f"{e}; {fallback}", required=False)
    (ok, what), s = _timed(lambda: smoke_read(model))
    runtime = f" · runtime {model.runtime}" if getattr(model, "runtime", None) else ""
    return Check(name, bool(ok), f"{path} · {_trained_on(model.meta)}{runtime} · loaded in {load_s:.1f} s · smoke: {what} "
                                 f"in {1000 * s:.0f} ms", required=False)


def _span_reader_check(settings: Settings, smoke: bool) -> Check:
    """mKG-RAG's CPU reader (the learned span reader; the rule reader answers when it cannot load)."""
    from kgqa.models.runtime.backend import runtime_of
    from kgqa.models.heads.span_reader import SpanReaderUnavailable, default_checkpoint, load_span_reader

    def read(reader):
        guesses = reader.read(SMOKE_QUESTION, list(SMOKE_PASSAGES), top=1)
        got = guesses[0].text if guesses else None
        return bool(got) and "Marshfield" in got, f"{SMOKE_QUESTION!r} → {_short(got)}"

    return _checkpoint_check("model: span reader", default_checkpoint(settings), smoke,
                             "mkgrag's CPU reader falls back to the rule reader",
                             lambda p: load_span_reader(p, **runtime_of(settings)), SpanReaderUnavailable,
                             read)


def _ranker_check(settings: Settings, smoke: bool) -> Check:
    """mKG-RAG's passage ranker (the order of the context's chunks; the paper's order when it cannot load)."""
    from kgqa.models.runtime.backend import runtime_of
    from kgqa.models.heads.passage_ranker import PassageRankerUnavailable, default_checkpoint, load_passage_ranker

    def read(ranker):
        scores = ranker.score(SMOKE_QUESTION, list(SMOKE_PASSAGES))
        ok = bool(len(scores) == 2 and scores[1] > scores[0])
        return ok, (f"the answering passage {'first' if ok else 'NOT first'} ({scores[1]:.2f} against "
                    f"{scores[0]:.2f})")

    return _checkpoint_check("model: passage ranker", default_checkpoint(settings), smoke,
                             "mkgrag keeps the paper's chunk order",
                             lambda p: load_passage_ranker(p, **runtime_of(settings)),
                             PassageRankerUnavailable, read)


def _chain_reader_check(settings: Settings, smoke: bool) -> Check:
    """VisPath's and GraSP's chain reader: its checkpoint, and whether it was trained on the loaded KG's
    relations (else the rules answer, and `kgqa train paths` makes one)."""
    from kgqa.core.errors import InvalidInput
    from kgqa.core.graph import Graph
    from kgqa.core.kg import KG
    from kgqa.models.runtime.backend import runtime_of
    from kgqa.models.heads.chain_reader import catalogue_overlap, default_chain_reader_checkpoint, load_chain_reader

    name, path = "model: chain reader", default_chain_reader_checkpoint(settings)
    if not smoke:
        return Check(name, path.is_file(), f"{path}" + ("" if path.is_file() else ": missing; VisPath's path rules "
                                                        "answer (`kgqa train paths` trains one)"), required=False)
    try:
        with Graph(settings) as g:
            reader, load_s = _timed(lambda: load_chain_reader(path, KG(g, None), **runtime_of(settings)))
    except InvalidInput as e:
        return Check(name, False, f"{e}; until then VisPath's path rules answer", required=False)
    except KgqaError as e:
        return Check(name, False, f"not checked: {e}", required=False)
    held, trained = catalogue_overlap(reader.meta, reader.names)
    return Check(name, True, f"{path} · {reader.arch}-encoder on {reader.runtime} · trained on {trained} relations, {held} of them "
                             f"in the loaded KG ({len(reader.names)} in all) · loaded in {load_s:.1f} s",
                 required=False)


def role_checks(settings: Settings, smoke: bool = True) -> list[Check]:
    """One row per model role for ``kgqa doctor``."""
    from kgqa.models.accounting import Meter

    meter = Meter()
    return [_encoder_check(settings, smoke), _chat_check(settings, smoke, meter),
            _vision_check(settings, smoke, meter), _softprompt_check(settings, smoke, meter),
            _span_reader_check(settings, smoke), _ranker_check(settings, smoke), _chain_reader_check(settings, smoke)]
