"""VisPath on the real Neo4j with the real SBERT encoder and the real reference-image grounder.

KG: tests/fixtures/vispath_kg (Wikidata5M format, real facts, skimage photographs), loaded
with the project's loader and deleted by id afterwards.

Where SmolLM2-135M would make an outcome a coin toss, the LLM's part is scripted
(answers given per schema, or a BadModelReply as after bounded retries) and the
deterministic parts run for real: grounding by image, vector retrieval, graph-aware
validation, Eq. 5 edge scoring, Eq. 8 chain scoring, the stop rule, the fallbacks and
the trace. One test at the end runs the whole method with the real SmolLM2 through the
CLI and asserts what any run must satisfy.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from kgqa.core.errors import BadModelReply
from tests.conftest import assert_one_line_error, make_vispath, run_kgqa

pytestmark = pytest.mark.integration

KG = Path(__file__).resolve().parent.parent / "fixtures" / "vispath_kg"
ROCKET = KG / "photos" / "rocket_photo.jpg"
MOON = KG / "photos" / "moon_photo.jpg"
FACTS = {tuple(ln.split("\t")) for ln in (KG / "wikidata5m_transductive_train.txt").read_text().splitlines() if ln}

Q_2HOP = "Who founded the company that manufactures the rocket shown in the image?"
Q_3HOP = "Where was the founder of the company that manufactures the rocket shown in the image born?"
Q_COUNTRY = "Which country is the rocket shown in the image from?"
Q_MOON = "Around which star does the body that the object in the image orbits revolve?"


@pytest.fixture(scope="module")
def models(settings, kg):
    from kgqa.models import build_models

    return build_models(settings, kg)


class Script:
    """The LLM's part, scripted per schema (value, list consumed in order, callable, or None = unavailable)."""

    name = "scripted"

    def __init__(self, grounder=None, **scripts):
        self.scripts = scripts
        self.grounder = grounder
        self.seen: list[str] = []

    def generate_json(self, *args, **kw):
        prompt, schema = (args[1], args[2]) if len(args) == 3 else (args[0], args[1])
        self.seen.append(schema.__name__)
        s = self.scripts.get(schema.__name__)
        if isinstance(s, list):
            s = s.pop(0) if s else None
        if callable(s):
            s = s(prompt)
        if s is None:
            raise BadModelReply(f"scripted: no {schema.__name__}")
        return schema.model_validate(s)

    def recognize(self, image, hint):
        return self.grounder.recognize(image, hint)


def _oracle(prompt: str):
    """A competent judge, scripted: answerable iff an evidence path ends with a relation the question names.

    The evidence here is the verbalised paths (the Eq. 9 fallback), "A → r → B; C → r → D".
    """
    q = re.search(r"Question about the image: (.*)", prompt).group(1).lower()
    ev = re.search(r"Evidence: (.*)", prompt).group(1)
    for path in ev.split("; "):
        parts = path.split(" → ")
        if len(parts) >= 3 and parts[-2].lower().split()[0] in q:
            return {"answerable": True, "answer": parts[-1]}
    return {"answerable": False, "answer": ""}


def _engine(kg, models, script, **opts):
    from kgqa.methods.vispath.options import VisPathOptions

    return make_vispath(kg, models.encoder, script, script, VisPathOptions(**opts))


def _image(path):
    from kgqa.core.images import load_image

    return load_image(path)


def _rels(path) -> list[str]:
    return [e.relation_id for e in path.edges]


# --------------------------------------------------------------------------- IV-A grounding
def test_grounder_recognises_the_rocket_photo_and_retrieval_finds_both_look_alikes(kg, models):
    from kgqa.methods.vispath.records import VisPathRun

    o = models.vision.recognize(_image(ROCKET), "rocket")
    assert o in ("Falcon 9", "Falcon 9 Full Thrust")          # one photograph depicts both
    script = Script(grounder=models.vision,
                    ReferringExpression={"expression": "the rocket shown in the image", "head": "rocket"})
    vp = _engine(kg, models, script)
    run = VisPathRun(Q_2HOP)
    cands = vp.rank_start_candidates(Q_2HOP, _image(ROCKET), run)
    ids = [c.id for c in cands]
    assert "Q741925" in ids[:3] and "Q23800604" in ids[:3]
    assert any("vector-index order" in f.message for f in run.fallbacks)  # no ranking scripted → index order


