// purpose: entities with a label key that may be too long for the entity_label_keys full-text index
//          (over $max_chars characters; the caller measures the exact UTF-8 bytes), to drop those keys
//          before the index is rebuilt (`kgqa neo4j init`)
// params:  $max_chars (int)
// returns: id, label_keys
MATCH (e:Entity)
WHERE any(k IN coalesce(e.label_keys, []) WHERE size(k) > $max_chars)
RETURN e.id AS id, e.label_keys AS label_keys
