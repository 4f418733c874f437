// purpose: Wikidata entity candidates for one document entity, by the entity-name vector index (SAME_AS linking)
// params:  $vector: the document entity's name embedding; $k: candidates
// returns: id, name, aliases, description, score (cosine, from the index)
CALL db.index.vector.queryNodes('entity_name_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, node.name AS name, coalesce(node.aliases, []) AS aliases,
       node.description AS description, score
