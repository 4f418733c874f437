// purpose: GraSP training data (4.4): the outgoing facts of some entities, to verbalise 1- and 2-hop paths
//          into questions; at most $per_entity facts per entity
// params:  $ids (list<string>, entity ids), $relation_ids (list<string>, the catalogue's ids), $per_entity (int)
// returns: head_id, head_name, relation_id, tail_id, tail_name
UNWIND $ids AS hid
MATCH (h:Entity {id: hid})
CALL (h) {
  MATCH (h)-[f]->(t:Entity)
  WHERE type(f) IN $relation_ids
  RETURN type(f) AS rid, t
  ORDER BY rid, t.id
  LIMIT $per_entity
}
RETURN h.id AS head_id, h.name AS head_name, rid AS relation_id, t.id AS tail_id, t.name AS tail_name
