// purpose: store one reasoning trace of any method, linked to the graph nodes its evidence used:
//          (:Question)-[:HAS_PATH {rank}]->(:Path)-[:STEP {hop, …}]->(node)            path evidence
//          (:Question)-[:USED {rank, score, kind, sentence}]->(node)                 chunks, documents (kind
//          'support' and the sentence: the chunk the answer's supporting sentence was read from)
//          (:Question)-[:HAS_SUBGRAPH {rank}]->(:Subgraph)-[:CONTAINS {weight}]->(node) subgraph evidence
//          (:Question)-[:STARTS_AT]->(:Entity), -[:ANSWERED_BY]->(:Entity)            when known
//          Nodes are found by a whitelisted label and id (the same UNION as trace_resolve.cypher, which the
//          writer runs first and which must resolve every reference). Only creates trace nodes and
//          relationships leaving them; never touches the KG's nodes, properties or facts.
// params:  $question (map of scalars: id, text, image_sha256, answer, answer_id, method, seconds, cost (json),
//          fallbacks (json), sufficient, stop_reason, start_entity_id, start_entity_name, hops, citation),
//          $paths (list of {id, rank, score, text, steps: list of {hop, label, node_id, score, relation_id,
//          relation_name, intent}}), $uses (list of {label, id, rank, score, kind, sentence, page, citation}: page and citation
//          say where a chunk is, "falcon_9.pdf p. 2 · History"),
//          $subgraphs (list of {id, rank, note, edges (json), nodes: list of {label, id, weight}})
// returns: id, paths (int), steps (int), uses (int), subgraph_nodes (int)
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
  CALL (s) {
    MATCH (n:Entity {id: s.node_id}) WHERE s.label = 'Entity' RETURN n
    UNION
    MATCH (n:DocEntity {id: s.node_id}) WHERE s.label = 'DocEntity' RETURN n
  }
  CREATE (path)-[:STEP {hop: s.hop, score: s.score, relation_id: s.relation_id,
                        relation_name: s.relation_name, intent: s.intent}]->(n)
  RETURN count(DISTINCT path) AS paths, count(*) AS steps
}
CALL (q) {
  UNWIND $uses AS u
  CALL (u) {
    MATCH (n:Chunk {id: u.id}) WHERE u.label = 'Chunk' RETURN n
    UNION
    MATCH (n:Document {id: u.id}) WHERE u.label = 'Document' RETURN n
    UNION
    MATCH (n:DocEntity {id: u.id}) WHERE u.label = 'DocEntity' RETURN n
    UNION
    MATCH (n:Entity {id: u.id}) WHERE u.label = 'Entity' RETURN n
    UNION
    MATCH (n:Image {sha256: u.id}) WHERE u.label = 'Image' RETURN n
  }
  CREATE (q)-[:USED {rank: u.rank, score: u.score, kind: u.kind, sentence: u.sentence, page: u.page,
                    citation: u.citation}]->(n)
  RETURN count(*) AS uses
}
CALL (q) {
  UNWIND $subgraphs AS g
  CREATE (q)-[:HAS_SUBGRAPH {rank: g.rank}]->(sg:Subgraph {id: g.id, rank: g.rank, note: g.note, edges: g.edges})
  WITH sg, g
  UNWIND g.nodes AS x
  CALL (x) {
    MATCH (n:Entity {id: x.id}) WHERE x.label = 'Entity' RETURN n
    UNION
    MATCH (n:DocEntity {id: x.id}) WHERE x.label = 'DocEntity' RETURN n
    UNION
    MATCH (n:Chunk {id: x.id}) WHERE x.label = 'Chunk' RETURN n
  }
  CREATE (sg)-[:CONTAINS {weight: x.weight}]->(n)
  RETURN count(*) AS subgraph_nodes
}
RETURN q.id AS id, paths, steps, uses, subgraph_nodes