def test_graph_aware_validation_replaces_the_look_alike_by_falcon_9(kg, models):
    from kgqa.methods.vispath.records import StartCandidate, VisPathRun

    vp = _engine(kg, models, Script())
    look_alike_first = [StartCandidate("Q23800604", "Falcon 9 Full Thrust"), StartCandidate("Q741925", "Falcon 9")]
    start, replaced = vp.graph_aware_validation(Q_2HOP, look_alike_first, VisPathRun(Q_2HOP))
    assert start.id == "Q741925" and replaced
    assert [c.id for c in look_alike_first] == ["Q741925", "Q23800604"]     # updated ranked list
    assert look_alike_first[0].best_relation == "manufacturer"
    assert look_alike_first[0].s_Q - look_alike_first[1].s_Q > 0.05
    # the right entity ranked first is kept
    right_first = [StartCandidate("Q741925", "Falcon 9"), StartCandidate("Q23800604", "Falcon 9 Full Thrust")]
    start, replaced = vp.graph_aware_validation(Q_2HOP, right_first, VisPathRun(Q_2HOP))
    assert start.id == "Q741925" and not replaced
    # ablation: the visual top-1 stays, look-alike or not
    vp = _engine(kg, models, Script(), no_graph_validation=True)
    look_alike_first = [StartCandidate("Q23800604", "Falcon 9 Full Thrust"), StartCandidate("Q741925", "Falcon 9")]
    start, _ = vp.graph_aware_validation(Q_2HOP, look_alike_first, VisPathRun(Q_2HOP))
    assert start.id == "Q23800604"


def test_moon_photo_grounds_to_the_moon(kg, models):
    script = Script(grounder=models.vision,
                    ReferringExpression={"expression": "the object in the image", "head": "object"},
                    CandidateRanking={"ranked": ["Moon"]},
                    QuestionSketch={"sketch": ["parent astronomical body", "parent astronomical body"], "depth": 2},
                    Answerability=_oracle)
    run = _engine(kg, models, script).run(Q_MOON, _image(MOON))
    assert run.start.id == "Q405"
    assert run.answer_id == "Q525"                                # Sun, via Earth
    assert _rels(run.selected_paths[0]) == ["P397", "P397"]


# --------------------------------------------------------------------------- IV-B/C/D multi-hop
def _terminal_script(models, sketch, depth):
    # ranking given; no intent, no chain choice, no evidence, no verdict: every later LLM step falls back
    return Script(grounder=models.vision,
                  ReferringExpression={"expression": "the rocket shown in the image", "head": "rocket"},
                  CandidateRanking={"ranked": ["Falcon 9 Full Thrust", "Falcon 9"]},  # look-alike first
                  QuestionSketch={"sketch": sketch, "depth": depth})


def test_two_hop_answer_follows_manufacturer_then_founder(kg, models):
    # the paper's Eq. 3 (delta_grounding = 0) moves the start off the look-alike the grounder named
    script = _terminal_script(models, ["manufacturer", "founded by"], 2)
    run = _engine(kg, models, script, delta_grounding=0.0).run(Q_2HOP, _image(ROCKET))
    assert run.start.id == "Q741925" and run.start_replaced
    assert run.answer == "Elon Musk" and run.answer_id == "Q317521"
    assert _rels(run.selected_paths[0]) == ["P176", "P112"]
    assert run.stop_reason.startswith("terminal selection") and run.sufficient is False


def test_default_grounding_margin_keeps_the_entity_the_grounder_named_firmly(kg, models):
    # the grounder names "Falcon 9 Full Thrust" exactly (retrieval 1.0); Falcon 9 fits the question's relations
    # better by about 0.46 but was retrieved at about 0.6: with delta_grounding = 1 (the default, chosen on
    # more-dev) the margin is 0.2 + 1·0.4, so the start stays the one the picture supports
    run = _engine(kg, models, _terminal_script(models, ["manufacturer", "founded by"], 2)).run(Q_2HOP, _image(ROCKET))
    assert run.start.id == "Q23800604" and not run.start_replaced
    first, rival = run.start_candidates[0], run.start_candidates[1]
    assert rival.s_Q - first.s_Q > 0.2 and first.retrieval - rival.retrieval > 0.3


