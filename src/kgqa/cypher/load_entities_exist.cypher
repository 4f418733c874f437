// purpose: whether any of the given entity ids is already in the graph (a first load may CREATE)
// params:  $ids (list<string>)
// returns: found (bool)
UNWIND $ids AS id
OPTIONAL MATCH (e:Entity {id: id})
RETURN count(e) > 0 AS found
