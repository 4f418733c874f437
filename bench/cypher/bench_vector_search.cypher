// purpose: BENCHMARK ONLY (bench/vector.py): the k nearest entity ids by name embedding (vector index)
// params:  $k (int), $vector (list<float>, 384-d)
// returns: id, score
CALL db.index.vector.queryNodes('entity_name_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, score
