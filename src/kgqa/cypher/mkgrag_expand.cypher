// purpose: mKG-RAG subgraph expansion (Eq. 3), one BFS level: the neighbours of the frontier entities
//          inside the query-specific graph whose similarity to the query passes the threshold, with the
//          relation that reaches them (either direction)
// params:  $ids: frontier DocEntity ids; $doc_ids: stage-1 document ids; $vector: query embedding;
//          $min_sim: threshold as (1 + cos) / 2
// returns: from_id, id, doc_id, name, type, description, chunk_ids, sim, rel_id, head_id, head, tail_id, tail,
//          summary, rel_chunk_ids, rel_phrase, rel_relation_name (the CPU extractor's, else null), rel_sim
UNWIND $ids AS fid
MATCH (f:DocEntity {id: fid})-[r:DOC_REL]-(n:DocEntity)
WHERE n.doc_id IN $doc_ids AND NOT n.id IN $ids
WITH f, r, n, vector.similarity.cosine(n.embedding, $vector) AS sim
WHERE sim > $min_sim
MATCH (h:DocEntity)-[r]->(t:DocEntity)
RETURN f.id AS from_id, n.id AS id, n.doc_id AS doc_id, n.name AS name, n.type AS type,
       n.description AS description, n.chunk_ids AS chunk_ids, sim,
       r.id AS rel_id, h.id AS head_id, h.name AS head, t.id AS tail_id, t.name AS tail, r.summary AS summary,
       r.chunk_ids AS rel_chunk_ids, r.phrase AS rel_phrase, r.relation_name AS rel_relation_name,
       vector.similarity.cosine(r.embedding, $vector) AS rel_sim
ORDER BY sim DESC, id
