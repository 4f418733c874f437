"""``kgqa doctor``: one table saying whether kgqa can work here, and why not.

Each check is (name, ok, detail, required). The exit code is non-zero when a
required check fails. Model roles add their checks through ``model_checks``.
"""

from __future__ import annotations

import shutil

from kgqa.app.checks import Check
from kgqa.core.config import Settings
from kgqa.core.errors import KgqaError

#: what the schema must contain for kgqa to run (names from cypher/schema.cypher)
REQUIRED_CONSTRAINTS = ("entity_id", "relation_id", "image_sha256", "question_id", "path_id")
REQUIRED_VECTOR_INDEXES = ("entity_name_embedding", "relation_embedding")
REQUIRED_INDEXES = REQUIRED_VECTOR_INDEXES + ("entity_label_keys",)     # + the label lookup of entity linking


def graph_checks(settings: Settings) -> list[Check]:
    from kgqa.core.graph import Graph

    checks: list[Check] = []
    with Graph(settings) as g:
        try:
            info = g.read("server_info")[0]
        except KgqaError as e:
            return [Check("neo4j", False, str(e)), Check("schema", False, "not checked: Neo4j unreachable")]
        checks.append(Check("neo4j", True, f"{settings.neo4j_uri} · Neo4j {info['version']} {info['edition']}"))
        constraints = {r["name"] for r in g.read("schema_constraints")}
        indexes = {r["name"]: r for r in g.read("schema_indexes")}
        missing = [c for c in REQUIRED_CONSTRAINTS if c not in constraints]
        missing += [i for i in REQUIRED_INDEXES if i not in indexes]
        not_online = [n for n in REQUIRED_INDEXES if n in indexes and indexes[n]["state"] != "ONLINE"]
        failed = [n for n, r in indexes.items() if r["state"] == "FAILED"]
        if failed:      # any FAILED index, required or not: one line, and the command that rebuilds it
            checks.append(Check("schema", False, f"index(es) FAILED: {', '.join(failed)}: run `kgqa neo4j init` "
                                                 "to rebuild"))
        elif missing:
            checks.append(Check("schema", False, f"missing {', '.join(missing)}: run `kgqa neo4j init`"))
        elif not_online:
            checks.append(Check("schema", False, "index(es) not ONLINE: " + ", ".join(
                f"{n} {indexes[n]['state']}" for n in not_online) + " (populating: wait, or `kgqa neo4j init`)"))
        else:
            vec = sum(1 for r in indexes.values() if r["type"] == "VECTOR")
            checks.append(Check("schema", True, f"{len(constraints)} constraints, {vec} vector indexes ONLINE"))
        c = g.read("graph_counts")[0]
        checks.append(Check("graph", True, f"{c['entities']:,} entities · {c['relations']:,} relations · "
                                            f"{c['facts']:,} facts · {c['images']:,} images", required=False))
    return checks


def path_checks(settings: Settings) -> list[Check]:
    d = settings.data_dir
    probe = d if d.exists() else next((p for p in d.parents if p.exists()), d)
    usage = shutil.disk_usage(probe)
    free_gb = usage.free / 1e9
    return [Check("data dir", free_gb > 1.0, f"{d} · {free_gb:,.1f} GB free", required=True)]


def model_checks(settings: Settings, smoke: bool = True) -> list[Check]:
    """One check per model role (filled in by kgqa.models)."""
    try:
        from kgqa.app.doctor_models import role_checks
    except ImportError:
        return []
    return role_checks(settings, smoke=smoke)


def run_checks(settings: Settings, models: bool = True) -> list[Check]:
    checks = graph_checks(settings) + path_checks(settings)
    if models:
        checks += model_checks(settings)
    return checks
