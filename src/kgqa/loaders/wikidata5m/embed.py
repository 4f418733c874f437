"""Step 3 of a Wikidata5M load: relation and entity names embedded, and the entity name vector index.

Only what has no vector yet is encoded (Neo4j is asked, chunk by chunk, which loaded entities
lack one), names deduplicated per chunk, so the phase resumes where a killed run stopped. A load
that created many entities writes their vectors with the vector index dropped and builds it once
at the end.
"""

from __future__ import annotations

import time

from kgqa.models.vector_space import check_space, record_space

#: vectors per write transaction
EMBED_WRITE_BATCH = 2_000
#: A load that created at least this many entities writes their vectors with the entity name vector
#: index dropped and builds the index once at the end (README, Loading: "Embeddings"). Measured with
#: bench/scale_curve.py: at 250k entities vectors + one build took 834 s against 971 s inserted one by
#: one; at 60k 185 s against 173 s. The crossover lies between; 100k is a round value inside it.
VECTOR_INDEX_DEFER_MIN = 100_000
#: How long the end of a load waits for that build (the whole Wikidata5M takes a while on a CPU).
VECTOR_INDEX_BUILD_TIMEOUT_S = 6 * 3600


class Embedding:
    """The embedding phase of ``Loader`` (kgqa.loaders.wikidata5m.load): its graph, options,
    encoder (loaded on first need) and report, and the ids validation loaded."""

    def check_encoder(self) -> None:
        """Before anything is written: a graph whose vectors another encoder made stops a load with embeddings
        (one line naming both; ``kgqa.models.vector_space``). Loads no model."""
        if not self.opt.embeddings:
            return
        if self.encoder is None:
            from kgqa.models.encoder import encoder_for

            self.encoder = encoder_for(self.graph.settings, device=self.opt.device)
        check_space(self.graph, self.encoder)

    def _get_encoder(self):
        """The encoder, loaded (and timed as its own phase) on first need only."""
        if getattr(self, "_encoder_ready", False):
            return self.encoder
        if self.encoder is None:
            from kgqa.models.encoder import encoder_for

            self.encoder = encoder_for(self.graph.settings, device=self.opt.device)
        # before the first vector: the graph's vectors are this encoder's (a resumed load too), or the load stops
        record_space(self.graph, self.encoder)
        st = self.report.phase("load encoder")  # model load + one warm-up pass, kept out of the rates
        t0 = time.perf_counter()
        self._embed_threads = getattr(self.graph.settings, "embed_threads", None) or 1  # every core unless KGQA_LOAD_THREADS
        self.encoder.encode(["warm-up"], **self._threads_kw())
        st.seconds = time.perf_counter() - t0
        backend = getattr(self.encoder, "backend", None)
        if backend:
            self.report.encoder = f"{backend} · {self._embed_threads} threads"
        self._encoder_ready = True
        return self.encoder

    def _threads_kw(self) -> dict:
        """``threads=`` for encoders that take it (SentenceEncoder); a test double may not."""
        import inspect

        try:
            takes = "threads" in inspect.signature(self.encoder.encode).parameters
        except (TypeError, ValueError):
            takes = False
        return {"threads": self._embed_threads} if takes else {}

    def embed(self, bars) -> None:
        # relations: ~822, one pass
        st = self.report.phase("embed relations")
        t0 = time.perf_counter()
        todo = self.graph.read("load_relations_lacking_embedding")
        if todo:
            t_load = time.perf_counter()
            encoder = self._get_encoder()
            t0 += time.perf_counter() - t_load  # the model load is its own phase
            enc_s, neo_s = self._embed_rows(encoder, todo, "load_relation_embeddings")
            st.detail.update(encode_s=enc_s, neo4j_s=neo_s)
        st.rows, st.seconds = len(todo), time.perf_counter() - t0
        if getattr(self, "csv_vectors", False):      # --bulk imported them: the schema started the index's build
            self.await_vector_index(bars)
            return

        st = self.report.phase("embed entities")
        t0 = time.perf_counter()
        ids = sorted(self.loaded_ids())
        deferred = self._defer_vector_index(len(ids))
        task = bars.add("embed entities", len(ids))
        n = unique = 0
        enc_total = neo_total = read_s = 0.0
        step = max(1, self.opt.embed_chunk)
        for i in range(0, len(ids), step):
            chunk = ids[i:i + step]
            t = time.perf_counter()
            todo = self.graph.read("load_entities_lacking_embedding", ids=chunk)
            read_s += time.perf_counter() - t
            if todo:
                t_load = time.perf_counter()
                encoder = self._get_encoder()
                t0 += time.perf_counter() - t_load
                enc_s, neo_s, u = self._embed_rows(encoder, todo, "load_entity_embeddings", count_unique=True)
                enc_total += enc_s
                neo_total += neo_s
                unique += u
                n += len(todo)
            bars.advance(task, len(chunk))
        st.rows, st.seconds = n, time.perf_counter() - t0
        st.detail.update(unique_names=unique, encode_s=enc_total, neo4j_write_s=neo_total, neo4j_read_s=read_s)
        bars.finish(task, len(ids))
        if deferred:
            st = self.report.phase("build vector index")
            t0 = time.perf_counter()
            task = bars.add("build vector index", None)
            self.graph.apply_schema()             # creates entity_name_embedding again, over every vector
            self.graph.await_indexes(timeout_s=VECTOR_INDEX_BUILD_TIMEOUT_S)
            st.seconds = time.perf_counter() - t0
            bars.finish(task, 0)

    def await_vector_index(self, bars, poll_s: float = 10.0) -> None:
        """The phase "build vector index": wait for ``entity_name_embedding`` to be ONLINE, its population
        percentage as the progress (with an ETA on a log)."""
        st = self.report.phase("build vector index")
        t0, cpu0 = time.perf_counter(), _server_cpu_s(self.graph.settings)
        task = bars.add("build vector index (%)", 100)
        done = 0
        deadline = time.monotonic() + VECTOR_INDEX_BUILD_TIMEOUT_S
        while time.monotonic() < deadline:
            row = next((r for r in self.graph.read("schema_indexes") if r["name"] == "entity_name_embedding"), None)
            if row is None or row["state"] != "POPULATING":
                break
            pct = int(row["populationPercent"] or 0)
            if pct > done:
                bars.advance(task, pct - done)
                done = pct
            time.sleep(poll_s)
        self.graph.await_indexes(timeout_s=max(1, int(deadline - time.monotonic())))
        st.seconds = time.perf_counter() - t0
        if cpu0 is not None and (cpu1 := _server_cpu_s(self.graph.settings)) is not None:
            st.detail["neo4j_cpu_s"] = round(cpu1 - cpu0, 1)     # the local server's, while it built the index
        bars.finish(task, 100)

    def _defer_vector_index(self, n_ids: int) -> bool:
        """Whether to write this load's entity vectors with the entity name vector index dropped and
        build it once at the end: when the load created ``VECTOR_INDEX_DEFER_MIN`` or more entities
        (one HNSW build over the finished vectors costs less than inserting each into a growing
        index: bench/scale_curve.py), or when the index is already missing (an earlier such load was
        killed before its build; this run finishes it). Queries need the index, so it is said."""
        names = {r["name"] for r in self.graph.read("schema_indexes")}
        if "entity_name_embedding" not in names:
            self.report.modes["vector index"] = "built after the vectors (it was missing)"
            return True
        if not (self.created_entities and n_ids >= VECTOR_INDEX_DEFER_MIN):
            return False
        self.graph.write("load_drop_entity_vector_index")
        self.report.modes["vector index"] = (f"dropped for {n_ids:,} new entities, built after their vectors "
                                             "(entity linking waits for the build)")
        return True

    def _embed_rows(self, encoder, todo: list[dict], query: str, count_unique: bool = False):
        names = list(dict.fromkeys(r["name"] for r in todo))  # deduplicated, order kept
        t = time.perf_counter()
        vecs = encoder.encode(names, batch_size=self.opt.embed_batch_size, **self._threads_kw())
        enc_s = time.perf_counter() - t
        index = {name: k for k, name in enumerate(names)}
        t = time.perf_counter()
        for j in range(0, len(todo), EMBED_WRITE_BATCH):
            rows = [{"id": r["id"], "vector": vecs[index[r["name"]]].tolist()}
                    for r in todo[j:j + EMBED_WRITE_BATCH]]
            self.graph.write(query, rows=rows)
        neo_s = time.perf_counter() - t
        return (enc_s, neo_s, len(names)) if count_unique else (enc_s, neo_s)


def _server_cpu_s(settings) -> float | None:
    """CPU seconds the local ``kgqa neo4j`` server has used (Linux /proc), None when not known."""
    import os
    from pathlib import Path

    try:
        pid = int((Path(settings.neo4j_home) / "run" / "neo4j.pid").read_text().strip())
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
