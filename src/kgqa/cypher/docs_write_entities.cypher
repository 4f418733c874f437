// purpose: a document's entities (one per distinct name within the document, Section 3.1.3 of mKG-RAG),
//          each linked to the chunks it was extracted from
// params:  $doc_id; $entities: list of {id, name, type, description, chunk_ids, embedding}
// returns: written
UNWIND $entities AS row
CREATE (e:DocEntity {id: row.id})
SET e.doc_id = $doc_id, e.name = row.name, e.type = row.type, e.description = row.description,
    e.chunk_ids = row.chunk_ids, e.embedding = row.embedding
WITH e, row
UNWIND row.chunk_ids AS cid
MATCH (c:Chunk {id: cid})
CREATE (e)-[:FROM_CHUNK]->(c)
RETURN count(DISTINCT e) AS written
