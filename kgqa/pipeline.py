"""One question in, one ``Answer`` out: models loaded once, image validated, engine run, trace stored.

    p = Pipeline(settings, method="vispath", M1=30, Dmax=3, ablations=["no_visual_intent"])
    a = p.answer("Where was the architect of the building shown here born?", image=Path("photo.jpg"))

Used by ``kgqa ask`` and ``kgqa eval``. Options for VisPath: ``M1, M2, M3, Dmax, delta``,
``ablations`` (any of ``no_graph_validation, no_visual_intent, no_chain_pruning,
no_evidence_check``, or those names as keyword booleans), ``expansion``
(``firstcut``/``exact``), ``replay_cache`` (a folder for the model replay cache), and
``write_trace`` (default True).
"""

from __future__ import annotations

import re
import time
from dataclasses import fields
from pathlib import Path

from kgqa.errors import InvalidInput
from kgqa.result import Answer, Path as ResultPath, Step

METHODS = ("vispath", "mkgrag", "grasp")
ABLATIONS = ("no_graph_validation", "no_visual_intent", "no_chain_pruning", "no_evidence_check")


class Pipeline:
    def __init__(self, settings, method: str = "vispath", *, graph=None, models=None,
                 write_trace: bool = True, **options):
        if method not in METHODS:
            raise InvalidInput(f"--method {method!r} is unknown (choose one of {', '.join(METHODS)})")
        if method != "vispath":
            raise InvalidInput(f"--method {method}: not implemented yet (vispath is)")
        from kgqa.engine.vispath import VisPath, VisPathOptions

        opts = dict(options)
        replay = opts.pop("replay_cache", None)
        if replay:
            settings = settings.model_copy(update={"model_cache_dir": Path(replay)})
        ablations = opts.pop("ablations", None) or []
        for a in ablations:
            if a not in ABLATIONS:
                raise InvalidInput(f"ablation {a!r} is unknown (choose from {', '.join(ABLATIONS)})")
            opts[a] = True
        known = {f.name for f in fields(VisPathOptions)}
        unknown = sorted(set(opts) - known)
        if unknown:
            raise InvalidInput(f"VisPath option(s) {', '.join(unknown)} unknown (known: {', '.join(sorted(known))})")
        opts = {k: v for k, v in opts.items() if v is not None}
        vp_options = VisPathOptions(**opts).validate()          # bad flags fail before anything connects

        self.settings = settings
        self.method = method
        self.write_trace = write_trace
        if graph is None:
            from kgqa.graph import Graph

            graph = Graph(settings)
            graph.verify()
        self.graph = graph
        if models is None:
            from kgqa.models import build_models

            models = build_models(settings, graph)
        self.models = models
        self.engine = VisPath(graph, models.encoder, models.chat, models.vision, vp_options)

    def answer(self, question: str, image: Path | str | None = None, entity_id: str | None = None) -> Answer:
        from kgqa.images import load_image
        from kgqa.trace import browser_cypher, new_trace_id, write_trace

        if not isinstance(question, str) or not question.strip():
            raise InvalidInput("question is empty")
        img = load_image(image) if image is not None else None
        if entity_id is not None and not re.match(r"^Q[1-9][0-9]*$", str(entity_id)):
            raise InvalidInput(f"--entity {entity_id!r} is not a Wikidata entity id (Q followed by digits)")
        trace_id = new_trace_id()
        meter = getattr(self.models, "meter", None)
        t0 = time.perf_counter()
        if meter is not None:
            with meter.question(trace_id):
                run = self.engine.run(question, img, entity_id)
            cost = meter.costs(trace_id)
        else:
            run = self.engine.run(question, img, entity_id)
            cost = {}
        seconds = time.perf_counter() - t0
        ans = to_answer(run, method=self.method, seconds=seconds, cost=cost)
        if self.write_trace:
            write_trace(self.graph, ans, trace_id=trace_id, image_sha256=img.sha256 if img else None)
            ans.trace_id = trace_id
            ans.browser_cypher = browser_cypher(trace_id)
        return ans

    def close(self) -> None:
        self.graph.close()


def to_answer(run, *, method: str, seconds: float, cost: dict) -> Answer:
    """A VisPathRun as the shared ``kgqa.result.Answer``."""
    paths = []
    for rank, p in enumerate(run.selected_paths, 1):
        steps = [Step(head_id=e.head_id, head_name=e.head_name, relation_id=e.relation_id,
                      relation_name=e.relation_name, tail_id=e.tail_id, tail_name=e.tail_name, hop=k,
                      edge_score=round(e.score, 4), intent=e.intent)
                 for k, e in enumerate(p.edges, 1)]
        paths.append(ResultPath(steps=steps, score=None if p.sigma is None else round(p.sigma, 4), rank=rank))
    return Answer(
        question=run.question, answer=run.answer, method=method, answer_id=run.answer_id,
        start_entity_id=run.start.id if run.start else None,
        start_entity_name=run.start.name if run.start else None,
        paths=paths, sufficient=run.sufficient, stop_reason=run.stop_reason,
        hops=len(run.hops), seconds=round(seconds, 3), cost=cost,
        details={
            "expression": run.expression, "head": run.head, "object_name": run.object_name,
            "start_candidates": [{"id": c.id, "name": c.name, "retrieval": round(c.retrieval, 4),
                                  "s_Q": None if c.s_Q is None else round(c.s_Q, 4),
                                  "best_relation": c.best_relation} for c in run.start_candidates],
            "start_replaced": run.start_replaced, "sketch": run.sketch, "depth_hat": run.depth_hat,
            "hops": [{"hop": h.hop, "intent": h.intent, "candidates": h.candidates, "chain_kept": h.chain_kept,
                      "llm_selected": h.llm_selected, "retained": [p.verbalize() for p in h.retained],
                      "evidence": h.evidence, "answerable": h.answerable, "candidate_answer": h.candidate_answer}
                     for h in run.hops],
            "fallbacks": run.fallbacks,
            "timings": {k: round(v, 3) for k, v in run.timings.items()},
        },
    )
