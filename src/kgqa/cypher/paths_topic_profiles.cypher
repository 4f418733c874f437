// purpose: chain-reader training (kgqa train paths' weighted walks): for each entity that can start a generated
//          question (a name embedding and an outgoing fact of the catalogue), the relations it leaves by and how
//          many facts point at it
// params:  $relation_ids (list<string>, the relation catalogue's ids), $limit (int, most entities returned)
// returns: id, relation_ids (distinct, outgoing), in_degree
MATCH (e:Entity)
WHERE e.name_embedding IS NOT NULL
CALL (e) {
  MATCH (e)-[f]->(:Entity)
  WHERE type(f) IN $relation_ids
  RETURN collect(DISTINCT type(f)) AS rels
}
WITH e, rels
WHERE size(rels) > 0
RETURN e.id AS id, rels AS relation_ids, COUNT { (e)<--(:Entity) } AS in_degree
ORDER BY id
LIMIT $limit
