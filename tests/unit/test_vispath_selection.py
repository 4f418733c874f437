"""VisPath's learned terminal selection (``-o selector=learned``, kgqa.methods.vispath.selection).

A user relies on: the ranker learns from question/answer pairs which of its features marks the answer and
ranks unseen questions by it; its weight file round-trips; a missing or broken weight file is one line and
the rules rank instead, recorded as a fallback; the features tell a gold path from its extension by an edge
whose phrase the question spends on the topic ("… the country where this mountain is *located*").
"""

from __future__ import annotations

import numpy as np
import pytest

from kgqa.core.errors import InvalidInput
from kgqa.core.kg import KG
from kgqa.core.question import question_phrases
from kgqa.core.result import Step
from kgqa.methods.vispath.options import VisPathOptions
from kgqa.methods.vispath.records import HopRecord, ReasoningPath, RelationSketch, StartCandidate, VisPathRun
from kgqa.methods.vispath.scoring import Scorer
from kgqa.methods.vispath.selection import FEATURES, QuestionView, Selector, fit, load_selector, loss
from tests.fakes.vispath import BagOfWordsEncoder, FakeGraph

U = FEATURES.index("uncovered")


def synthetic(n: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Questions of 4 retained paths each; the answer's path is the one that leaves nothing uncovered, the
    other features are noise (σ slightly favours a wrong path, as at scale)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        X = rng.normal(size=(4, len(FEATURES)))
        X[:, U] = rng.integers(1, 3, size=4)
        right = int(rng.integers(4))
        X[right, U] = 0
        X[(right + 1) % 4, 0] = X[:, 0].max() + 0.1
        out.append((X, np.arange(4) == right))
    return out


def test_the_ranker_learns_which_feature_marks_the_answer_and_ranks_unseen_questions_by_it():
    train, held = synthetic(60, 0), synthetic(40, 1)
    sel = fit(train)
    zero = Selector(np.zeros(len(FEATURES)), np.zeros(len(FEATURES)), np.ones(len(FEATURES)))
    assert loss(sel, train) < loss(zero, train)                       # training lowered the loss
    assert sel.weights[U] < 0 and abs(sel.weights[U]) == np.abs(sel.weights).max()
    top = [bool(y[int(np.argmax(sel.scores(X)))]) for X, y in held]
    assert np.mean(top) >= 0.95                                       # held-out questions ranked right


def test_nothing_to_learn_is_said_not_fitted():
    X = np.ones((3, len(FEATURES)))
    with pytest.raises(ValueError, match="nothing to learn"):
        fit([(X, np.array([False, False, False])), (X, np.array([True, True, True]))])


def test_weights_round_trip(tmp_path):
    sel = fit(synthetic(30, 2))
    sel.meta = {"trained_on": "synthetic"}
    sel.save(tmp_path / "sel.json")
    back = load_selector(tmp_path / "sel.json")
    X = synthetic(1, 3)[0][0]
    assert np.allclose(back.scores(X), sel.scores(X), atol=1e-4)
    assert back.meta["trained_on"] == "synthetic"


@pytest.mark.parametrize("content, why", [
    (None, "no selector weights"),
    ("{not json", "unreadable"),
    ('{"features": ["sigma"], "weights": [1], "mean": [0], "scale": [1]}', "other features"),
    ('{"features": %s, "weights": [1, 2], "mean": [0], "scale": [1]}', "wrong shape"),
    ('{"features": %s}', "numeric"),
])
def test_a_bad_weight_file_is_one_line_naming_it(tmp_path, content, why):
    f = tmp_path / "w.json"
    if content is not None:
        f.write_text(content.replace("%s", str(list(FEATURES)).replace("'", '"')), encoding="utf-8")
    with pytest.raises(InvalidInput) as e:
        load_selector(f)
    assert why in str(e.value) and str(f) in str(e.value) and "\n" not in str(e.value)


# ------------------------------------------------------------------ the features and the method's use of them
ENTITIES = {"M": "Mont Tall", "C": "Ruritania", "H": "Peak High", "X": "Distractor Valley"}
RELATIONS = {"P17": "country", "P610": "highest point", "P276": "location"}
Q = "What is the highest point in the country where this mountain is located?"


def path(*triples, sigma):
    edges = tuple(Step(h, ENTITIES[h], r, RELATIONS[r], t, ENTITIES[t], k, score=0.5)
                  for k, (h, r, t) in enumerate(triples, 1))
    return ReasoningPath("M", ENTITIES["M"], edges, sigma=sigma)


GOLD = path(("M", "P17", "C"), ("C", "P610", "H"), sigma=1.2)
LONGER = path(("M", "P17", "C"), ("C", "P610", "H"), ("H", "P276", "X"), sigma=1.25)


def sketch() -> RelationSketch:
    """Phrases of Q; a relation matches the phrase that says it (0.9) and "located" matches location (0.7)."""
    phrases = question_phrases(Q)
    cols = {r: k for k, r in enumerate(RELATIONS)}
    sims = np.zeros((len(phrases), len(cols)), dtype=np.float32)
    for a, (_, _, text) in enumerate(phrases):
        for r, k in cols.items():
            sims[a, k] = 0.9 if text == RELATIONS[r] else 0.7 if (text, r) == ("located", "P276") else 0.1
    return RelationSketch(intent="country; highest point; location", phrases=phrases, columns=cols, sims=sims,
                          depth=(3, 3))


def test_the_features_tell_the_gold_path_from_its_extension_by_the_topic_phrase():
    view = QuestionView(Q, True, sketch(), 0.45, 4)
    gold = dict(zip(FEATURES, view.features(GOLD, 0.0)))
    longer = dict(zip(FEATURES, view.features(LONGER, 0.0)))
    assert gold["edges"] == 2 and longer["edges"] == 3
    # hop 1 (country) is named nearer the mention ("this mountain") than hop 2; the extension's phrase,
    # "located", is the nearest of all, so the longer path names its hops out of that order
    assert gold["mention_order"] == 1.0 and longer["mention_order"] == 0.5
    assert gold["uncovered"] == 1 and longer["uncovered"] == 0      # the sketch's three phrases
    assert gold["depth_under"] == 1 and longer["depth_under"] == 0


def ranked(sc, paths):
    run = VisPathRun(question=Q, start=StartCandidate("M", ENTITIES["M"]))
    run.relation_sketch = sketch()
    run.hops = [HopRecord(hop=k, intent="", retained=[p for p in paths if len(p.edges) == k]) for k in (1, 2, 3)]
    return [p.end_id for p in sc.rank_endpoints(Q, True, run)], run


def scorer(**opts):
    enc = BagOfWordsEncoder()
    g = FakeGraph(ENTITIES, RELATIONS, [("M", "P17", "C"), ("C", "P610", "H"), ("H", "P276", "X")], encoder=enc)
    return Scorer(KG(g, enc), g, VisPathOptions(**opts))


def test_the_learned_ranker_decides_terminal_selection(tmp_path):
    w = np.zeros(len(FEATURES))
    w[FEATURES.index("mention_order")] = 1.0          # a ranker that reads only the order of the hops
    Selector(w, np.zeros(len(FEATURES)), np.ones(len(FEATURES))).save(tmp_path / "w.json")
    rules, _ = ranked(scorer(), [GOLD, LONGER])
    learned, run = ranked(scorer(selector="learned", selector_weights=str(tmp_path / "w.json")), [GOLD, LONGER])
    assert rules[0] == "X" and learned[0] == "H"       # σ prefers the extension; the ranker the gold path
    assert not run.fallbacks


def test_unreadable_weights_leave_the_rules_ranking_and_record_why(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text("{", encoding="utf-8")
    rules, _ = ranked(scorer(), [GOLD, LONGER])
    got, run = ranked(scorer(selector="learned", selector_weights=str(bad)), [GOLD, LONGER])
    assert got == rules
    assert [f.code for f in run.fallbacks] == ["checkpoint"] and str(bad) in run.fallbacks[0].message

