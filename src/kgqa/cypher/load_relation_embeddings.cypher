// purpose: store relation name embeddings (384-d float vectors)
// params:  $rows (list of {id: 'P…', vector: list<float>})
// returns: written (int)
UNWIND $rows AS row
MATCH (r:Relation {id: row.id})
CALL db.create.setNodeVectorProperty(r, 'embedding', row.vector)
RETURN count(*) AS written
