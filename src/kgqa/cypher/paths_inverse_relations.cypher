// purpose: the chain reader's training (reversed-direction negatives): for facts (head)-[relation]->(tail) of
//          generated walks, the relations of the facts that point back, (tail)-[inverse]->(head)
// params:  $facts (list<map {head: string, relation: string, tail: string}>, entity and relation ids),
//          $relation_ids (list<string>, the catalogue's ids)
// returns: relation_id, inverse_id, n (how many of the given facts have that inverse)
UNWIND $facts AS f
MATCH (t:Entity {id: f.tail})-[b]->(h:Entity {id: f.head})
WHERE type(b) IN $relation_ids AND type(b) <> f.relation
RETURN f.relation AS relation_id, type(b) AS inverse_id, count(*) AS n
ORDER BY relation_id, n DESC, inverse_id
