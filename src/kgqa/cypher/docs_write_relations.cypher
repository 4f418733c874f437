// purpose: a document's relations between its entities: (:DocEntity)-[:DOC_REL {summary, embedding}]->(:DocEntity)
// params:  $doc_id; $relations: list of {id, head_id, tail_id, summary, chunk_ids, embedding, sentence,
//          context, phrase, relation_id, relation_name} (the last five: provenance sentence, section heading,
//          the words stating the relation and its relation catalogue entry, of the CPU extractor; null from the
//          LLM extractor)
// returns: written
UNWIND $relations AS row
MATCH (h:DocEntity {id: row.head_id}), (t:DocEntity {id: row.tail_id})
CREATE (h)-[r:DOC_REL {id: row.id}]->(t)
SET r.doc_id = $doc_id, r.summary = row.summary, r.chunk_ids = row.chunk_ids, r.embedding = row.embedding,
    r.sentence = row.sentence, r.context = row.context, r.phrase = row.phrase, r.relation_id = row.relation_id,
    r.relation_name = row.relation_name
RETURN count(r) AS written
