// purpose: entities whose name embedding is nearest to a query vector (vector index)
// params:  $k (int, how many), $vector (list<float>, 384-d, normalized)
// returns: id, name, description, score (cosine similarity mapped to [0,1] by Neo4j)
CALL db.index.vector.queryNodes('entity_name_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, node.name AS name, node.description AS description, score
ORDER BY score DESC
