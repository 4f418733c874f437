"""Training the learned models, a layer of its own between the methods and ``gnn``: data (``squad``: SQuAD-format
reading data and its metrics), the one learning-rate schedule (``schedule``), and one module per model: the span
reader, the passage ranker, the chain reader, the path retriever (with ``path_supervision``, its weak labels).
Each entry point returns a ``kgqa.core.report.Report``. Training imports the models it trains
(``kgqa.models.heads``); ask-time code (``kgqa.models``, ``kgqa.methods``, ``kgqa.loaders``) never imports it."""
