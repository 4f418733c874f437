// purpose: store entity name embeddings (384-d float vectors, validated by Neo4j for the vector index)
// params:  $rows (list of {id: 'Q…', vector: list<float>})
// returns: written (int)
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
CALL db.create.setNodeVectorProperty(e, 'name_embedding', row.vector)
RETURN count(*) AS written