def test_three_hop_answer_reaches_the_birthplace(kg, models):
    run = _engine(kg, models, _terminal_script(models, ["manufacturer", "founded by", "place of birth"], 3),
                  delta_grounding=0.0).run(Q_3HOP, _image(ROCKET))
    assert run.answer_id == "Q3926"                                 # Pretoria
    assert _rels(run.selected_paths[0]) == ["P176", "P112", "P19"]
    assert len(run.hops) == 3


def test_every_selected_step_is_a_real_fact(kg, models):
    run = _engine(kg, models, _terminal_script(models, ["manufacturer", "founded by", "place of birth"], 3),
                  delta_grounding=0.0).run(Q_3HOP, _image(ROCKET))
    for h in run.hops:
        for p in h.retained:
            assert p.start_id == run.start.id
            for e in p.edges:
                assert (e.head_id, e.relation_id, e.tail_id) in FACTS


def test_incomplete_kg_country_is_reached_through_the_manufacturer(kg, models):
    # The KG has no "country of origin" fact for the rocket; the sketch predicts one hop, the judge
    # finds hop 1 insufficient, so the search goes on and hop 2 reaches the country through SpaceX.
    script = Script(grounder=models.vision,
                    ReferringExpression={"expression": "the rocket shown in the image", "head": "rocket"},
                    CandidateRanking={"ranked": ["Falcon 9"]},
                    QuestionSketch={"sketch": ["country of origin"], "depth": 1},
                    HopIntent=[{"intent": "country of origin of the rocket"}, {"intent": "country"}],
                    Answerability=_oracle)
    run = _engine(kg, models, script).run(Q_COUNTRY, _image(ROCKET))
    assert ("Q741925", "P495", "Q30") not in FACTS
    assert run.hops[0].answerable is False and run.hops[1].answerable is True
    assert run.answer_id == "Q30"
    assert run.stop_reason.startswith("stop rule at hop 2")
    assert _rels(run.selected_paths[0])[-1] == "P17" and run.selected_paths[0].edges[0].tail_id == "Q193701"


def test_stop_rule_waits_for_the_predicted_depth(kg, models):
    # judged answerable at every hop: stops exactly at D̂ = 2, not earlier, not later
    script = Script(grounder=models.vision,
                    ReferringExpression={"expression": "the rocket shown in the image", "head": "rocket"},
                    CandidateRanking={"ranked": ["Falcon 9"]},
                    QuestionSketch={"sketch": ["manufacturer", "founded by"], "depth": 2},
                    Answerability=lambda prompt: {"answerable": True,
                                                  "answer": prompt.split("Evidence: ")[1].split(";")[0]
                                                  .split(" → ")[-1].strip()})
    run = _engine(kg, models, script).run(Q_2HOP, _image(ROCKET))
    assert len(run.hops) == 2 and run.stop_reason.startswith("stop rule at hop 2")
    assert run.answer_id == "Q317521" and run.sufficient is True


def test_all_model_steps_failing_still_answers_from_the_graph(kg, models):
    script = Script(grounder=models.vision)                          # every JSON call: BadModelReply
    run = _engine(kg, models, script).run(Q_2HOP, _image(ROCKET))
    assert run.start is not None and run.start.id in ("Q741925", "Q23800604")
    ends = {p.end_id for h in run.hops for p in h.retained}
    assert run.answer_id in ends and run.sufficient is False
    assert any("question analysis" in f.message for f in run.fallbacks)


