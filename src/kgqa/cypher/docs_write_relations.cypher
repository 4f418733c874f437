// purpose: a document's relations between its entities: (:DocEntity)-[:DOC_REL {summary, embedding}]->(:DocEntity)
// params:  $doc_id; $relations: list of {id, head_id, tail_id, summary, chunk_ids, embedding}
// returns: written
UNWIND $relations AS row
MATCH (h:DocEntity {id: row.head_id}), (t:DocEntity {id: row.tail_id})
CREATE (h)-[r:DOC_REL {id: row.id}]->(t)
SET r.doc_id = $doc_id, r.summary = row.summary, r.chunk_ids = row.chunk_ids, r.embedding = row.embedding
RETURN count(r) AS written
