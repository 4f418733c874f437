// purpose: mKG-RAG stage 1 with doc_score=maxp: the top documents by the better of the cosine between the query
//          and the document's embedding (Eq. 2) and the best cosine of its chunks among the candidates (MaxP, Dai and
//          Callan, SIGIR 2019, arXiv:1905.09217: a long document's embedding holds only its first 256 word pieces,
//          so a question about its 30th paragraph is nearer that paragraph than the document). Candidates as
//          mkgrag_document_search: the documents the document_embedding index returns and those whose chunks the
//          chunk_embedding index returns, each asked for $ef; every cosine exact
// params:  $vector: the query embedding; $k: documents to return (Kd); $ef: candidates asked of each index
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
WITH d, max(CASE WHEN c IS NULL THEN null ELSE vector.similarity.cosine(c.embedding, $vector) END) AS best_chunk
WITH d, vector.similarity.cosine(d.embedding, $vector) AS doc_cos, best_chunk
WITH d, CASE WHEN best_chunk IS NOT NULL AND best_chunk > doc_cos THEN best_chunk ELSE doc_cos END AS score
RETURN d.id AS id, d.title AS title, score
ORDER BY score DESC, id
LIMIT $k
