// purpose: BENCHMARK ONLY (bench/vector.py): drop the entity name vector index so that its build
//          can be timed on its own (`kgqa neo4j init` / graph.apply_schema() creates it again)
// params:  none
// returns: nothing
DROP INDEX entity_name_embedding IF EXISTS
