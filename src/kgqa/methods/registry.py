"""The methods kgqa knows, by name: the one place that imports them.

``method_classes()`` imports each method module when first asked (so ``kgqa --help``
stays light); the CLI (``kgqa methods``, ``ask``, ``compare``, ``eval``, ``serve``) and the
pipeline find methods only here. A method defined elsewhere (a test, a plugin) joins them with
``register_method(cls)``; nothing in ``kgqa.app`` names a method.

A method's own ``kgqa train NAME`` subcommands are listed here too (``train_commands``): GraSP's ``grasp`` and
VisPath's ``terminal``, and those a method defined elsewhere adds with ``register_train_command``.
"""

from __future__ import annotations

from typing import Callable

from kgqa.core.errors import InvalidInput


#: methods registered at run time (``register_method``), after the shipped ones
_REGISTERED: dict[str, type] = {}
#: ``kgqa train`` subcommands registered at run time (``register_train_command``)
_TRAIN_COMMANDS: dict[str, Callable] = {}


def method_classes() -> dict:
    """name → method class, in the order ``kgqa methods`` and ``kgqa compare`` use."""
    from kgqa.methods.mkgrag.algorithm import MKGRAG
    from kgqa.methods.grasp.algorithm import GraSP
    from kgqa.methods.vispath.algorithm import VisPath

    classes = [VisPath, MKGRAG, GraSP]
    return {**{c.name: c for c in classes}, **_REGISTERED}


def register_method(cls) -> None:
    """Make a ``BaseMethod`` subclass known by its ``name`` (``--method NAME``); a name taken is refused."""
    from kgqa.core.method import BaseMethod

    if not (isinstance(cls, type) and issubclass(cls, BaseMethod)):
        raise TypeError(f"{cls!r} is not a BaseMethod subclass")
    if cls.name in method_classes() and _REGISTERED.get(cls.name) is not cls:
        raise ValueError(f"a method named {cls.name!r} is already registered")
    _REGISTERED[cls.name] = cls


def unregister_method(name: str) -> None:
    """Forget a method ``register_method`` added (tests); the shipped methods stay."""
    _REGISTERED.pop(name, None)


def train_commands() -> dict[str, Callable]:
    """The methods' own ``kgqa train`` subcommands, NAME → a function ``(session, **options) -> Report`` whose
    options after ``session`` are Typer options (``kgqa.core.report.TrainSession``: the settings, the graph
    context, ``say``); ``kgqa train`` adds ``--json`` and prints the report it returns."""
    from kgqa.methods.grasp.train_command import train_grasp_command
    from kgqa.methods.vispath.train_command import train_terminal_command

    return {"grasp": train_grasp_command, "terminal": train_terminal_command, **_TRAIN_COMMANDS}


def register_train_command(name: str, command: Callable) -> None:
    """Add ``kgqa train NAME`` (a method's own training, defined outside this package); a name taken is refused."""
    if name in train_commands() and _TRAIN_COMMANDS.get(name) is not command:
        raise ValueError(f"a kgqa train command named {name!r} is already registered")
    _TRAIN_COMMANDS[name] = command


def unregister_train_command(name: str) -> None:
    """Forget a command ``register_train_command`` added (tests); the shipped ones stay."""
    _TRAIN_COMMANDS.pop(name, None)


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
