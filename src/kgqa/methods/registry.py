"""The methods kgqa knows, by name: the one place that imports them.

``method_classes()`` imports each method module when first asked (so ``kgqa --help``
stays light); the CLI (``kgqa methods``, ``ask``, ``compare``, ``eval``) and the pipeline
find methods only here.
"""

from __future__ import annotations

from kgqa.core.errors import InvalidInput


def method_classes() -> dict:
    """name → method class, in the order ``kgqa methods`` and ``kgqa compare`` use."""
    from kgqa.methods.mkgrag.algorithm import MKGRAG
    from kgqa.methods.grasp.algorithm import GraSP
    from kgqa.methods.vispath.algorithm import VisPath

    classes = [VisPath, MKGRAG, GraSP]
    return {c.name: c for c in classes}


def get_method(name: str):
    classes = method_classes()
    if name not in classes:
        raise InvalidInput(f"--method {name!r} is unknown (known: {', '.join(classes)}; see kgqa methods)")
    return classes[name]


def method_names(spec: str | None) -> list[str]:
    """``"a,b"`` → ["a", "b"] (each checked); None or "all" → every method."""
    classes = method_classes()
    if spec is None or spec.strip() in ("", "all"):
        return list(classes)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    for n in names:
        get_method(n)
    if len(set(names)) != len(names):
        raise InvalidInput(f"--methods {spec!r}: a method is named twice")
    return names
