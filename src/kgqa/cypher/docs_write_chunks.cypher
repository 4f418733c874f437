// purpose: a document's chunks (segments, Section 3.1 of mKG-RAG) with their text, sections, heading path
//          (document title › topic › section) and embedding; a PDF's chunks also with their page span and where
//          each page begins in their text (page citations)
// params:  $doc_id; $chunks: list of {id, order, text, sections, heading_path, tokens, has_image, embedding,
//          page_start, page_end, page_offsets, page_numbers} (the page fields null outside PDFs)
// returns: written
MATCH (d:Document {id: $doc_id})
UNWIND $chunks AS row
CREATE (c:Chunk {id: row.id})
SET c.doc_id = $doc_id, c.order = row.order, c.text = row.text, c.sections = row.sections,
    c.heading_path = row.heading_path,
    c.tokens = row.tokens, c.has_image = row.has_image, c.embedding = row.embedding,
    c.page_start = row.page_start, c.page_end = row.page_end, c.page_offsets = row.page_offsets,
    c.page_numbers = row.page_numbers
CREATE (d)-[:HAS_CHUNK {order: row.order}]->(c)
RETURN count(c) AS written
