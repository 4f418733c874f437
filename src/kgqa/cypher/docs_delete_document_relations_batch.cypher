// purpose: remove up to $limit relationships of one document's entities and regions (DOC_REL, FROM_CHUNK,
//          SAME_AS, DEPICTS): a document's relationships outnumber its nodes (a 500-page PDF: 10,239
//          entities, 71,870 relations), so they go first, in bounded transactions, before the node batches
//          of docs_delete_document_batch (which would otherwise delete a batch's relations all at once)
// params:  $id: document id; $limit: most relationships removed by this call
// returns: removed: number of relationships removed (0 when none is left)
CALL () {
  MATCH (:DocEntity {doc_id: $id})-[r]-() RETURN r LIMIT $limit
  UNION
  MATCH (:Region {doc_id: $id})-[r]-() RETURN r LIMIT $limit
}
WITH DISTINCT r LIMIT $limit
DELETE r
RETURN count(r) AS removed
