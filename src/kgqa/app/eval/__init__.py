"""``kgqa eval``: run a method over a question set and measure answers, paths and cost.

Input is JSON lines, one question per line (image paths relative to the file)::

    {"id": "q001", "image": "queries/q001.jpg", "question": "…", "answer": "Rome",
     "answer_id": "Q220", "aliases": ["Roma"], "hops": 3,
     "topic": {"id": "Q243", "label": "Eiffel Tower"},
     "path": [["Q243","P17","Q142"], ["Q142","P36","Q90"], ["Q90","P190","Q220"]]}

Only ``id``, ``question`` and ``answer`` are required; a metric that needs a missing field
is skipped for that question (its denominator counts only the questions that have it).

Metrics, overall and per hop count, micro-averaged over questions:

* **SBERT@0.3**, as the VisPath paper (arXiv 2609.20843, Section V-B "Metrics") defines it: a
  prediction is correct when the cosine similarity of its all-MiniLM-L6-v2 sentence
  embedding and that of the gold answer is at least 0.3. Only the gold answer string is
  compared (not the aliases), as in the paper. An abstention or empty prediction is wrong.
* **exact match** after normalisation (Unicode accents stripped, case folded, punctuation
  removed, English articles a/an/the dropped, whitespace collapsed) against the gold answer
  or any alias.
* **Hits@1** on answer ids: the predicted ``answer_id`` equals the gold ``answer_id``.
* **start-entity accuracy**: the method's start entity equals ``topic.id``.
* **gold-path recall**: the gold path, as a sequence of (head, PID, tail) triples, is one of
  the paths the method retained.
* **document QA** (a ``support``: ``{"document": id, "section": heading, "page": 12}`` or ``"pages": [12, 13]``):
  document recall@Kd, evidence recall (a context chunk of that document, section and page) and, of the right
  answers whose support names a page, the share whose citation gives one of those pages (``cited_page``);
* **fallbacks** taken, counted by code (``schema``: no valid JSON after retries,
  ``declined``, ``graph_only``, ``empty``, ``graph``; see ``kgqa.core.result.Fallback``), so a
  run shows how often its models were actually used;
* **abstentions** (no answer), **failures** (the method raised — a model server that cannot
  be reached is a failure, never a fallback; the run goes on), **cost**
  per role per question (model calls, prompt and completion tokens, seconds; mean over the
  questions that ran) and **latency** p50/p95 (wall seconds per question; linear
  interpolation between order statistics, numpy's default).

A failed question counts as a wrong answer in every accuracy it would have entered.

Modules: ``questions`` (reading and validating the JSON lines), ``metrics`` (one question's
scores), ``runner`` (asking every question, scoring it; ``evaluate``), ``report`` (the summary
as JSON and as tables).
"""
