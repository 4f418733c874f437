// purpose: image regions matched to document entities (Eq. 1 of mKG-RAG): (:Region)-[:DEPICTS]->(:DocEntity)
//          and (:Region)-[:IN_IMAGE]->(:Image); a relation's region (union of its two boxes) is stored
//          on the DOC_REL as region_bbox / region_image, since a relationship cannot be a target
// params:  $doc_id; $regions: list of {id, entity_id, bbox, category, image_sha256, stand_in, embedding};
//          $rel_regions: list of {relation_id, bbox, category, image_sha256, embedding}
// returns: written: entity regions + relation regions
CALL {
  UNWIND $regions AS row
  MATCH (e:DocEntity {id: row.entity_id}), (i:Image {sha256: row.image_sha256})
  CREATE (g:Region {id: row.id})
  SET g.doc_id = $doc_id, g.bbox = row.bbox, g.category = row.category, g.image_sha256 = row.image_sha256,
      g.stand_in = row.stand_in, g.embedding = row.embedding
  CREATE (g)-[:DEPICTS]->(e)
  CREATE (g)-[:IN_IMAGE]->(i)
  RETURN count(g) AS n_entities
}
CALL {
  UNWIND $rel_regions AS row
  MATCH ()-[r:DOC_REL {id: row.relation_id}]->()
  SET r.region_bbox = row.bbox, r.region_category = row.category, r.region_image = row.image_sha256,
      r.region_embedding = row.embedding
  RETURN count(r) AS n_relations
}
RETURN n_entities + n_relations AS written
