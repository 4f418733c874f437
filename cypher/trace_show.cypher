// purpose: read one reasoning trace back: the question's properties and its ranked paths with ordered steps
// params:  $id (string, question/trace id)
// returns: question (map), paths (list of {rank, score, text, steps: list of {hop, entity_id, entity_name,
//          relation_id, relation_name, score, intent}}); no row when the id is unknown
MATCH (q:Question {id: $id})
OPTIONAL MATCH (q)-[:HAS_PATH]->(p:Path)
OPTIONAL MATCH (p)-[s:STEP]->(e:Entity)
WITH q, p, s, e
ORDER BY p.rank, s.hop
WITH q, p, collect(CASE WHEN s IS NULL THEN null ELSE
       {hop: s.hop, entity_id: e.id, entity_name: e.name, relation_id: s.relation_id,
        relation_name: s.relation_name, score: s.score, intent: s.intent} END) AS steps
ORDER BY p.rank
WITH q, collect(CASE WHEN p IS NULL THEN null ELSE
       {rank: p.rank, score: p.score, text: p.text, steps: steps} END) AS paths
RETURN q {.*, created_at: toString(q.created_at)} AS question, paths
