"""Wikidata identifiers: the one definition of what an entity or a relation id looks like.

Ids are the only values that reach Cypher outside ``$params`` (a relationship type is built
from a relation id), so they are checked against these patterns wherever they enter.
"""

from __future__ import annotations

import re

#: an entity id: Q followed by digits, no leading zero
QID = re.compile(r"^Q[1-9][0-9]*$")
#: a relation id: P followed by digits (the rule ``kgqa.core.graph.relation_type`` applies)
PID = re.compile(r"^P[0-9]+$")


def is_qid(value: object) -> bool:
    return isinstance(value, str) and QID.match(value) is not None


def is_pid(value: object) -> bool:
    return isinstance(value, str) and PID.match(value) is not None
