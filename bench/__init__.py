"""The benchmarks behind docs/benchmarks.md, one module each, run from the repository root as
``.venv/bin/python -m bench.NAME [--help]``; ``bench._common`` holds what several share, ``bench/cypher/``
the queries only a benchmark runs."""
