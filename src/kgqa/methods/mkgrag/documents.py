"""Stage 1 of mKG-RAG's retrieval: the documents whose KGs stage 2 searches.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA", Section 3.2.1, Eq. 2: the top Kd documents by cos(E(q), E(document)), here the exact cosine of the
candidates of the ``document_embedding`` and ``chunk_embedding`` vector indexes, each asked for ``ef`` ≥ Kd (the
approximate index asked for Kd alone misses the nearest documents). By default a document scores the better of
that and its best chunk's cosine (``doc_score=maxp``: MaxP, Dai and Callan, arXiv:1905.09217: E(document) holds
a document's title, captions and first 256 word pieces only); ``doc_score=document`` is Eq. 2 as written.
With a scope (``--doc``, ``--docs``) only those documents are ranked, by exact cosine (no vector index).
"""

from __future__ import annotations

from kgqa.core.kg import cos_from_neo4j
from kgqa.methods.mkgrag.options import MKGRAGOptions
from kgqa.methods.mkgrag.records import Document


def recall_documents(graph, qvec: list[float], opt: MKGRAGOptions, scope: tuple[str, ...] = ()) -> list[Document]:
    """The top Kd documents for the query embedding ``qvec``, best first (Eq. 2)."""
    maxp = opt.doc_score == "maxp"
    if scope:
        rows = graph.read("mkgrag_document_search_scoped", vector=qvec, k=opt.Kd, doc_ids=list(scope), maxp=maxp)
    else:
        rows = graph.read("mkgrag_document_search", vector=qvec, k=opt.Kd, ef=max(opt.ef, opt.Kd), maxp=maxp)
    return [Document(d["id"], d["title"], round(cos_from_neo4j(d["score"]), 4)) for d in rows]
