// purpose: mKG-RAG stage 1 (Eq. 2) inside a scope (kgqa ask --doc / --docs): the top documents of $doc_ids by
//          the exact cosine between the query and each document's embedding (complete documents only; no vector
//          index: the scope is the candidate set)
// params:  $vector: the query embedding; $k: documents to return (Kd); $doc_ids: the scope's document ids
// returns: id, title, score ((1 + cos) / 2, as mkgrag_document_search gives it)
MATCH (d:Document)
WHERE d.id IN $doc_ids AND d.status = 'complete'
RETURN d.id AS id, d.title AS title, vector.similarity.cosine(d.embedding, $vector) AS score
ORDER BY score DESC, id
LIMIT $k
