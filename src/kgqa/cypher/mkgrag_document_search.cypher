// purpose: mKG-RAG stage 1 (Eq. 2): the top documents by cosine between the query and each document's
//          embedding, through the document_embedding vector index (complete documents only)
// params:  $vector: the query embedding; $k: documents to return (Kd)
// returns: id, title, score (the index's (1 + cos) / 2)
CALL db.index.vector.queryNodes('document_embedding', $k, $vector) YIELD node, score
WHERE node.status = 'complete'
RETURN node.id AS id, node.title AS title, score
ORDER BY score DESC
