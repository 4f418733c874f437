// purpose: VisPath Eq. 5-6 first cut inside Neo4j: the outgoing facts of each frontier entity, pre-ranked by
//          the relation's intent score (computed by the caller from the catalogue embeddings, no property
//          read per edge), then the best $pre_cap of them re-ranked with the tail's stored name embedding
//          (vector.similarity.cosine), keeping $cap per frontier entity for exact Eq. 5 scoring in Python.
// params:  $frontier (list<string>, entity ids), $relation_scores (map: relation id -> its score for q_i,
//          cos(SBERT(r), SBERT(q_i)) or the relation's best question-phrase match, scaled by the caller to weigh
//          relation against tail in the cut: engine/vispath.py first_cut_relation_scores),
//          $intent (list<float>, SBERT(q_i), 384-d), $pre_cap (int), $cap (int),
//          $per_relation (int, at most this many edges per relation of one entity are kept; 0 = no cap),
//          $hidden (list<string>, fact keys "head_id|relation_id|tail_id" hidden by the incomplete-KG protocol;
//          [] hides nothing)
// returns: head_id, head_name, relation_id, tail_id, tail_name, approx (mean of relation and tail cosines)
UNWIND $frontier AS fid
MATCH (e:Entity {id: fid})
CALL (e) {
  MATCH (e)-[f]->(t:Entity)
  WHERE size($hidden) = 0 OR NOT (e.id + '|' + type(f) + '|' + t.id) IN $hidden
  WITH type(f) AS rid, t, coalesce($relation_scores[type(f)], -1.0) AS rs
  ORDER BY rs DESC
  LIMIT $pre_cap
  WITH rid, t, (rs + coalesce(2.0 * vector.similarity.cosine(t.name_embedding, $intent) - 1.0, 0.0)) / 2.0 AS approx
  ORDER BY approx DESC
  WITH rid, collect({id: t.id, name: t.name, approx: approx}) AS edges
  UNWIND (CASE WHEN $per_relation > 0 THEN edges[..$per_relation] ELSE edges END) AS k
  RETURN rid, k.id AS tail_id, k.name AS tail_name, k.approx AS approx
  ORDER BY approx DESC
  LIMIT $cap
}
RETURN e.id AS head_id, e.name AS head_name, rid AS relation_id, tail_id, tail_name, approx
