// purpose: a first load of many entities drops the entity name vector index before writing their
//          vectors and builds it once afterwards (graph.apply_schema(): schema.cypher creates it
//          IF NOT EXISTS). One build is faster than inserting each vector into a growing HNSW graph.
// params:  none
// returns: nothing
DROP INDEX entity_name_embedding IF EXISTS
