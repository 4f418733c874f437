// purpose: whether an entity exists (validates a load checkpoint before resuming from it)
// params:  $id (string)
// returns: found (bool)
OPTIONAL MATCH (e:Entity {id: $id})
RETURN e IS NOT NULL AS found
