// purpose: BENCHMARK ONLY (bench/vector.py): create entity nodes carrying a name embedding
// params:  $rows (list of {id: string, vector: list<float>})
// returns: written (int)
UNWIND $rows AS row
CREATE (e:Entity {id: row.id, name: row.id})
WITH e, row
CALL db.create.setNodeVectorProperty(e, 'name_embedding', row.vector)
RETURN count(*) AS written
