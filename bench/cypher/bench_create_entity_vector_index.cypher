// purpose: BENCHMARK ONLY (bench/vector.py --sweep): create the entity name vector index with the HNSW
//          settings under test (the schema's own statement is in schema.cypher)
// params:  $m (int, vector.hnsw.m), $ef_construction (int), $quantization (bool, vector.quantization.enabled)
// returns: nothing
CREATE VECTOR INDEX entity_name_embedding IF NOT EXISTS
FOR (e:Entity) ON e.name_embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine',
                       `vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction,
                       `vector.quantization.enabled`: $quantization}}
