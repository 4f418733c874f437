"""The real local models: all-MiniLM-L6-v2, SmolLM2-135M-Instruct (chat and soft
prompt) and the reference-image grounder against entity images in the real Neo4j.

Each model loads once per session (session-scoped fixtures; the SmolLM2 GGUF is
converted once into the test data dir). No timing assertions: speed is in
bench/models.py.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from pydantic import BaseModel, Field

from kgqa.core.errors import BadModelReply

pytestmark = pytest.mark.slow

PREFIX = "QTESTMODELS_"


@pytest.fixture(scope="session")
def models(settings):
    from kgqa.models import build_models

    return build_models(settings)


@pytest.fixture(scope="session")
def chat(models):
    models.chat.model  # noqa: B018 - load (and convert on first use) once
    return models.chat


# -- encoder -------------------------------------------------------------------
def test_encoder_vectors_are_normalised_and_semantic(models):
    v = models.encoder.encode(["Eiffel Tower", "a wrought-iron tower in Paris", "banana bread recipe"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2])
    assert models.encoder.encode([]).shape == (0, 384)
    assert models.meter.costs()["encoder"].calls >= 1


# -- chat ----------------------------------------------------------------------
def test_generate_answers_a_simple_question(chat):
    assert "Paris" in chat.generate("Which city is the capital of France?", max_tokens=16)


def test_choose_prefers_the_likely_option(chat):
    opts = ["Paris", "Berlin", "London"]
    scores = chat.choose("What is the capital of France?", opts)
    assert len(scores) == 3 and all(s < 0 for s in scores)
    assert opts[int(np.argmax(scores))] == "Paris"
    per_tok = chat.choose("What is the capital of France?", opts, per_token=True)
    assert all(p >= s for p, s in zip(per_tok, scores))  # averaging over ≥1 tokens


class Mention(BaseModel):
    entity: str = Field(..., min_length=1, max_length=40)
    kind: str = Field(..., min_length=1, max_length=20)
    hops: int = Field(..., ge=1, le=3)


def test_generate_json_returns_a_valid_instance_and_is_metered(chat):
    before = chat.meter.costs().get("chat")
    m = chat.generate_json("Question: Where was Albert Einstein born?\nName the entity the question is about, "
                           "what kind of thing it is, and how many hops answer it.", Mention, max_tokens=64)
    assert isinstance(m, Mention) and m.entity.strip()
    after = chat.meter.costs()["chat"]
    assert after.calls > (before.calls if before else 0) and after.completion_tokens > 0


def test_gguf_converted_once_to_a_cached_hf_folder(settings, chat):
    from kgqa.models.gguf import hf_folder
    from kgqa.models.local_chat import LocalChat, load_local_llm

    folder = hf_folder(settings)
    assert (folder / "config.json").exists() and (folder / "model.safetensors").exists()
    assert LocalChat(settings).model is chat.model is load_local_llm(settings)[0]  # loaded once per process


def test_context_token_counts_are_the_llm_tokenizers(settings):
    """mKG-RAG's context budget counts SmolLM2's tokens with ``tokenizers`` (no transformers import): the
    counts of transformers' tokenizer of the same folder, on text with markup, accents and CJK."""
    from transformers import AutoTokenizer

    from kgqa.models.gguf import hf_folder, llm_token_counter

    count = llm_token_counter(settings)
    texts = ["[Flag of Japan] It became the official national flag by a law passed in 1999.", "",
             "- Café Ünïcödé → 東京 (≈ €1,200) <|im_start|>user", "  two  spaces\nand a line  "]
    hf = AutoTokenizer.from_pretrained(str(hf_folder(settings)))
    want = [len(ids) for ids in hf(texts, add_special_tokens=False)["input_ids"]]
    assert [count(t) for t in texts] == want and count.many(texts) == want
    assert want[0] > 10


def test_replay_cache_replays_the_local_model(settings, chat, tmp_path):
    from kgqa.models.accounting import Meter, ReplayCache
    from kgqa.models.local_chat import LocalChat

    meter = Meter()
    c = LocalChat(settings, meter=meter, cache=ReplayCache(tmp_path))
    first = c.generate("Name a colour.", max_tokens=6)
    assert c.generate("Name a colour.", max_tokens=6) == first
    assert meter.cache_hits == {"chat": 1} and meter.costs()["chat"].calls == 2


