// purpose: bench/mkgrag.py: single-stage graph retrieval baseline: the top k of ALL document entities by the
//          docentity_embedding vector index (what the paper's first stage avoids)
// params:  $vector: query embedding; $k
// returns: id, score
CALL db.index.vector.queryNodes('docentity_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, score
