"""Errors kgqa raises on purpose.

Every error a user can cause or meet (bad input, a service down, a model missing)
is a KgqaError subclass carrying one clear line. The CLI prints that line to
stderr and exits with the class's exit code; it never shows a traceback for them.
Raise them ``from`` the underlying exception so that ``--debug`` still has it.
"""

from __future__ import annotations


class KgqaError(Exception):
    """Base class: ``str(err)`` is the one line shown to the user."""

    exit_code = 1


class InvalidInput(KgqaError):
    """The user's input is wrong: a file, a line, a field, an id. Name which."""

    exit_code = 2


class GraphUnavailable(KgqaError):
    """Neo4j cannot be reached, refuses the credentials, or lacks the schema."""

    exit_code = 3


class ModelUnavailable(KgqaError):
    """A model backend cannot be loaded or reached, or keeps answering badly."""

    exit_code = 4


class LocalServerError(KgqaError):
    """The local Neo4j server (``kgqa neo4j``) cannot be started or stopped."""

    exit_code = 5
