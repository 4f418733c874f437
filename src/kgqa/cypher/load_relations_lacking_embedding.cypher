// purpose: relations with a name but no embedding yet (resumable embedding phase)
// params:  none
// returns: id, name
MATCH (r:Relation)
WHERE r.embedding IS NULL AND r.name IS NOT NULL
RETURN r.id AS id, r.name AS name
