// purpose: GraSP training data (4.4): entities that can start a generated question (a name embedding and at
//          least one outgoing fact of the catalogue), in id order; the caller shuffles them with its seed
// params:  $relation_ids (list<string>, the relation catalogue's ids), $limit (int, most ids returned)
// returns: id
MATCH (e:Entity)
WHERE e.name_embedding IS NOT NULL AND EXISTS { MATCH (e)-[f]->(:Entity) WHERE type(f) IN $relation_ids }
RETURN e.id AS id
ORDER BY id
LIMIT $limit
