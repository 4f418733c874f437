// purpose: store one reasoning trace: (:Question)-[:HAS_PATH {rank}]->(:Path)-[:STEP {hop, …}]->(:Entity),
//          plus (:Question)-[:STARTS_AT]->(start entity) and -[:ANSWERED_BY]->(answer entity) when known.
//          Only creates trace nodes and relationships from them; never touches Entity properties or facts.
// params:  $question (map of scalars: id, text, image_sha256, answer, answer_id, method, seconds, cost (json),
//          sufficient, stop_reason, start_entity_id), $paths (list of {id, rank, score, text,
//          steps: list of {hop, entity_id, score, relation_id, relation_name, intent}})
// returns: id, paths (int), steps (int)
CREATE (q:Question {id: $question.id})
SET q += $question, q.created_at = datetime()
WITH q
CALL (q) {
  OPTIONAL MATCH (s:Entity {id: $question.start_entity_id})
  FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | CREATE (q)-[:STARTS_AT]->(s))
  WITH q
  OPTIONAL MATCH (a:Entity {id: $question.answer_id})
  FOREACH (_ IN CASE WHEN a IS NULL THEN [] ELSE [1] END | CREATE (q)-[:ANSWERED_BY]->(a))
  RETURN 1 AS linked
}
CALL (q) {
  UNWIND $paths AS p
  CREATE (q)-[:HAS_PATH {rank: p.rank}]->(path:Path {id: p.id, rank: p.rank, score: p.score, text: p.text})
  WITH path, p
  UNWIND p.steps AS s
  MATCH (e:Entity {id: s.entity_id})
  CREATE (path)-[:STEP {hop: s.hop, score: s.score, relation_id: s.relation_id,
                        relation_name: s.relation_name, intent: s.intent}]->(e)
  RETURN count(DISTINCT path) AS paths, count(*) AS steps
}
RETURN q.id AS id, paths, steps
