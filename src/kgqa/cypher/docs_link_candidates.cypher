// purpose: Wikidata entity candidates for a document's entities, all in one round trip (SAME_AS linking):
//          per entity, the entities whose name or alias equals its name (label key, the keyword-analysed
//          full-text index entity_label_keys: found whatever the approximate vector index returns, among
//          millions of entities too) and the nearest names by the entity-name vector index
// params:  $rows (list of {i: int, vector: the entity's name embedding, query: '"' + key + '"' with
//          key = kgqa.core.kg.label_key(name), or null when the name has no key}); $k: candidates of each
//          kind; $ef: how many the approximate index is asked for (≥ $k: a wider search finds the true
//          nearest $k more often; HNSW's beam is k)
// returns: one row per input row: i, label (list of {id, name, aliases, description, score 1.0: the labels
//          agree exactly}, the index's order), vector (list of the same, score the index's (1 + cos) / 2,
//          best first)
UNWIND $rows AS row
CALL (row) {
  WITH row WHERE row.query IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_label_keys', row.query, {limit: $k}) YIELD node
  RETURN collect({id: node.id, name: node.name, aliases: coalesce(node.aliases, []),
                  description: node.description, score: 1.0}) AS label
}
CALL (row) {
  CALL db.index.vector.queryNodes('entity_name_embedding', $ef, row.vector) YIELD node, score
  WITH node, score ORDER BY score DESC LIMIT $k
  RETURN collect({id: node.id, name: node.name, aliases: coalesce(node.aliases, []),
                  description: node.description, score: score}) AS vector
}
RETURN row.i AS i, label, vector
