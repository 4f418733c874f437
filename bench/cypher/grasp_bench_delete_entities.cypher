// purpose: BENCHMARK ONLY (bench/grasp.py --hub): delete the synthetic hub graph's entities (and their facts) by id
// params:  $ids (list<string>, entity ids; the caller batches them)
// returns: deleted (int)
UNWIND $ids AS id
MATCH (e:Entity {id: id})
DETACH DELETE e
RETURN count(*) AS deleted
