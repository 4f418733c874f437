// purpose: remove one reasoning trace (its Question, Path and Subgraph nodes; the KG's entities and facts stay)
// params:  $id (string, question/trace id)
// returns: removed (int, 0 or 1)
MATCH (q:Question {id: $id})
OPTIONAL MATCH (q)-[:HAS_PATH|HAS_SUBGRAPH]->(p:Path|Subgraph)
WITH q, collect(p) AS ps
FOREACH (x IN ps | DETACH DELETE x)
DETACH DELETE q
RETURN count(*) AS removed
