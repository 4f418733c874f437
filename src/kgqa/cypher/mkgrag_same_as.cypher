// purpose: the Wikidata entities document entities are linked to (to ground an mKG-RAG answer as an Entity id)
// params:  $ids: DocEntity ids
// returns: docentity_id, name, entity_id, score
UNWIND $ids AS id
MATCH (d:DocEntity {id: id})-[s:SAME_AS]->(e:Entity)
RETURN d.id AS docentity_id, d.name AS name, e.id AS entity_id, s.score AS score
