// purpose: Wikidata entity candidates for one document entity, by the entity-name vector index (SAME_AS linking)
// params:  $vector: the document entity's name embedding; $k: candidates; $ef: how many the approximate
//          index is asked for (≥ $k: a wider search finds the true nearest $k more often; HNSW's beam is k)
// returns: id, name, aliases, description, score (cosine, from the index)
CALL db.index.vector.queryNodes('entity_name_embedding', $ef, $vector) YIELD node, score
WITH node, score ORDER BY score DESC LIMIT $k
RETURN node.id AS id, node.name AS name, coalesce(node.aliases, []) AS aliases,
       node.description AS description, score
