// purpose: read one reasoning trace back: the question's properties, its ranked paths with ordered steps,
//          the nodes it used (chunks, documents, …) and its subgraphs
// params:  $id (string, question/trace id)
// returns: question (map), paths (list of {rank, score, text, steps: list of {hop, entity_id, entity_name,
//          label, relation_id, relation_name, score, intent}}), uses (list of {label, id, name, rank, score,
//          kind, sentence, page, citation}), subgraphs (list of {rank, note, edges (json), nodes: int}); no row when the id is unknown
MATCH (q:Question {id: $id})
CALL (q) {
  OPTIONAL MATCH (q)-[:HAS_PATH]->(p:Path)
  OPTIONAL MATCH (p)-[s:STEP]->(e)
  WITH p, s, e
  ORDER BY p.rank, s.hop
  WITH p, collect(CASE WHEN s IS NULL THEN null ELSE
         {hop: s.hop, entity_id: coalesce(e.id, e.sha256), entity_name: e.name, label: labels(e)[0],
          relation_id: s.relation_id, relation_name: s.relation_name, score: s.score, intent: s.intent} END) AS steps
  ORDER BY p.rank
  RETURN collect(CASE WHEN p IS NULL THEN null ELSE {rank: p.rank, score: p.score, text: p.text, steps: steps} END)
         AS paths
}
CALL (q) {
  OPTIONAL MATCH (q)-[u:USED]->(n)
  WITH u, n ORDER BY u.rank
  RETURN collect(CASE WHEN u IS NULL THEN null ELSE
         {label: labels(n)[0], id: coalesce(n.id, n.sha256), name: coalesce(n.name, n.title), rank: u.rank,
          score: u.score, kind: u.kind, sentence: u.sentence, page: u.page, citation: u.citation} END) AS uses
}
CALL (q) {
  OPTIONAL MATCH (q)-[:HAS_SUBGRAPH]->(g:Subgraph)
  OPTIONAL MATCH (g)-[c:CONTAINS]->()
  WITH g, count(c) AS n ORDER BY g.rank
  RETURN collect(CASE WHEN g IS NULL THEN null ELSE {rank: g.rank, note: g.note, edges: g.edges, nodes: n} END)
         AS subgraphs
}
RETURN q {.*, created_at: toString(q.created_at)} AS question, paths, uses, subgraphs