def test_text_only_question_and_given_entity(kg, models):
    script = Script(ReferringExpression={"expression": "Elon Musk", "head": "person"},
                    CandidateRanking={"ranked": ["Elon Musk"]},
                    QuestionSketch={"sketch": ["place of birth"], "depth": 1},
                    Answerability=_oracle)
    run = _engine(kg, models, script).run("What is the place of birth of Elon Musk?", None)
    assert run.start.id == "Q317521" and run.answer_id == "Q3926"
    script = Script(QuestionSketch={"sketch": ["place of birth"], "depth": 1}, Answerability=_oracle)
    run = _engine(kg, models, script).run("What is the place of birth of this person?", None, entity_id="Q317521")
    assert run.answer_id == "Q3926" and "ReferringExpression" not in script.seen


def test_one_engine_answers_full_and_incomplete_kg_queries_at_once_as_it_does_alone(kg, models):
    """All state of a question lives in its run: one VisPath answering a full-KG and an incomplete-KG
    (--drop-edges) query from several threads at once gives each the answer, evidence and fallbacks it
    gives alone. Hiding 3 of Falcon 9's 4 facts with seed 2 takes both edges to SpaceX, so the answers
    differ and a leak of one query's hidden facts into the other shows."""
    import threading
    from concurrent.futures import ThreadPoolExecutor
    from dataclasses import asdict

    from kgqa.core.method import Query

    vp = _engine(kg, models, Script())                              # every model step falls back: graph only
    queries = [Query(Q_2HOP, entity_id="Q741925"), Query(Q_2HOP, entity_id="Q741925", drop_edges=0.75, seed=2)]

    def result(query):
        d = asdict(vp.answer(query))
        d["details"].pop("timings")
        return d

    alone = [result(q) for q in queries]
    assert alone[0]["answer_id"] == "Q317521"                       # Elon Musk, via manufacturer SpaceX
    assert alone[1]["answer_id"] != "Q317521" and alone[1]["evidence"] != alone[0]["evidence"]
    assert len(kg.read("vispath_frontier_edges_all", frontier=["Q741925"], hidden=[])) == 3   # nothing deleted
    n = 8
    start = threading.Barrier(n)

    def at_once(k):
        start.wait(timeout=60)
        return result(queries[k % 2])

    with ThreadPoolExecutor(n) as pool:
        together = list(pool.map(at_once, range(n)))
    for k, got in enumerate(together):
        assert got == alone[k % 2], f"thread {k} (drop_edges={queries[k % 2].drop_edges})"


@pytest.mark.parametrize("w", [0.0, 0.5, 1.0])
def test_first_cut_expansion_matches_exact_scoring_on_the_fixture(kg, models, w):
    """The Cypher first cut keeps what exact Eq. 5 keeps. At w = 1 (relation first) the two break ties
    within one relation differently (the stored tail-name cosine vs SBERT(r ‖ e_t)): the relations agree."""
    vp = _engine(kg, models, Script(), edge_relation_weight=w)
    for intent in ("manufacturer", "founded by", "place of birth", "country"):
        q = vp.scorer.embed([intent])[0]
        for head in ("Q741925", "Q193701", "Q317521"):
            a = vp.scorer.score_edges([head], q, expansion="exact")
            b = vp.scorer.score_edges([head], q, expansion="firstcut")
            if w < 1.0:
                assert [(e.relation_id, e.tail_id) for e in a[head]] == [(e.relation_id, e.tail_id) for e in b[head]]
            else:
                assert [e.relation_id for e in a[head]] == [e.relation_id for e in b[head]]
                assert {(e.relation_id, e.tail_id) for e in a[head]} == {(e.relation_id, e.tail_id) for e in b[head]}


