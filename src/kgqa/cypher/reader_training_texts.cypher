// purpose: reading questions for the span reader (the idea of WikiReading): entities with a text about them
//          (their description, and the chunks of loaded documents whose entities are linked to them), each
//          with some of its outgoing facts; what the loaded KG can teach a reader about reading for a relation
// params:  $relation_ids (list<string>, the catalogue's ids), $exclude_ids (list<string>, topic entities to
//          leave out), $exclude_docs (list<string>, document ids whose chunks to leave out), $limit (int,
//          entities), $chunks_per_entity (int), $facts_per_entity (int)
// returns: id, name, description, chunks (list<string>), facts (list of {relation_id, tail_id, tail_name,
//          tail_aliases})
MATCH (s:Entity)
WHERE NOT s.id IN $exclude_ids
  AND (s.description IS NOT NULL OR EXISTS { (:DocEntity)-[:SAME_AS]->(s) })
WITH s
ORDER BY s.id
LIMIT $limit
CALL (s) {
  OPTIONAL MATCH (d:DocEntity)-[:SAME_AS]->(s), (d)-[:FROM_CHUNK]->(c:Chunk)
  WHERE NOT c.doc_id IN $exclude_docs
  WITH DISTINCT c
  ORDER BY c.id
  RETURN collect(c.text)[..$chunks_per_entity] AS chunks
}
CALL (s) {
  MATCH (s)-[f]->(t:Entity)
  WHERE type(f) IN $relation_ids
  WITH type(f) AS rid, t
  ORDER BY rid, t.id
  LIMIT $facts_per_entity
  RETURN collect({relation_id: rid, tail_id: t.id, tail_name: t.name, tail_aliases: coalesce(t.aliases, [])})
         AS facts
}
WITH s, chunks, facts
WHERE size(facts) > 0
RETURN s.id AS id, s.name AS name, s.description AS description, chunks, facts
