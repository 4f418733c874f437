"""The graph, the model roles and the shared KG access, built once per process.

Every command that answers questions or loads documents needs the same three things:
a verified Neo4j connection, the models of ``kgqa.models.build_models`` over it, and the
shared KG access (``kgqa.core.kg.KG``: the encoder cache and the relation catalogue).
``open_runtime`` builds whichever of them it is not given, in that order, so that
``kgqa ask``, ``compare``, ``eval``, ``load documents``, ``train grasp`` and each
``kgqa serve`` worker build them the same way::

    with open_runtime(settings) as rt:
        method = VisPath(rt.context(), options)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Runtime:
    settings: Any        # kgqa.core.config.Settings
    graph: Any           # kgqa.core.graph.Graph
    models: Any          # kgqa.models.Models
    kg: Any              # kgqa.core.kg.KG
    owns_graph: bool     # the connection was opened here: close() closes it

    def context(self):
        """What a method is built with (``kgqa.core.method.Context``)."""
        from kgqa.core.method import Context

        return Context(settings=self.settings, graph=self.graph, models=self.models, kg=self.kg)

    def close(self) -> None:
        if self.owns_graph:
            self.graph.close()

    def __enter__(self) -> "Runtime":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_runtime(settings, *, graph=None, models=None, kg=None) -> Runtime:
    """The graph (connected and verified: ``GraphUnavailable`` when Neo4j does not answer), the models over
    it and the KG access over both; the ones given are used as they are. Models built here are checked against
the encoder that made the graph's vectors (``kgqa.models.vector_space``). A connection opened here is closed
    again when building the rest fails."""
    owns = graph is None
    if owns:
        from kgqa.core.graph import Graph

        graph = Graph(settings)
    try:
        if owns:
            graph.verify()
        if models is None:
            from kgqa.models import build_models

            models = build_models(settings, graph)
            # the graph's vectors must be this encoder's (one line and exit 2 when another made them)
            from kgqa.models.vector_space import check_space

            check_space(graph, models.encoder)
        if kg is None:
            from kgqa.core.kg import KG

            kg = KG(graph, models.encoder)
    except BaseException:
        if owns:
            graph.close()
        raise
    return Runtime(settings=settings, graph=graph, models=models, kg=kg, owns_graph=owns)
