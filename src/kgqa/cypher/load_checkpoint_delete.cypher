// purpose: forget a stale load checkpoint (its last written row is no longer in the graph)
// params:  $key (string)
// returns: deleted (int)
MATCH (c:LoadCheckpoint {key: $key})
DELETE c
RETURN count(*) AS deleted