def test_first_cut_keeps_at_most_per_relation_edges_of_one_relation_in_neo4j(kg, models):
    """The Cypher first cut caps one relation's edges per entity (Elon Musk has three citizenships), so at a
    hub other relations reach exact Eq. 5; 0 keeps them all."""
    from kgqa.methods.vispath.scoring import first_cut_relation_scores

    vp = _engine(kg, models, Script(), edge_relation_weight=1.0)
    q = vp.scorer.embed(["country of citizenship"])[0]
    scores = first_cut_relation_scores({rid: float(v @ q) for rid, (_, v) in vp.scorer.relations().items()
                                        if v is not None}, 1.0)

    def cut(per_relation):
        rows = kg.read("vispath_frontier_edges", frontier=["Q317521"], relation_scores=scores,
                       intent=q.tolist(), pre_cap=2000, cap=3, hidden=[], per_relation=per_relation)
        return [r["relation_id"] for r in rows]

    assert cut(0) == ["P27", "P27", "P27"]
    assert cut(1)[0] == "P27" and cut(1).count("P27") == 1 and len(cut(1)) == 3
    vp = _engine(kg, models, Script(), edge_relation_weight=1.0, M1=3, M1_per_relation=2)
    kept = [e.relation_id for e in vp.scorer.score_edges(["Q317521"], q, intent="country of citizenship")["Q317521"]]
    assert kept[:2] == ["P27", "P27"] and len(kept) == 3 and kept[2] != "P27"


# --------------------------------------------------------------------------- traces
def test_pipeline_writes_a_trace_that_reads_back_and_leaves_facts_alone(kg, models, settings):
    from kgqa.models import Models
    from kgqa.app.pipeline import Pipeline
    from kgqa.core.trace import remove_trace, show_trace

    script = _terminal_script(models, ["manufacturer", "founded by"], 2)
    m = Models(encoder=models.encoder, chat=script, vision=script, softprompt=None, meter=models.meter)
    before = kg.read("graph_counts")[0]
    pipe = Pipeline(settings, graph=kg, models=m, options={"delta_grounding": 0.0})   # Eq. 3 as in the paper
    ans = pipe.answer("vispath-it: " + Q_2HOP, image=ROCKET)
    assert ans.answer_id == "Q317521" and ans.trace_id and ans.trace_id in ans.browser_cypher
    assert "\n" not in ans.browser_cypher
    assert ans.cost["encoder"].calls > 0
    after = kg.read("graph_counts")[0]
    assert after == before                                          # entities, relations, images, facts

    tr = show_trace(kg, ans.trace_id)
    q = tr["question"]
    assert q["answer"] == "Elon Musk" and q["answer_id"] == "Q317521" and q["method"] == "vispath"
    assert q["image_sha256"] == hashlib.sha256(ROCKET.read_bytes()).hexdigest()
    assert q["cost"]["encoder"]["calls"] == ans.cost["encoder"].calls
    first = tr["paths"][0]
    assert first["rank"] == 1
    assert [s["entity_id"] for s in first["steps"]] == ["Q741925", "Q193701", "Q317521"]
    assert [s["relation_id"] for s in first["steps"]] == [None, "P176", "P112"]
    assert [s["hop"] for s in first["steps"]] == [0, 1, 2]

    out = run_kgqa("trace", "show", ans.trace_id)
    assert out.returncode == 0, out.stderr
    assert "Falcon 9 -[manufacturer]-> SpaceX -[founded by]-> Elon Musk" in out.stdout
    out = run_kgqa("trace", "rm", ans.trace_id)
    assert out.returncode == 0 and "removed 1" in out.stdout
    assert show_trace(kg, ans.trace_id) is None
    assert kg.read("graph_counts")[0] == before
    assert remove_trace(kg, ans.trace_id) == 0


def test_trace_rm_older_than_keeps_recent_traces(kg, models, settings):
    from kgqa.models import Models
    from kgqa.app.pipeline import Pipeline
    from kgqa.core.trace import show_trace

    script = _terminal_script(models, ["manufacturer", "founded by"], 2)
    m = Models(encoder=models.encoder, chat=script, vision=script, softprompt=None, meter=models.meter)
    ans = Pipeline(settings, graph=kg, models=m).answer("vispath-it: " + Q_2HOP, image=ROCKET)
    out = run_kgqa("trace", "rm", "--older-than", "1")
    assert out.returncode == 0, out.stderr
    assert show_trace(kg, ans.trace_id) is not None
    out = run_kgqa("trace", "rm", "--older-than", "0")
    assert out.returncode == 0
    assert show_trace(kg, ans.trace_id) is None


