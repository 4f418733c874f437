// purpose: BENCHMARK ONLY (bench/grasp.py --hub): delete the synthetic hub graph's relation catalogue entries by id
// params:  $ids (list<string>, relation ids)
// returns: deleted (int)
UNWIND $ids AS id
MATCH (r:Relation {id: id})
DELETE r
RETURN count(*) AS deleted
