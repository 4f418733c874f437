// purpose: the source chunks of the retrieved graph elements (mKG-RAG context), with their similarity to the query
// params:  $ids: chunk ids; $vector: query embedding
// returns: id, doc_id, title, order, sections, text, tokens, sim ((1 + cos) / 2)
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE c.id IN $ids
RETURN c.id AS id, c.doc_id AS doc_id, d.title AS title, c.order AS order, c.sections AS sections,
       c.text AS text, c.tokens AS tokens, vector.similarity.cosine(c.embedding, $vector) AS sim
