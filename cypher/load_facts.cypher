// purpose: merge facts of ONE relation type between existing entities (idempotent: MERGE).
//          $$TYPE$$ is replaced by a validated Wikidata property id (graph.relation_type).
// params:  $pairs (list of [head id, tail id])
// returns: written (int)
UNWIND $pairs AS pair
MATCH (h:Entity {id: pair[0]})
MATCH (t:Entity {id: pair[1]})
MERGE (h)-[:$$TYPE$$]->(t)
RETURN count(*) AS written
