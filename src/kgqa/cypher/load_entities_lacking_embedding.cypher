// purpose: of the given entity ids, those with a name but no name embedding yet (resumable embedding phase)
// params:  $ids (list<string>)
// returns: id, name
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE e.name_embedding IS NULL AND e.name IS NOT NULL
RETURN e.id AS id, e.name AS name
