// purpose: remove exactly one document's KG: its chunks, document entities (with their DOC_REL and
//          SAME_AS links), regions and the Document node. Image nodes stay unless nothing else uses them
//          (an image may also depict a Wikidata entity or appear in another document).
// params:  $id: document id
// returns: removed: number of nodes removed (0 when the document is not there)
OPTIONAL MATCH (d:Document {id: $id})
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (c)-[:HAS_IMAGE]->(img:Image)
WITH d, collect(DISTINCT c) AS chunks, collect(DISTINCT img) AS images
OPTIONAL MATCH (e:DocEntity {doc_id: $id})
WITH d, chunks, images, collect(DISTINCT e) AS entities
OPTIONAL MATCH (r:Region {doc_id: $id})
WITH d, chunks, images, entities, collect(DISTINCT r) AS regions
WITH d, images, chunks + entities + regions AS inner
FOREACH (n IN inner | DETACH DELETE n)
FOREACH (x IN CASE WHEN d IS NULL THEN [] ELSE [d] END | DETACH DELETE x)
WITH images, size(inner) + CASE WHEN d IS NULL THEN 0 ELSE 1 END AS removed
UNWIND (CASE WHEN size(images) = 0 THEN [null] ELSE images END) AS img
CALL (img) {
  WITH img WHERE img IS NOT NULL AND NOT (img)--()
  DELETE img
}
RETURN DISTINCT removed
