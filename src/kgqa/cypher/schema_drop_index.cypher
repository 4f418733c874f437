// purpose: drop one index by name, to rebuild a FAILED one (`kgqa neo4j init`; schema.cypher creates it again)
// params:  $name (an index name read from SHOW INDEXES)
// returns: nothing
DROP INDEX $name IF EXISTS
