// purpose: remove up to $limit of one document's inner nodes (regions, document entities with their DOC_REL,
//          FROM_CHUNK and SAME_AS links, chunks), and the images only those chunks used: one bounded
//          transaction of a large document's removal (docs_mark_writing first, docs_delete_document last)
// params:  $id: document id; $limit: most nodes removed by this call
// returns: removed: number of inner nodes removed (0 when none is left)
CALL () {
  MATCH (n:Region {doc_id: $id}) RETURN n LIMIT $limit
  UNION
  MATCH (n:DocEntity {doc_id: $id}) RETURN n LIMIT $limit
  UNION
  MATCH (n:Chunk {doc_id: $id}) RETURN n LIMIT $limit
}
WITH n LIMIT $limit
OPTIONAL MATCH (n)-[:HAS_IMAGE]->(img:Image)
WITH collect(DISTINCT n) AS nodes, collect(DISTINCT img) AS images
FOREACH (x IN nodes | DETACH DELETE x)
WITH size(nodes) AS removed, images
UNWIND (CASE WHEN size(images) = 0 THEN [null] ELSE images END) AS img
CALL (img) {
  WITH img WHERE img IS NOT NULL AND NOT (img)--()
  DELETE img
}
RETURN DISTINCT removed
