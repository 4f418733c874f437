// purpose: VisPath Eq. 2 with given relation scores (option compat_score=sketch): for each candidate start
//          entity, its outgoing relation with the highest score in $relation_scores (relation id → cosine of
//          the relation's best matching question phrase, the non-LLM relation sketch). Candidates without an
//          outgoing relation in the map return no row.
// params:  $ids (list<string>, candidate entity ids), $relation_scores (map: relation id → float, a cosine)
// returns: id, relation_id, relation_name, score (the cosine itself, not Neo4j's (1 + cos) / 2)
UNWIND $ids AS cid
MATCH (e:Entity {id: cid})
CALL (e) {
  MATCH (e)-[f]->(:Entity)
  WITH DISTINCT type(f) AS rid
  WHERE $relation_scores[rid] IS NOT NULL
  MATCH (r:Relation {id: rid})
  RETURN rid, r.name AS rname, $relation_scores[rid] AS score
  ORDER BY score DESC
  LIMIT 1
}
RETURN cid AS id, rid AS relation_id, rname AS relation_name, score
