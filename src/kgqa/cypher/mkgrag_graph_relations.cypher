// purpose: mKG-RAG stage 2 (Section 3.2.2): the best-matching relations of the query-specific graph (the
//          stage-1 documents only), by cosine computed here; with $visual, the better of the relation's text
//          embedding and its region's (the multimodal relation (e, r) of Eq. 1)
// params:  $doc_ids: stage-1 document ids; $vector: query embedding; $k: rows to return; $visual: bool
// returns: id, doc_id, head_id, head, tail_id, tail, summary, chunk_ids, phrase, relation_name (the CPU
//          extractor's relation phrase and its catalogue name, else null), text_sim, region_sim, sim,
//          region: {category, bbox, image} or null
MATCH (h:DocEntity)-[r:DOC_REL]->(t:DocEntity) WHERE h.doc_id IN $doc_ids
WITH h, r, t, vector.similarity.cosine(r.embedding, $vector) AS text_sim,
     CASE WHEN $visual AND r.region_embedding IS NOT NULL
          THEN vector.similarity.cosine(r.region_embedding, $vector) END AS region_sim
WITH h, r, t, text_sim, region_sim,
     CASE WHEN region_sim IS NOT NULL AND region_sim > text_sim THEN region_sim ELSE text_sim END AS sim
RETURN r.id AS id, r.doc_id AS doc_id, h.id AS head_id, h.name AS head, t.id AS tail_id, t.name AS tail,
       r.summary AS summary, r.chunk_ids AS chunk_ids, r.phrase AS phrase, r.relation_name AS relation_name,
       text_sim, region_sim, sim,
       CASE WHEN region_sim IS NULL THEN null
            ELSE {category: r.region_category, bbox: r.region_bbox, image: r.region_image} END AS region
ORDER BY sim DESC, id
LIMIT $k
