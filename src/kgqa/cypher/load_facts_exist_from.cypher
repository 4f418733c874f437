// purpose: whether any of the given entities already has an outgoing fact (a first load may CREATE
//          facts without MERGE: a duplicate needs a fact with the same head)
// params:  $ids (list<string>)
// returns: found (bool)
UNWIND $ids AS id
MATCH (e:Entity {id: id})
WHERE EXISTS { (e)-->(:Entity) }
RETURN count(e) > 0 AS found
