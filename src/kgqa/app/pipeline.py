"""One question in, one ``Answer`` out, for any registered method.

    p = Pipeline(settings, method="vispath", options={"M1": 30, "Dmax": 3}, ablations=["no_visual_intent"])
    a = p.answer("Where was the architect of the building shown here born?", image=Path("photo.jpg"))

The pipeline validates the method's options (before anything connects), builds the graph,
the models and the shared KG access once, validates the image and the entity id, runs the
method under the per-question meter and stores the trace. ``Pipeline.many`` builds one
pipeline per method over the same graph and models (``kgqa compare``, ``kgqa eval --method a,b``).
Used by ``kgqa ask``, ``kgqa compare`` and ``kgqa eval``.

Options may also be given as keyword arguments (``Pipeline(s, M1=30)``); ``ablations`` is a
list of the method's ablation names; ``replay_cache`` a folder for the model replay cache.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kgqa.core.errors import InvalidInput
from kgqa.core.ids import QID as _QID
from kgqa.core.inputs import check_question, check_text
from kgqa.core.result import Answer


def method_options(method_cls, options: dict | None = None, ablations: list[str] | None = None):
    """The method's validated Options from option values and ablation names (one clear line when bad)."""
    from kgqa.core.method import parse_options

    opts = dict(options or {})
    for a in ablations or []:
        if a not in method_cls.ablations:
            raise InvalidInput(f"{method_cls.name}: ablation {a!r} is unknown "
                               f"(choose from {', '.join(method_cls.ablations) or 'none'})")
        opts[a] = True
    return parse_options(method_cls, opts)


def methods_json() -> list[dict]:
    """Every method with its paper, options (defaults, descriptions) and ablations (``kgqa methods --json``,
    ``GET /methods``)."""
    from kgqa.core.method import describe_options
    from kgqa.methods.registry import method_classes

    return [{"name": c.name, "title": c.title, "arxiv": c.arxiv, "ablations": list(c.ablations),
             "flags": dict(c.cli_flags),
             "options": [{"name": n, "default": d, "description": t} for n, d, t in describe_options(c)]}
            for c in method_classes().values()]


class Pipeline:
    def __init__(self, settings, method: str = "vispath", *, graph=None, models=None, kg=None,
                 write_trace: bool = True, options: dict | None = None, ablations: list[str] | None = None,
                 replay_cache: str | Path | None = None, **more_options: Any):
        from kgqa.app.runtime import open_runtime
        from kgqa.methods.registry import get_method

        cls = get_method(method)
        opts = method_options(cls, {**(options or {}), **more_options}, ablations)  # before anything connects
        if replay_cache:
            settings = settings.model_copy(update={"model_cache_dir": Path(replay_cache)})
        self.settings = settings
        self.method_name = cls.name
        self.options = opts
        self.write_trace = write_trace
        rt = open_runtime(settings, graph=graph, models=models, kg=kg)
        self._owns_graph = rt.owns_graph
        self.graph, self.models, self.kg = rt.graph, rt.models, rt.kg
        self.method = cls(rt.context(), opts)

    @classmethod
    def many(cls, settings, methods: list[str], *, options: dict[str, dict] | None = None,
             ablations: dict[str, list[str]] | None = None, write_trace: bool = True,
             replay_cache: str | Path | None = None, errors: dict | None = None) -> list["Pipeline"]:
        """One pipeline per method, sharing one graph connection, one set of models and one KG cache.

        Every method's options are validated before anything connects. A method that cannot be
        built (e.g. GraSP without a trained encoder) raises — or, when ``errors`` is a dict, is
        left out and its error recorded there (``kgqa compare`` shows it in the method's row)."""
        from kgqa.app.runtime import open_runtime
        from kgqa.core.errors import KgqaError
        from kgqa.methods.registry import get_method

        for m in methods:
            method_options(get_method(m), (options or {}).get(m), (ablations or {}).get(m))
        if replay_cache:
            settings = settings.model_copy(update={"model_cache_dir": Path(replay_cache)})
        rt = open_runtime(settings)
        out = []
        try:
            for m in methods:
                try:
                    out.append(cls(settings, m, graph=rt.graph, models=rt.models, kg=rt.kg, write_trace=write_trace,
                                   options=(options or {}).get(m), ablations=(ablations or {}).get(m)))
                except KgqaError as e:
                    if errors is None:
                        raise
                    errors[m] = e
        except BaseException:
            rt.close()
            raise
        if out:
            out[0]._owns_graph = True          # the first pipeline closes the shared connection
        else:
            rt.close()
        return out

    def answer(self, question: str, image: Path | str | None = None, entity_id: str | None = None,
               drop_edges: float = 0.0, seed: int = 0, docs: list[str] | str | None = None,
               docs_glob: list[str] | str | None = None) -> Answer:
        """One question; ``docs`` (ids) and ``docs_glob`` (patterns over ids, paths, file names) restrict a
        document method's retrieval to those documents (``core/scope``: an unknown one is one line, exit 2)."""
        from kgqa.core.images import load_image
        from kgqa.core.method import Query
        from kgqa.core.trace import browser_cypher, new_trace_id, write_trace

        question = check_question(question)      # a Question from the gate where it entered passes as it is
        img = load_image(image) if image is not None else None
        if entity_id is not None and not _QID.match(entity_id := check_text(entity_id, "--entity")):
            raise InvalidInput(f"--entity {entity_id!r} is not a Wikidata entity id (Q followed by digits)")
        if not 0.0 <= float(drop_edges) < 1.0:         # (NaN fails this too)
            raise InvalidInput(f"--drop-edges must be in [0, 1), got {drop_edges}")
        scope = ()
        if docs or docs_glob:
            from kgqa.core.scope import resolve_scope

            if not getattr(self.method, "scoped_by_documents", False):
                raise InvalidInput(f"--doc/--docs restrict retrieval from loaded documents; {self.method_name} "
                                   "does not retrieve from documents (use --method mkgrag)")
            scope = resolve_scope(self.graph, docs, docs_glob)
        query = Query(question=question, image=img, entity_id=entity_id, drop_edges=float(drop_edges),
                      seed=int(seed), documents=scope)
        trace_id = new_trace_id()
        meter = getattr(self.models, "meter", None)
        t0 = time.perf_counter()
        if meter is not None:
            with meter.question(trace_id):
                ans = self.method.answer(query)
            cost = meter.costs(trace_id)
        else:
            ans = self.method.answer(query)
            cost = {}
        ans.seconds = round(time.perf_counter() - t0, 3)
        ans.cost = cost
        ans.method = self.method_name
        if self.write_trace:
            write_trace(self.graph, ans, trace_id=trace_id, image_sha256=img.sha256 if img else None)
            ans.trace_id = trace_id
            ans.browser_cypher = browser_cypher(trace_id)
        return ans

    def render(self, answer: Answer) -> list[str]:
        return self.method.render(answer)

    def close(self) -> None:
        if self._owns_graph:
            self.graph.close()

    def __enter__(self) -> "Pipeline":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
