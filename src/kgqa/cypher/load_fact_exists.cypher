// purpose: whether a fact exists (validates a load checkpoint before resuming from it)
// params:  $h (string), $type (string, a Wikidata property id), $t (string)
// returns: found (bool)
OPTIONAL MATCH (:Entity {id: $h})-[f]->(:Entity {id: $t})
WHERE type(f) = $type
RETURN count(f) > 0 AS found