# --------------------------------------------------------------------------- CLI
def test_ask_bad_inputs_are_one_line_errors(kg, tmp_path):
    assert_one_line_error(run_kgqa("ask", "--method", "nope", "q?"), "unknown", code=2)
    assert_one_line_error(run_kgqa("ask", "-o", "M4=3", "q?"), "M4 unknown", code=2)
    assert_one_line_error(run_kgqa("ask", "-o", "expansion=fast", "q?"), "expansion", code=2)
    assert_one_line_error(run_kgqa("ask", str(tmp_path / "nope.jpg"), "q?"), "nope.jpg", code=2)
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(b"not an image")
    assert_one_line_error(run_kgqa("ask", str(bad), "q?"), "bad.jpg", code=2)
    assert_one_line_error(run_kgqa("ask", "--m1", "0", "q?"), "M1", code=2)
    assert_one_line_error(run_kgqa("trace", "show", "zzz"), "trace id", code=2)
    assert_one_line_error(run_kgqa("trace", "rm"), "exactly one", code=2)


@pytest.mark.slow
def test_ask_end_to_end_with_the_real_small_models(kg):
    """SmolLM2-135M + the grounder, every step asked (the paper): the answer may be wrong, but the run
    must be well-formed. By default (llm_steps=auto) the bundled 135M model is asked no step."""
    default = run_kgqa("ask", "--json", str(ROCKET), "vispath-it: " + Q_2HOP)
    assert default.returncode == 0, default.stderr
    d = json.loads(default.stdout)
    assert "chat" not in d["cost"] and d["details"]["llm_steps"] == "none" and d["answer"]
    # every step off by design; the shipped chain reader was trained on the demo KG, not this fixture's, which
    # the answer says once (the rules score the chains)
    assert {f["code"] for f in d["fallbacks"]} <= {"off", "checkpoint"}
    assert [f for f in d["fallbacks"] if f["code"] == "off"]
    reader = [f["message"] for f in d["fallbacks"] if f["code"] == "checkpoint"]
    assert len(reader) <= 1 and all("the rules take over" in m for m in reader)
    assert d["details"]["chain_scores"] == ("rules" if reader else "chain reader")
    out = run_kgqa("ask", "--json", str(ROCKET), "vispath-it: " + Q_2HOP, "-o", "llm_steps=all")
    assert out.returncode == 0, out.stderr
    ans = json.loads(out.stdout)
    assert ans["start_entity_id"] == "Q741925"           # grounding + graph-aware validation, model-agnostic here
    assert ans["answer"]
    assert ans["cost"]["chat"]["calls"] >= 3 and ans["cost"]["vision"]["calls"] >= 1
    assert ans["evidence"] and all(e["kind"] == "path" for e in ans["evidence"])
    for p in ans["evidence"]:
        assert p["steps"][0]["head_id"] == "Q741925"
        for s in p["steps"]:
            assert (s["head_id"], s["relation_id"], s["tail_id"]) in FACTS
    assert ans["trace_id"] and ans["trace_id"] in ans["browser_cypher"]
    rows = kg.read("trace_show", id=ans["trace_id"])
    assert rows and rows[0]["question"]["answer"] == ans["answer"]


def test_a_trace_pointing_at_a_missing_node_fails_loudly_and_writes_nothing(kg):
    from kgqa.core.result import Answer, PathEvidence, Step
    from kgqa.core.trace import TraceError, new_trace_id, show_trace, write_trace

    steps = [Step("Q219913", "Falcon 9", "P176", "manufacturer", "Q193701", "SpaceX", 1),
             Step("Q193701", "SpaceX", "P112", "founded by", "Q999999999", "Nobody", 2)]
    ans = Answer(question="vispath-it: missing node", answer="Nobody", method="vispath",
                 start_entity_id="Q219913", evidence=[PathEvidence(steps=steps, rank=1)])
    tid = new_trace_id()
    with pytest.raises(TraceError, match="Entity Q999999999") as e:
        write_trace(kg, ans, trace_id=tid)
    assert "\n" not in str(e.value)
    assert show_trace(kg, tid) is None                              # nothing half-written
    ans.evidence[0].steps[1].tail_label = "Relation"                # not a label traces may link
    with pytest.raises(TraceError, match="Relation"):
        write_trace(kg, ans, trace_id=tid)
