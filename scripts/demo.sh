#!/usr/bin/env bash
# The body of `make demo` (make has already set up the venv and started Neo4j):
#   1. load the bundled demo multimodal KG (data/demo, Wikidata5M format) — idempotent,
#      every write is a MERGE on an id, so a second run changes nothing;
#   2. answer three sample questions with `kgqa ask` (two about an image, one text-only);
#   3. evaluate the bundled question set with `kgqa eval` and print the table.
#
# Model replies go through a replay cache seeded from data/demo/replay (recorded by a
# real run of the same models on the same prompts), copied to .kgqa/demo-replay so the
# tracked folder is never written. A prompt that is not in the cache is answered by the
# real model (slower on CPU) and cached for the next run. KGQA_DEMO_LIVE=1 bypasses the
# cache; KGQA_DEMO_EVAL_LIMIT=N evaluates only the first N questions.
set -euo pipefail
cd "$(dirname "$0")/.."

KGQA=${KGQA:-.venv/bin/kgqa}
DEMO=data/demo
DOCS=data/docs
CACHE=.kgqa/demo-replay
REPORT=.kgqa/demo-eval.json

replay=()
if [ "${KGQA_DEMO_LIVE:-0}" != "1" ]; then
  mkdir -p "$CACHE"
  if [ -d "$DEMO/replay" ]; then
    cp -R -n "$DEMO/replay/." "$CACHE/"
  fi
  if [ -d "$DOCS/replay" ]; then        # mKG-RAG: document extraction and answers (data/docs/README.md)
    cp -R -n "$DOCS/replay/." "$CACHE/"
  fi
  replay=(--replay-cache "$CACHE")
fi
limit=()
if [ -n "${KGQA_DEMO_EVAL_LIMIT:-}" ]; then
  limit=(--limit "$KGQA_DEMO_EVAL_LIMIT")
fi

banner() { printf '\n==== %s ====\n' "$*"; }

banner "kgqa doctor"
$KGQA doctor --no-models || true   # informative; the steps below fail loudly on their own

banner "1/3 load the demo KG: kgqa load wikidata5m --path $DEMO"
$KGQA load wikidata5m --path "$DEMO"

banner "2/3 kgqa ask $DEMO/queries/falcon9_dscovr_launch.jpg (a launch photo)"
$KGQA ask "${replay[@]}" "$DEMO/queries/falcon9_dscovr_launch.jpg" \
  "Who founded the company that builds the rocket shown in this photo?"

banner "2/3 kgqa ask $DEMO/queries/flag_france.jpg (a flag, cropped and rotated)"
$KGQA ask "${replay[@]}" "$DEMO/queries/flag_france.jpg" \
  "Which city is twinned with the capital of the country whose flag is shown?"

banner "2/3 kgqa ask (text only)"
$KGQA ask "${replay[@]}" "Where was the architect of the Eiffel Tower born?"

banner "3/3 kgqa eval $DEMO/questions.jsonl"
$KGQA eval "$DEMO/questions.jsonl" "${replay[@]}" "${limit[@]}" --out "$REPORT"

# ---- mKG-RAG (documents): per-document multimodal KGs, then dual-stage retrieval ----
banner "mKG-RAG: kgqa load documents $DOCS/corpus (unchanged documents are skipped on a second run)"
$KGQA load documents "$DOCS/corpus" "${replay[@]}"

banner "mKG-RAG: kgqa ask $DOCS/queries/flag_japan.jpg --method mkgrag (a fact only the documents hold)"
$KGQA ask "${replay[@]}" "$DOCS/queries/flag_japan.jpg" \
  "In which year was the flag shown here made official by law?" --method mkgrag

# ---- GraSP and the three methods side by side ----
# GraSP without a soft-prompt server: the node-scoring head on the GAT (data/demo/grasp/grasp-nodes.safetensors,
# trained by `kgqa train grasp --head nodes --exclude data/demo/questions.jsonl`; see data/demo/README.md) is found
# by the method itself when <data dir>/models/grasp/ holds none; no -o needed.
banner "GraSP: kgqa ask --method grasp (3-hop subgraph -> question-conditioned GAT -> node-scoring head)"
$KGQA ask "${replay[@]}" "What is the capital of France?" --method grasp

banner "kgqa compare: every method on one question"
$KGQA compare "${replay[@]}" "$DEMO/queries/falcon9_dscovr_launch.jpg" \
  "Who founded the company that builds the rocket shown in this photo?"

printf '\nPer-question results: %s · Neo4j Browser: open the link of a trace (the browser: lines above, or kgqa trace open ID).\n' "$REPORT"
