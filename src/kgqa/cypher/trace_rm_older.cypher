// purpose: remove reasoning traces created more than $days days ago (Question, Path and Subgraph nodes only)
// params:  $days (float, age in days; 0 removes every trace)
// returns: removed (int)
MATCH (q:Question)
WHERE q.created_at IS NULL OR q.created_at < datetime() - duration({seconds: toInteger($days * 86400)})
OPTIONAL MATCH (q)-[:HAS_PATH|HAS_SUBGRAPH]->(p:Path|Subgraph)
WITH q, collect(p) AS ps
FOREACH (x IN ps | DETACH DELETE x)
DETACH DELETE q
RETURN count(*) AS removed
