// purpose: where a cited chunk is (its document's file and a PDF chunk's pages), for a supporting sentence read
//          from a graph element whose source chunk the context budget left out
// params:  $id: the chunk id
// returns: id, doc_id, title, sections, heading_path, text, source, format, page_start, page_end, page_offsets, page_numbers,
//          figures (as mkgrag_chunks)
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk {id: $id})
RETURN c.id AS id, c.doc_id AS doc_id, d.title AS title, c.sections AS sections,
       c.heading_path AS heading_path, c.text AS text,
       d.source AS source, d.format AS format, c.page_start AS page_start, c.page_end AS page_end,
       c.page_offsets AS page_offsets, c.page_numbers AS page_numbers,
       [(c)-[h:HAS_IMAGE]->(i:Image) | {sha256: i.sha256, path: i.path, caption: h.alt, page: h.page}] AS figures
