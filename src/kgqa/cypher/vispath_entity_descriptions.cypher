// purpose: VisPath answer typing (terminal selection): the descriptions of the entities on candidate paths
// params:  $ids (list<string>, entity ids)
// returns: id, description (null when the entity has none)
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})
RETURN e.id AS id, e.description AS description
