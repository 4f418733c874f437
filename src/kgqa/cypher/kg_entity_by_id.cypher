// purpose: one entity by its Wikidata id (the start entity given with --entity, or a trace check)
// params:  $id (string, 'Q…')
// returns: id, name, description (no row when the id is not in the graph)
MATCH (e:Entity {id: $id})
RETURN e.id AS id, e.name AS name, e.description AS description
