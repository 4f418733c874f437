#!/usr/bin/env bash
# The body of `make demo` (Neo4j is already started by make).
set -euo pipefail
KGQA=.venv/bin/kgqa
$KGQA doctor --no-models
