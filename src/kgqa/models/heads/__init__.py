"""The learned heads that answer at ask time, each a fine-tuned all-MiniLM-L6-v2: the span reader (mKG-RAG's
extractive reader), the passage ranker (mKG-RAG's chunk order), the chain reader (VisPath's and GraSP's relation
chains), the path retriever (the older bi-encoder head); ``checkpoint`` is the checkpoint code the span reader and
the passage ranker share. They run on ``kgqa.models.runtime``; their training is ``kgqa.training``."""
