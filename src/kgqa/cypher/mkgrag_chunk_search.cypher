// purpose: the chunks-only baseline (naive RAG, mKG-RAG ablation "w/o graph retrieval"): the top chunks of
//          the stage-1 documents by cosine to the query
// params:  $doc_ids: stage-1 document ids; $vector: query embedding; $k: chunks to return
// returns: id, doc_id, title, order, sections, text, tokens, sim ((1 + cos) / 2)
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WHERE d.id IN $doc_ids
WITH d, c, vector.similarity.cosine(c.embedding, $vector) AS sim
RETURN c.id AS id, c.doc_id AS doc_id, d.title AS title, c.order AS order, c.sections AS sections,
       c.text AS text, c.tokens AS tokens, sim
ORDER BY sim DESC, id
LIMIT $k
