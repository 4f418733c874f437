// purpose: the source chunks of the retrieved graph elements (mKG-RAG context), with their similarity to the query
// params:  $ids: chunk ids; $vector: query embedding
// returns: id, doc_id, title, order, sections, heading_path (document title › topic › section), text, tokens,
//          sim ((1 + cos) / 2), source (the document's file or url), format, a PDF chunk's page_start, page_end, page_offsets, page_numbers (null otherwise), figures
//          (the chunk's images: sha256, path, caption, page)
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE c.id IN $ids
RETURN c.id AS id, c.doc_id AS doc_id, d.title AS title, c.order AS order, c.sections AS sections,
       c.heading_path AS heading_path,
       c.text AS text, c.tokens AS tokens, vector.similarity.cosine(c.embedding, $vector) AS sim,
       d.source AS source, d.format AS format, c.page_start AS page_start, c.page_end AS page_end,
       c.page_offsets AS page_offsets, c.page_numbers AS page_numbers,
       [(c)-[h:HAS_IMAGE]->(i:Image) | {sha256: i.sha256, path: i.path, caption: h.alt, page: h.page}] AS figures
