// purpose: a document's chunks (segments, Section 3.1 of mKG-RAG) with their text, sections and embedding
// params:  $doc_id; $chunks: list of {id, order, text, sections, tokens, has_image, embedding}
// returns: written
MATCH (d:Document {id: $doc_id})
UNWIND $chunks AS row
CREATE (c:Chunk {id: row.id})
SET c.doc_id = $doc_id, c.order = row.order, c.text = row.text, c.sections = row.sections,
    c.tokens = row.tokens, c.has_image = row.has_image, c.embedding = row.embedding
CREATE (d)-[:HAS_CHUNK {order: row.order}]->(c)
RETURN count(c) AS written
