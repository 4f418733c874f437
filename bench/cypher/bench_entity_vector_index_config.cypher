// purpose: BENCHMARK ONLY (bench/vector.py --sweep): the entity name vector index's state and config as Neo4j
//          reports them (to check that the settings under test were taken)
// params:  none
// returns: state, config (map)
SHOW INDEXES YIELD name, state, options
WHERE name = 'entity_name_embedding'
RETURN state, options.indexConfig AS config
