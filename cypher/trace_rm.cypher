// purpose: remove one reasoning trace (its Question and Path nodes; the KG's entities and facts stay)
// params:  $id (string, question/trace id)
// returns: removed (int, 0 or 1)
MATCH (q:Question {id: $id})
OPTIONAL MATCH (q)-[:HAS_PATH]->(p:Path)
WITH q, collect(p) AS ps
FOREACH (x IN ps | DETACH DELETE x)
DETACH DELETE q
RETURN count(*) AS removed
