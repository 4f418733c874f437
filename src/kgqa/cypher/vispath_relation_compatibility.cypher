// purpose: VisPath Eq. 2, graph-aware validation: for each candidate start entity, the outgoing relation
//          whose stored catalogue embedding is most similar to SBERT(Q). Candidates without outgoing facts
//          return no row.
// params:  $ids (list<string>, candidate entity ids), $question_vector (list<float>, 384-d, normalised)
// returns: id, relation_id, relation_name, similarity (Neo4j's cosine mapped to [0,1]: (1 + cos) / 2)
UNWIND $ids AS cid
MATCH (e:Entity {id: cid})
CALL (e) {
  MATCH (e)-[f]->(:Entity)
  WITH DISTINCT type(f) AS rid
  MATCH (r:Relation {id: rid})
  WHERE r.embedding IS NOT NULL
  RETURN rid, r.name AS rname, vector.similarity.cosine(r.embedding, $question_vector) AS similarity
  ORDER BY similarity DESC
  LIMIT 1
}
RETURN cid AS id, rid AS relation_id, rname AS relation_name, similarity
