// purpose: mKG-RAG stage 1 (Eq. 2): the top documents by cosine between the query and each document's
//          embedding (complete documents only). Candidates: the documents the document_embedding vector
//          index returns and those whose chunks the chunk_embedding index returns, each index asked for
//          $ef (≥ $k: HNSW's beam is k, and asked for k alone the quantized approximate index misses the
//          nearest documents when a few long documents sit among thousands of short ones); ranked by
//          the exact cosine of the document's embedding, or with $maxp by the better of that and the exact
//          cosine of its best chunk among the candidates (MaxP, Dai and Callan, SIGIR 2019, arXiv:1905.09217:
//          a long document's embedding holds only its first 256 word pieces)
// params:  $vector: the query embedding; $k: documents to return (Kd); $ef: candidates asked of each index;
//          $maxp: rank by the better of the document's and its best candidate chunk's cosine
// returns: id, title, score ((1 + cos) / 2, as the vector index gives it)
CALL () {
  CALL db.index.vector.queryNodes('document_embedding', $ef, $vector) YIELD node
  RETURN node AS d, null AS c
  UNION
  CALL db.index.vector.queryNodes('chunk_embedding', $ef, $vector) YIELD node
  MATCH (d:Document)-[:HAS_CHUNK]->(node)
  RETURN d, node AS c
}
WITH d, c WHERE d.status = 'complete'
WITH d, max(CASE WHEN $maxp THEN vector.similarity.cosine(c.embedding, $vector) END) AS best_chunk
WITH d, vector.similarity.cosine(d.embedding, $vector) AS doc_cos, best_chunk
WITH d, CASE WHEN best_chunk IS NOT NULL AND best_chunk > doc_cos THEN best_chunk ELSE doc_cos END AS score
RETURN d.id AS id, d.title AS title, score
ORDER BY score DESC, id
LIMIT $k
