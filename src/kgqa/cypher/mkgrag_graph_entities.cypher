// purpose: mKG-RAG stage 2 (Section 3.2.2): the best-matching entities of the query-specific graph, i.e. of
//          the stage-1 documents only, by cosine computed here (Neo4j 5.26's vector index cannot pre-filter
//          by document). With $visual, an entity's score is the better of its text embedding and the
//          embedding of an image region matched to it (the multimodal entity (n, v) of Eq. 1).
// params:  $doc_ids: stage-1 document ids; $vector: query embedding; $k: rows to return; $visual: bool
// returns: id, doc_id, name, type, description, chunk_ids, text_sim, region_sim, sim (all (1 + cos) / 2),
//          region: {category, bbox, image} of the best region or null
MATCH (e:DocEntity) WHERE e.doc_id IN $doc_ids
WITH e, vector.similarity.cosine(e.embedding, $vector) AS text_sim
OPTIONAL MATCH (g:Region)-[:DEPICTS]->(e) WHERE $visual AND g.embedding IS NOT NULL
WITH e, text_sim, g, CASE WHEN g IS NULL THEN null ELSE vector.similarity.cosine(g.embedding, $vector) END AS gs
ORDER BY gs DESC
WITH e, text_sim, collect({category: g.category, bbox: g.bbox, image: g.image_sha256, sim: gs})[0] AS best
WITH e, text_sim, CASE WHEN best.sim IS NULL THEN null ELSE best END AS region
WITH e, text_sim, region, CASE WHEN region IS NOT NULL AND region.sim > text_sim THEN region.sim ELSE text_sim END AS sim
RETURN e.id AS id, e.doc_id AS doc_id, e.name AS name, e.type AS type, e.description AS description,
       e.chunk_ids AS chunk_ids, text_sim, region.sim AS region_sim, sim,
       CASE WHEN region IS NULL THEN null ELSE region {.category, .bbox, .image} END AS region
ORDER BY sim DESC, id
LIMIT $k
