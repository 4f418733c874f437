// purpose: GraSP Section 4.1, one hop of relevance-based subgraph extraction. For each frontier entity and
//          each direction separately (outgoing, incoming): its distinct relation types that are in the
//          catalogue, ranked by the caller's relation scores (cos of the stored relation-name embedding and
//          SBERT(question)), the top $k1; per kept relation, at most $scan_cap neighbours (bounded work on
//          hubs) ranked by the cosine of their stored name embedding and SBERT(question), the top $k2.
//          Facts listed in $hidden (the drop-edges protocol) are invisible; nothing is written.
// params:  $frontier (list<string>, entity ids), $relation_scores (map: relation id -> cos in [-1, 1]),
//          $question (list<float>, SBERT(question), 384-d), $k1 (int), $k2 (int), $scan_cap (int),
//          $hidden (list<string>, fact keys "head_id|relation_id|tail_id" to hide; [] hides nothing)
// returns: frontier_id, direction ("out": frontier -[r]-> neighbour, "in": neighbour -[r]-> frontier),
//          relation_id, relation_score, neighbour_id, neighbour_name, entity_score (cos in [-1, 1], -1 when
//          the neighbour has no name embedding)
UNWIND $frontier AS fid
MATCH (e:Entity {id: fid})
CALL (e) {
  MATCH (e)-[f]->(t)
  WHERE size($hidden) = 0 OR NOT (e.id + '|' + type(f) + '|' + t.id) IN $hidden
  WITH DISTINCT type(f) AS rid
  WHERE $relation_scores[rid] IS NOT NULL
  WITH rid, $relation_scores[rid] AS rs
  ORDER BY rs DESC, rid
  LIMIT $k1
  CALL (e, rid) {
    MATCH (e)-[f:$(rid)]->(t:Entity)
    WHERE size($hidden) = 0 OR NOT (e.id + '|' + rid + '|' + t.id) IN $hidden
    WITH t
    LIMIT $scan_cap
    WITH t, coalesce(2.0 * vector.similarity.cosine(t.name_embedding, $question) - 1.0, -1.0) AS es
    ORDER BY es DESC, t.id
    LIMIT $k2
    RETURN t, es
  }
  RETURN 'out' AS direction, rid, rs, t, es
  UNION ALL
  MATCH (e)<-[f]-(t)
  WHERE size($hidden) = 0 OR NOT (t.id + '|' + type(f) + '|' + e.id) IN $hidden
  WITH DISTINCT type(f) AS rid
  WHERE $relation_scores[rid] IS NOT NULL
  WITH rid, $relation_scores[rid] AS rs
  ORDER BY rs DESC, rid
  LIMIT $k1
  CALL (e, rid) {
    MATCH (e)<-[f:$(rid)]-(t:Entity)
    WHERE size($hidden) = 0 OR NOT (t.id + '|' + rid + '|' + e.id) IN $hidden
    WITH t
    LIMIT $scan_cap
    WITH t, coalesce(2.0 * vector.similarity.cosine(t.name_embedding, $question) - 1.0, -1.0) AS es
    ORDER BY es DESC, t.id
    LIMIT $k2
    RETURN t, es
  }
  RETURN 'in' AS direction, rid, rs, t, es
}
RETURN e.id AS frontier_id, direction, rid AS relation_id, rs AS relation_score, t.id AS neighbour_id,
       t.name AS neighbour_name, es AS entity_score
