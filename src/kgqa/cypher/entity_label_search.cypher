// purpose: entities one of whose label keys (normalised name or alias, Entity.label_keys) equals the
//          query's: an exact term lookup in the keyword-analysed full-text index entity_label_keys
// params:  $query (string: '"' + key + '"', key = kgqa.kg.label_key(text): words and single spaces only,
//          so nothing of the text is read as Lucene syntax), $k (int)
// returns: id, name, description
CALL db.index.fulltext.queryNodes('entity_label_keys', $query, {limit: $k}) YIELD node
RETURN node.id AS id, node.name AS name, node.description AS description
