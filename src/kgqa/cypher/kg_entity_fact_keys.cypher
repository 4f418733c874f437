// purpose: every fact touching one entity, in both directions, as a key "head_id|relation_id|tail_id"
//          (the incomplete-KG protocol picks the share of them to hide at query time; read only)
// params:  $id (string, entity id), $relation_ids (list<string>, the relation catalogue's ids: facts only,
//          no trace or image links)
// returns: key (one row per distinct fact)
MATCH (e:Entity {id: $id})-[f]-(o:Entity)
WHERE type(f) IN $relation_ids
RETURN DISTINCT startNode(f).id + '|' + type(f) + '|' + endNode(f).id AS key
