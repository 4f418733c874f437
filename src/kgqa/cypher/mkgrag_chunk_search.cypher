// purpose: the chunks-only baseline (naive RAG, mKG-RAG ablation "w/o graph retrieval"): the top chunks of
//          the stage-1 documents by cosine to the query
// params:  $doc_ids: stage-1 document ids; $vector: query embedding; $k: chunks to return
// returns: id, doc_id, title, order, sections, heading_path, text, tokens, sim ((1 + cos) / 2), source, format,
//          page_start, page_end, page_offsets, page_numbers, figures (as mkgrag_chunks)
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE d.id IN $doc_ids
WITH d, c, vector.similarity.cosine(c.embedding, $vector) AS sim
RETURN c.id AS id, c.doc_id AS doc_id, d.title AS title, c.order AS order, c.sections AS sections,
       c.heading_path AS heading_path,
       c.text AS text, c.tokens AS tokens, sim, d.source AS source, d.format AS format,
       c.page_start AS page_start, c.page_end AS page_end, c.page_offsets AS page_offsets,
       c.page_numbers AS page_numbers,
       [(c)-[h:HAS_IMAGE]->(i:Image) | {sha256: i.sha256, path: i.path, caption: h.alt, page: h.page}] AS figures
ORDER BY sim DESC, id
LIMIT $k
