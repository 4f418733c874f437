// purpose: mKG-RAG stage 1 (Eq. 2) inside a scope (kgqa ask --doc / --docs): the top documents of $doc_ids by
//          the exact cosine between the query and each document's embedding, or with $maxp by the better of that
//          and the exact cosine of its best chunk (MaxP, as mkgrag_document_search) (complete documents only; no
//          vector index: the scope is the candidate set)
// params:  $vector: the query embedding; $k: documents to return (Kd); $doc_ids: the scope's document ids;
//          $maxp: rank by the better of the document's and its best chunk's cosine
// returns: id, title, score ((1 + cos) / 2, as mkgrag_document_search gives it)
MATCH (d:Document)
WHERE d.id IN $doc_ids AND d.status = 'complete'
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) WHERE $maxp
WITH d, vector.similarity.cosine(d.embedding, $vector) AS doc_cos,
     max(vector.similarity.cosine(c.embedding, $vector)) AS best_chunk
WITH d, CASE WHEN best_chunk IS NOT NULL AND best_chunk > doc_cos THEN best_chunk ELSE doc_cos END AS score
RETURN d.id AS id, d.title AS title, score
ORDER BY score DESC, id
LIMIT $k
