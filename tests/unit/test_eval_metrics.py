"""kgqa.app.eval metrics on hand-checked cases.

SBERT@0.3 uses the real all-MiniLM-L6-v2 (from the PyPI package, loaded once per session);
the cosines quoted in comments were measured with it and are far enough from 0.3 that the
verdicts are stable. The exact threshold boundary is checked with a fixed-vector encoder.
"""

from __future__ import annotations

import numpy as np
import pytest

from kgqa.app.eval.metrics import (
    SBERT_THRESHOLD,
    exact_match,
    gold_path_retained,
    normalize_answer,
    percentile,
    sbert_correct,
    sbert_cosines,
)
from kgqa.app.eval.report import summarize
from kgqa.app.eval.records import QuestionResult
from kgqa.core.result import PathEvidence, Step


@pytest.fixture(scope="session")
def encoder():
    from kgqa.models.encoder import get_encoder

    return get_encoder(threads=1)


def sbert_ok(encoder, prediction, gold):
    (c,) = sbert_cosines(encoder, [prediction], [gold])
    return sbert_correct(c), c


# --------------------------------------------------------------------------- SBERT@0.3
def test_threshold_is_the_papers():
    assert SBERT_THRESHOLD == 0.3


@pytest.mark.parametrize("prediction, gold", [
    ("USA", "United States"),                 # ≈0.89
    ("Roma", "Rome"),                         # ≈0.73, the Italian name
    ("automobile", "car"),                    # ≈0.86, a synonym
    ("The city of Rome", "Rome"),             # ≈0.88, a verbose answer
    ("Musk", "Elon Musk"),                    # ≈0.84
    ("rome", "Rome"),                         # case only: 1.0
])
def test_sbert_accepts_synonyms_aliases_and_verbose_answers(encoder, prediction, gold):
    ok, c = sbert_ok(encoder, prediction, gold)
    assert ok, c


@pytest.mark.parametrize("prediction, gold", [
    ("banana bread recipe", "Rome"),          # ≈0.02
    ("quantum chromodynamics", "Eiffel Tower"),  # ≈0.06
    ("asdfgh qwerty", "Paris"),               # ≈0.14
    ("the Furnace constellation", "Fornax"),  # ≈0.20: a translation MiniLM does not know
])
def test_sbert_rejects_unrelated_strings_below_threshold(encoder, prediction, gold):
    ok, c = sbert_ok(encoder, prediction, gold)
    assert not ok, c
    assert c < 0.3


def test_sbert_is_lenient_for_wrong_answers_of_the_same_kind(encoder):
    # The paper's metric, as defined, accepts a wrong capital for a capital (≈0.55);
    # exact match does not. Reported side by side for this reason.
    ok, c = sbert_ok(encoder, "Paris", "Rome")
    assert ok and c >= 0.3
    assert not exact_match("Paris", "Rome", ["Roma"])


def test_sbert_empty_or_missing_prediction_is_wrong_without_encoding(encoder):
    calls = []

    class Spy:
        def encode(self, texts):
            calls.append(list(texts))
            return encoder.encode(texts)

    cos = sbert_cosines(Spy(), [None, "", "   ", "Rome"], ["Rome", "Rome", "Rome", "Rome"])
    assert cos[:3] == [None, None, None]
    assert cos[3] == pytest.approx(1.0, abs=1e-5)
    assert calls == [["Rome", "Rome"]]  # only the non-empty prediction and its gold, one batch
    assert not sbert_correct(None)


def test_sbert_threshold_is_inclusive():
    class Fixed:
        """Unit vectors whose cosine with e0 is exactly the requested value."""

        def __init__(self, cos):
            self.cos = cos

        def encode(self, texts):
            a = np.array([self.cos, np.sqrt(1 - self.cos ** 2)], dtype=np.float64)
            return np.stack([a, np.array([1.0, 0.0])])

    assert sbert_correct(sbert_cosines(Fixed(0.3), ["x"], ["y"])[0])
    assert not sbert_correct(sbert_cosines(Fixed(0.2999), ["x"], ["y"])[0])


# --------------------------------------------------------------------------- exact match
@pytest.mark.parametrize("raw, norm", [
    ("The Eiffel Tower", "eiffel tower"),
    ("  São   Paulo ", "sao paulo"),
    ("Jørn Utzon", "jørn utzon"),             # ø is a letter, not an accented o
    ("Île-de-France", "ile de france"),
    ("an apple", "apple"),
    ("Washington, D.C.", "washington d c"),
    ("STRASSE", "strasse"),
    ("", ""),
    (None, ""),
])
def test_normalize_answer(raw, norm):
    assert normalize_answer(raw) == norm


