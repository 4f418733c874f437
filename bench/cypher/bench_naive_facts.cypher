// purpose: BENCHMARK BASELINE ONLY (bench/load.py): the plain loader most users write: per
//          10k-row chunk of the triple file, per relation type in it, MERGE both ends and the fact.
//          $$TYPE$$ is replaced by a validated Wikidata property id (graph.relation_type).
// params:  $pairs (list of [head id, tail id])
// returns: written (int)
UNWIND $pairs AS pair
MERGE (h:Entity {id: pair[0]})
MERGE (t:Entity {id: pair[1]})
MERGE (h)-[:$$TYPE$$]->(t)
RETURN count(*) AS written
