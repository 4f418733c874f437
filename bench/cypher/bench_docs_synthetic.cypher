// purpose: bench/mkgrag.py: write a batch of synthetic document KGs (ids prefixed "bench-") in one
//          statement: Document, its chunks, entities (FROM_CHUNK) and relations, with given vectors
// params:  $docs: list of {id, title, embedding, chunks: [{id, order, text, tokens, embedding}],
//          entities: [{id, name, description, chunk_ids, embedding}], relations: [{id, head_id, tail_id,
//          summary, chunk_ids, embedding}]}
// returns: documents
UNWIND $docs AS doc
CREATE (d:Document {id: doc.id})
SET d.title = doc.title, d.source = 'bench', d.format = 'synthetic', d.status = 'complete',
    d.embedding = doc.embedding, d.content_hash = 'bench', d.n_chunks = size(doc.chunks)
WITH d, doc
CALL (d, doc) {
  UNWIND doc.chunks AS c
  CREATE (ch:Chunk {id: c.id})
  SET ch.doc_id = doc.id, ch.order = c.order, ch.text = c.text, ch.sections = ['S'], ch.tokens = c.tokens,
      ch.has_image = false, ch.embedding = c.embedding
  CREATE (d)-[:HAS_CHUNK {order: c.order}]->(ch)
  RETURN count(*) AS nc
}
CALL (doc) {
  UNWIND doc.entities AS e
  CREATE (x:DocEntity {id: e.id})
  SET x.doc_id = doc.id, x.name = e.name, x.type = 'concept', x.description = e.description,
      x.chunk_ids = e.chunk_ids, x.embedding = e.embedding
  RETURN count(*) AS ne
}
CALL (doc) {
  UNWIND doc.relations AS r
  MATCH (h:DocEntity {id: r.head_id}), (t:DocEntity {id: r.tail_id})
  CREATE (h)-[rel:DOC_REL {id: r.id}]->(t)
  SET rel.doc_id = doc.id, rel.summary = r.summary, rel.chunk_ids = r.chunk_ids, rel.embedding = r.embedding
  RETURN count(*) AS nr
}
RETURN count(d) AS documents