@pytest.mark.parametrize("prediction, gold, aliases, expected", [
    ("rome", "Rome", [], True),               # case
    ("the Louvre", "Louvre", [], True),       # article
    ("Bucuresti", "Bucharest", ["București"], True),   # alias, accents
    ("Brasilia", "Brasília", [], True),       # accents on the gold side
    ("Washington DC", "Washington, D.C.", [], False),  # "d c" vs "dc": normalisation does not merge letters
    ("Washington DC", "Washington, D.C.", ["DC", "Washington DC"], True),
    ("NY", "New York", ["New York State", "NY"], True),
    ("New York City", "New York", ["NY"], False),  # a different entity
    ("Roma!", "Rome", ["Roma"], True),        # punctuation
    ("", "Rome", ["Roma"], False),            # empty prediction
    (None, "Rome", [], False),                # abstention
    ("The", "The", [], False),                # only an article: nothing left to compare
])
def test_exact_match(prediction, gold, aliases, expected):
    assert exact_match(prediction, gold, aliases) is expected


# --------------------------------------------------------------------------- paths, percentiles
def _path(*triples):
    return PathEvidence(steps=[Step(h, h, r, r, t, t, hop=i) for i, (h, r, t) in enumerate(triples, 1)])


def test_gold_path_recall_compares_head_relation_tail_triples():
    gold = [["Q243", "P17", "Q142"], ["Q142", "P36", "Q90"]]
    right = _path(("Q243", "P17", "Q142"), ("Q142", "P36", "Q90"))
    other_rel = _path(("Q243", "P131", "Q142"), ("Q142", "P36", "Q90"))
    prefix = _path(("Q243", "P17", "Q142"))
    longer = _path(("Q243", "P17", "Q142"), ("Q142", "P36", "Q90"), ("Q90", "P190", "Q220"))
    assert gold_path_retained(gold, [other_rel, right])
    assert not gold_path_retained(gold, [other_rel, prefix, longer])
    assert not gold_path_retained(gold, [])
    # dicts (an Answer read back from JSON) work too
    assert gold_path_retained(gold, [{"steps": [{"head_id": "Q243", "relation_id": "P17", "tail_id": "Q142"},
                                                {"head_id": "Q142", "relation_id": "P36", "tail_id": "Q90"}]}])


def test_percentiles():
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)


# --------------------------------------------------------------------------- summary
def test_summary_skips_metrics_without_gold_fields_and_counts_failures():
    rs = [
        QuestionResult(id="a", hops=1, question="", gold="", sbert=True, exact_match=True, hits1=True,
                       start_entity=True, gold_path=True, seconds=1.0,
                       cost={"chat": {"calls": 2, "prompt_tokens": 100, "completion_tokens": 10, "seconds": 0.5}}),
        QuestionResult(id="b", hops=1, question="", gold="", sbert=False, exact_match=False, hits1=None,
                       start_entity=None, gold_path=None, abstained=True, seconds=3.0,
                       cost={"chat": {"calls": 4, "prompt_tokens": 300, "completion_tokens": 30, "seconds": 1.5},
                             "vision": {"calls": 1, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 2.0}}),
        QuestionResult(id="c", hops=2, question="", gold="", error="RuntimeError: boom", sbert=False,
                       exact_match=False, hits1=False, start_entity=None, gold_path=False, seconds=0.1),
    ]
    s = summarize(rs)
    assert (s["n"], s["failed"], s["abstained"]) == (3, 1, 1)
    assert s["sbert@0.3"] == {"correct": 1, "n": 3, "accuracy": pytest.approx(1 / 3)}
    assert s["hits@1"] == {"correct": 1, "n": 2, "accuracy": 0.5}        # b has no answer_id
    assert s["start_entity"] == {"correct": 1, "n": 1, "accuracy": 1.0}  # only a has a topic
    assert s["gold_path"]["n"] == 2
    # latency and cost over the questions that ran (a, b); a role missing in one counts 0 there
    assert s["latency_s"]["p50"] == pytest.approx(2.0)
    assert s["cost_per_question"]["chat"]["calls"] == pytest.approx(3.0)
    assert s["cost_per_question"]["chat"]["prompt_tokens"] == pytest.approx(200.0)
    assert s["cost_per_question"]["vision"]["calls"] == pytest.approx(0.5)
    empty = summarize([])
    assert empty["sbert@0.3"]["accuracy"] is None and empty["latency_s"]["p95"] is None
