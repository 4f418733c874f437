// purpose: GraSP node features: the name and stored name embedding of each subgraph entity, in one read
// params:  $ids (list<string>, entity ids)
// returns: id, name, embedding (list<float> 384-d, or null when the loader has not embedded it)
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})
RETURN e.id AS id, e.name AS name, e.name_embedding AS embedding