# -- soft prompt ---------------------------------------------------------------
def test_softprompt_gradients_reach_the_soft_prompt_only(models, chat):
    import torch

    sp = models.softprompt
    soft = (torch.randn(4, sp.hidden_size) * 0.02).requires_grad_(True)
    loss = sp.loss(soft, "Which country is the Eiffel Tower in?", "France")
    loss.backward()
    assert torch.isfinite(loss) and soft.grad is not None
    assert torch.isfinite(soft.grad).all() and soft.grad.abs().sum() > 0
    assert all(p.grad is None for p in chat.model.parameters())
    assert isinstance(sp.generate(soft, "Which country is the Eiffel Tower in?", max_tokens=8), str)
    with pytest.raises(ValueError, match="soft prompt must be"):
        sp.generate(torch.zeros(4, 7), "x")


# -- grounder against the real graph -------------------------------------------
# disjoint from the demo KG's pictures (data/demo), which may be loaded in the same database
REFS = ("camera", "coins", "clock", "immunohistochemistry", "stereo_motorcycle", "cell", "logo", "retina")


@pytest.fixture(scope="module")
def reference_images(graph, tmp_path_factory):
    from kgqa.models.grounder_eval import sample_images

    d = tmp_path_factory.mktemp("entity-images")
    rows = []
    for name, im in sample_images(REFS).items():
        p = d / f"{name}.png"
        im.save(p)
        rows.append({"id": PREFIX + name, "name": name.capitalize(), "sha": hashlib.sha256(p.read_bytes()).hexdigest(),
                     "path": str(p)})
    graph.driver.execute_query(
        "UNWIND $rows AS r MERGE (e:Entity {id: r.id}) SET e.name = r.name "
        "MERGE (i:Image {sha256: r.sha}) SET i.path = r.path MERGE (i)-[:DEPICTS]->(e)",
        {"rows": rows}, database_=graph.settings.neo4j_database)
    yield d
    graph.driver.execute_query(
        "MATCH (e:Entity) WHERE e.id STARTS WITH $p OPTIONAL MATCH (i:Image)-[:DEPICTS]->(e) DETACH DELETE e, i",
        {"p": PREFIX}, database_=graph.settings.neo4j_database)


@pytest.mark.parametrize("kind", ["crop", "rotate", "rotate90", "scale", "colour", "jpeg", "all"])
def test_grounder_recognises_perturbed_entity_images(settings, graph, chat, reference_images, kind, tmp_path):
    from kgqa.core.images import load_image
    from kgqa.models import build_models
    from kgqa.models.grounder_eval import perturbed, sample_images, write_jpeg

    vision = build_models(settings, graph).vision
    hits = []
    for i, (name, im) in enumerate(sample_images(REFS).items()):
        q = tmp_path / f"{kind}-{name}.jpg"
        write_jpeg(perturbed(im, kind, seed=i), q)
        ranked = vision.rank(load_image(q), 3)
        hits.append(ranked[0][0] == PREFIX + name)
        if i == 0 and hits[0]:  # recognize() names the same entity rank() puts first
            assert vision.recognize(load_image(q), "object") == name.capitalize()
    # every single perturbation: all found; all of them at once: at most one miss
    assert sum(hits) >= (len(REFS) - 1 if kind == "all" else len(REFS)), hits


def test_grounder_does_not_recognise_an_unknown_picture(settings, graph, reference_images, tmp_path):
    from kgqa.core.images import load_image
    from kgqa.models import build_models
    from kgqa.models.grounder_eval import sample_images

    q = tmp_path / "grass.jpg"
    sample_images(["grass"])["grass"].save(q)
    with pytest.raises(BadModelReply, match="no KG entity image matches grass.jpg"):
        build_models(settings, graph).vision.recognize(load_image(q), "plant")


def test_grounder_generate_json_mentions_the_recognised_entity(settings, graph, chat, reference_images, tmp_path):
    from kgqa.core.images import load_image
    from kgqa.models import build_models
    from kgqa.models.grounder_eval import perturbed, sample_images

    m = build_models(settings, graph)
    q = tmp_path / "camera.jpg"
    perturbed(sample_images(["camera"])["camera"], "crop", seed=3).save(q)
    seen = []
    real = m.chat.generate_json

    def spy(prompt, schema, **kw):
        seen.append(prompt)
        return real(prompt, schema, **kw)
    m.vision.chat.generate_json = spy
    out = m.vision.generate_json(load_image(q), "What is shown?", Mention, max_tokens=48)
    assert isinstance(out, Mention)
    assert seen[0].startswith("[image: a picture of Camera]")
