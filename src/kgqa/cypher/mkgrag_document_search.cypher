// purpose: mKG-RAG stage 1 (Eq. 2): the top documents by cosine between the query and each document's
//          embedding (complete documents only). Candidates: the documents the document_embedding vector
//          index returns and those whose chunks the chunk_embedding index returns, each index asked for
//          $ef (≥ $k: HNSW's beam is k, and asked for k alone the quantized approximate index misses the
//          nearest documents when a few long documents sit among thousands of short ones); ranked by
//          the exact cosine of the document's embedding
// params:  $vector: the query embedding; $k: documents to return (Kd); $ef: candidates asked of each index
// returns: id, title, score ((1 + cos) / 2, as the vector index gives it)
CALL () {
  CALL db.index.vector.queryNodes('document_embedding', $ef, $vector) YIELD node
  RETURN node AS d
  UNION
  CALL db.index.vector.queryNodes('chunk_embedding', $ef, $vector) YIELD node
  MATCH (d:Document)-[:HAS_CHUNK]->(node)
  RETURN d
}
WITH DISTINCT d WHERE d.status = 'complete'
WITH d, vector.similarity.cosine(d.embedding, $vector) AS score
RETURN d.id AS id, d.title AS title, score
ORDER BY score DESC, id
LIMIT $k
