// purpose: reference images of candidate answer entities (VisPath terminal answer selection, IV-D)
// params:  $ids (list<string>, entity ids)
// returns: id, paths (list<string>, up to 3 image file paths)
UNWIND $ids AS eid
MATCH (i:Image)-[:DEPICTS]->(e:Entity {id: eid})
WITH e, i ORDER BY i.sha256
RETURN e.id AS id, collect(i.path)[0..3] AS paths
