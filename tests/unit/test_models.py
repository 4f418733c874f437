"""Logic around the model backends: JSON validation, retry, fallback, accounting, replay cache.

``QueueChat`` is a test model: its raw replies come from a queue, and it runs the
same validation/retry code (``kgqa.models.structured``) and metering as the real
backends, so these tests exercise that logic without loading a model.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from pydantic import BaseModel, Field

from kgqa.core.errors import BadModelReply, InvalidInput, ModelUnavailable
from kgqa.models.accounting import Meter, ReplayCache
from kgqa.models.structured import parse, with_retries


class Sketch(BaseModel):
    sketch: list[str] = Field(..., min_length=1, max_length=4)
    depth: int = Field(..., ge=1, le=4)


class QueueChat:
    """A ChatModel whose replies are scripted (test model, not a backend)."""

    name = "queue"

    def __init__(self, replies, retries=2, meter=None):
        self.replies = list(replies)
        self.prompts: list[str] = []
        self.retries = retries
        self.meter = meter or Meter()

    def generate(self, prompt, *, system=None, max_tokens=256, temperature=0.0):
        self.prompts.append(prompt)
        with self.meter.call("chat") as rec:
            rec.prompt_tokens, rec.completion_tokens = len(prompt.split()), 3
            return self.replies.pop(0)

    def generate_json(self, prompt, schema, *, system=None, max_tokens=256):
        return with_retries(lambda i: self.generate(prompt), schema, retries=self.retries, who="queue")

    def choose(self, prompt, options):
        return [0.0 for _ in options]


# -- validation ----------------------------------------------------------------
def test_parse_accepts_fenced_and_embedded_json():
    assert parse('```json\n{"sketch": ["born in"], "depth": 1}\n```', Sketch).depth == 1
    assert parse('Sure! {"sketch": ["a", "b"], "depth": 2} Hope this helps.', Sketch).sketch == ["a", "b"]


@pytest.mark.parametrize("text,reason", [
    ("no json here", "no JSON object"),
    ('{"sketch": [], "depth": 1}', "sketch"),
    ('{"sketch": ["a"], "depth": 9}', "depth"),
    ('{"sketch": ["a"], "depth": 1', "Invalid JSON"),
])
def test_parse_rejects_with_a_short_reason(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse(text, Sketch)


# -- retry and fallback --------------------------------------------------------
def test_malformed_reply_is_retried_then_valid_reply_returned():
    chat = QueueChat(["{oops", '{"sketch": ["a"], "depth": 7}', '{"sketch": ["a"], "depth": 2}'])
    assert chat.generate_json("q", Sketch) == Sketch(sketch=["a"], depth=2)
    assert len(chat.prompts) == 3


def test_retries_are_bounded_then_bad_model_reply_lets_caller_fall_back():
    chat = QueueChat(["bad"] * 10, retries=2)
    with pytest.raises(BadModelReply) as e:
        chat.generate_json("q", Sketch)
    assert len(chat.prompts) == 3  # 1 try + 2 retries, no more
    assert "no valid Sketch JSON after 3 tries" in str(e.value) and "\n" not in str(e.value)
    assert e.value.code == "schema" and not isinstance(e.value, ModelUnavailable)  # not 'unreachable'

    def caller():  # what an engine does: its documented fallback
        try:
            return chat.generate_json("q", Sketch).depth
        except BadModelReply:
            return 1
    assert caller() == 1


# -- accounting ----------------------------------------------------------------
def test_meter_counts_per_question_and_total():
    meter = Meter()
    chat = QueueChat(['{"sketch": ["a"], "depth": 1}'] * 3, meter=meter)
    with meter.question("q1"):
        chat.generate("one two three")
        meter.record("encoder", prompt_tokens=4, seconds=0.5)
    with meter.question("q2"):
        chat.generate("four five")
    chat.generate("outside any question")
    q1, q2, total = meter.costs("q1"), meter.costs("q2"), meter.costs()
    assert (q1["chat"].calls, q1["chat"].prompt_tokens, q1["chat"].completion_tokens) == (1, 3, 3)
    assert q1["encoder"].prompt_tokens == 4 and q1["encoder"].seconds == 0.5
    assert set(q2) == {"chat"} and q2["chat"].prompt_tokens == 2
    assert total["chat"].calls == 3 and total["chat"].prompt_tokens == 3 + 2 + 3
    assert meter.questions() == ["q1", "q2"]
    # costs() returns copies: changing them does not change the meter
    q1["chat"].calls = 99
    assert meter.costs("q1")["chat"].calls == 1


def test_meter_keeps_only_recent_questions_but_whole_totals():
    """A long-running server answers without end: per-question costs must not grow with it."""
    meter = Meter(max_questions=3)
    for i in range(10):
        with meter.question(f"q{i}"):
            meter.record("chat", completion_tokens=1)
    assert meter.questions() == ["q7", "q8", "q9"]
    assert meter.costs("q9")["chat"].completion_tokens == 1 and meter.costs("q0") == {}
    assert meter.costs()["chat"].calls == 10


def test_meter_records_a_call_that_raised():
    meter = Meter()
    with pytest.raises(RuntimeError):
        with meter.question("q"), meter.call("vision"):
            raise RuntimeError("backend failed")
    assert meter.costs("q")["vision"].calls == 1


def test_meter_keeps_questions_apart_across_threads():
    meter = Meter()

    def work(qid, n):
        with meter.question(qid):
            for _ in range(n):
                meter.record("chat", prompt_tokens=1)
    threads = [threading.Thread(target=work, args=(f"q{i}", i + 1)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [meter.costs(f"q{i}")["chat"].calls for i in range(4)] == [1, 2, 3, 4]
    assert meter.costs()["chat"].calls == 10


# -- replay cache --------------------------------------------------------------
def test_replay_cache_key_is_deterministic_and_covers_every_part():
    k = ReplayCache.key("local", "m", "prompt", "abc", {"max_tokens": 5, "t": 0})
    assert k == ReplayCache.key("local", "m", "prompt", "abc", {"t": 0, "max_tokens": 5})  # param order
    others = [ReplayCache.key("openai", "m", "prompt", "abc", {"max_tokens": 5, "t": 0}),
              ReplayCache.key("local", "m2", "prompt", "abc", {"max_tokens": 5, "t": 0}),
              ReplayCache.key("local", "m", "prompt!", "abc", {"max_tokens": 5, "t": 0}),
              ReplayCache.key("local", "m", "prompt", "abd", {"max_tokens": 5, "t": 0}),
              ReplayCache.key("local", "m", "prompt", "abc", {"max_tokens": 6, "t": 0})]
    assert k not in others and len(set(others)) == len(others)


def test_replay_cache_round_trip_and_damaged_entry_is_a_miss(tmp_path):
    cache = ReplayCache(tmp_path)
    key = ReplayCache.key("local", "m", "p")
    assert cache.get(key) is None
    cache.put(key, {"text": "Paris", "prompt_tokens": 3})
    assert ReplayCache(tmp_path).get(key) == {"text": "Paris", "prompt_tokens": 3}  # survives the process
    assert len(cache) == 1 and not list(tmp_path.rglob(".tmp-*"))
    (tmp_path / key[:2] / f"{key}.json").write_text("{trunc")
    assert cache.get(key) is None


# -- grounder's textual part ---------------------------------------------------
def test_grounder_generate_json_replaces_the_image_by_what_it_recognised(tmp_path):
    from kgqa.core.config import Settings
    from kgqa.models.grounder import ReferenceImageGrounder

    chat = QueueChat(['{"sketch": ["located in"], "depth": 1}', '{"sketch": ["x"], "depth": 1}'])
    g = ReferenceImageGrounder(Settings(data_dir=tmp_path), chat=chat, references=[])
    g.recognize = lambda image, hint="": "Eiffel Tower"
    assert g.generate_json(object(), "Where is it?", Sketch).sketch == ["located in"]
    assert chat.prompts[0] == "[image: a picture of Eiffel Tower]\nWhere is it?"

    def unrecognised(image, hint=""):
        raise BadModelReply("no match", code="declined")
    g.recognize = unrecognised
    g.generate_json(object(), "Where is it?", Sketch)
    assert chat.prompts[1].startswith("[image: not recognised]")


def test_grounder_without_reference_images_declines(tmp_path, png_image):
    from kgqa.core.config import Settings
    from kgqa.models.grounder import ReferenceImageGrounder

    g = ReferenceImageGrounder(Settings(data_dir=tmp_path), references=[])
    with pytest.raises(BadModelReply, match="no entity images"):
        g.recognize(png_image, "tower")
    with pytest.raises(ModelUnavailable, match="no graph"):
        ReferenceImageGrounder(Settings(data_dir=tmp_path)).rank(png_image)


@pytest.fixture()
def png_image(tmp_path):
    from PIL import Image

    from kgqa.core.images import load_image

    p = tmp_path / "q.png"
    Image.new("RGB", (40, 30), (0, 128, 255)).save(p)
    return load_image(p)


# -- bad input -----------------------------------------------------------------
def test_bad_image_file_is_one_line_invalid_input(tmp_path):
    from kgqa.core.images import load_image

    bad = tmp_path / "photo.jpg"
    bad.write_bytes(b"\xff\xd8\xff\xe0 this is not really a jpeg")
    with pytest.raises(InvalidInput) as e:
        load_image(bad)
    assert str(bad) in str(e.value) and "\n" not in str(e.value)


def test_grounder_rejects_undecodable_image_bytes_with_invalid_input(tmp_path, png_image):
    from dataclasses import replace

    from kgqa.core.config import Settings
    from kgqa.models.grounder import Reference, ReferenceImageGrounder

    ref = Reference("Q1", "one", "0" * 64, png_image.path)
    g = ReferenceImageGrounder(Settings(data_dir=tmp_path), references=[ref])
    broken = replace(png_image, data=png_image.data[:40], sha256="f" * 64)
    with pytest.raises(InvalidInput) as e:
        g.rank(broken)
    assert str(png_image.path) in str(e.value) and "\n" not in str(e.value)


# -- laziness ------------------------------------------------------------------
def test_build_models_loads_nothing(tmp_path):
    code = ("import sys; from kgqa.core.config import Settings; from kgqa.models import build_models; "
            f"m = build_models(Settings(data_dir={str(tmp_path)!r})); "
            "heavy = [x for x in ('torch', 'transformers', 'sentence_transformers', 'outlines', 'openai') "
            "if x in sys.modules]; "
            "print(type(m.chat).__name__, type(m.vision).__name__, type(m.softprompt).__name__, heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["LocalChat", "ReferenceImageGrounder", "LocalSoftPrompt", "[]"]
    assert not (tmp_path / "models").exists()


def test_build_models_picks_the_openai_backends_from_settings(tmp_path):
    from kgqa.core.config import Settings
    from kgqa.models import build_models

    m = build_models(Settings(data_dir=tmp_path, chat_backend="vllm", vision_backend="openai",
                              softprompt_backend="openai", openai_base_url="http://127.0.0.1:9/v1",
                              vision_base_url="http://127.0.0.1:10/v1"))
    assert type(m.chat).__name__ == "OpenAIChat" and m.chat.base_url == "http://127.0.0.1:9/v1"
    assert type(m.vision).__name__ == "OpenAIVision" and m.vision.base_url == "http://127.0.0.1:10/v1"
    assert type(m.softprompt).__name__ == "OpenAISoftPrompt"
    assert m.chat.meter is m.meter and m.vision.meter is m.meter
    per_role = build_models(Settings(data_dir=tmp_path, chat_backend="openai", openai_base_url="http://a:1/v1",
                                     chat_base_url="http://llm:8000/v1"))
    assert per_role.chat.base_url == "http://llm:8000/v1"  # docker/compose.yaml sets KGQA_CHAT_BASE_URL


def test_grounder_leaves_out_an_unreadable_reference_image(tmp_path, png_image):
    from kgqa.core.config import Settings
    from kgqa.models.grounder import Reference, ReferenceImageGrounder

    refs = [Reference("Q1", "gone", "1" * 64, tmp_path / "missing.jpg"),
            Reference("Q2", "here", png_image.sha256, png_image.path)]
    g = ReferenceImageGrounder(Settings(data_dir=tmp_path), references=refs)
    assert [e for e, _ in g.rank(png_image, 5)] == ["Q2"]
    assert len(g.skipped) == 1 and "missing.jpg" in g.skipped[0]


def test_decoding_schema_keeps_placeholders_out_of_free_text():
    import re

    from kgqa.models.structured import MAX_BOUNDED_LENGTH, decoding_schema

    class Reply(BaseModel):
        head: str = Field(..., min_length=1, max_length=20)
        statement: str = Field(..., max_length=1000)
        kind: str = Field(..., pattern=r"^[a-z]+$")
        names: list[str] = Field(default_factory=list)

    js = decoding_schema(Reply.model_json_schema())
    head = re.compile(js["properties"]["head"]["pattern"])
    assert head.match("Eiffel Tower") and head.match("x" * 20) and not head.match("x" * 21)
    for bad in ("<noun>", "...", "…", " space", 'say "hi"', "a\nb", ""):
        assert not head.match(bad), bad
    statement = js["properties"]["statement"]["pattern"]
    assert MAX_BOUNDED_LENGTH < 1000 and statement.endswith("{0,}$")  # long limits: left to pydantic
    assert js["properties"]["kind"]["pattern"] == r"^[a-z]+$"          # the caller's own pattern is kept
    assert re.compile(js["properties"]["names"]["items"]["pattern"]).match("Paris")
    assert Reply.model_json_schema()["properties"]["head"]["maxLength"] == 20  # the original is untouched


def test_grounder_ranks_an_image_once(tmp_path, png_image):
    from kgqa.core.config import Settings
    from kgqa.models.grounder import Reference, ReferenceImageGrounder

    g = ReferenceImageGrounder(Settings(data_dir=tmp_path), references=[
        Reference("Q2", "here", png_image.sha256, png_image.path)])
    calls = []
    real = g._rank_all
    g._rank_all = lambda image: calls.append(image.sha256) or real(image)
    assert g.rank(png_image, 1) == g.rank(png_image, 1)
    assert len(calls) == 1 and g.meter.costs()["vision"].calls == 2  # still counted per call
