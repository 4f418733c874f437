// purpose: bench/mkgrag.py: single-stage graph retrieval baseline, exact: cosine of the query to EVERY
//          document entity, computed in Cypher (stage 2's query without the stage-1 document filter)
// params:  $vector: query embedding; $k
// returns: id, sim
MATCH (e:DocEntity)
WITH e, vector.similarity.cosine(e.embedding, $vector) AS sim
RETURN e.id AS id, sim
ORDER BY sim DESC
LIMIT $k
