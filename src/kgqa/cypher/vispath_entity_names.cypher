// purpose: names of entities by id (bench/hops.py embeds the names of the entities it touches)
// params:  $ids (list<string>)
// returns: id, name
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})
RETURN e.id AS id, e.name AS name
