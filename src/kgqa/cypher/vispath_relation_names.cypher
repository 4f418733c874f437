// purpose: names of catalogue relations by id (bench/hops.py embeds them when the catalogue has no embeddings)
// params:  $ids (list<string>)
// returns: id, name
UNWIND $ids AS rid
MATCH (r:Relation {id: rid})
RETURN r.id AS id, r.name AS name
