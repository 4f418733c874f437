// purpose: one document's KG: chunks, entities (with regions and Wikidata links) and relations (kgqa docs show)
// params:  $id: document id
// returns: one row: document (map), chunks, entities, relations (lists of maps; a PDF's chunks and figures with
//          their pages); no row when absent
MATCH (d:Document {id: $id})
CALL (d) {
  OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
  OPTIONAL MATCH (c)-[h:HAS_IMAGE]->(i:Image)
  WITH c, collect(CASE WHEN i IS NULL THEN null ELSE {sha256: i.sha256, path: i.path, alt: h.alt, page: h.page} END) AS imgs
  ORDER BY c.order
  RETURN collect(CASE WHEN c IS NULL THEN null ELSE
         {id: c.id, order: c.order, sections: c.sections, heading_path: c.heading_path, tokens: c.tokens, text: c.text, images: imgs,
          page_start: c.page_start, page_end: c.page_end} END) AS chunks
}
CALL (d) {
  OPTIONAL MATCH (e:DocEntity {doc_id: d.id})
  OPTIONAL MATCH (g:Region)-[:DEPICTS]->(e)
  OPTIONAL MATCH (e)-[s:SAME_AS]->(w:Entity)
  WITH e, collect(DISTINCT CASE WHEN g IS NULL THEN null ELSE {bbox: g.bbox, category: g.category,
       image: g.image_sha256, stand_in: g.stand_in} END) AS regions,
       collect(DISTINCT CASE WHEN w IS NULL THEN null ELSE {id: w.id, name: w.name, score: s.score} END) AS same_as
  ORDER BY e.name
  RETURN collect(CASE WHEN e IS NULL THEN null ELSE {id: e.id, name: e.name, type: e.type,
         description: e.description, chunk_ids: e.chunk_ids, regions: regions, same_as: same_as} END) AS entities
}
CALL (d) {
  OPTIONAL MATCH (h:DocEntity {doc_id: d.id})-[r:DOC_REL]->(t:DocEntity)
  WITH h, r, t ORDER BY h.name, t.name
  RETURN collect(CASE WHEN r IS NULL THEN null ELSE {id: r.id, head: h.name, tail: t.name, summary: r.summary,
         region_bbox: r.region_bbox, chunk_ids: r.chunk_ids, sentence: r.sentence, context: r.context, phrase: r.phrase,
         relation_id: r.relation_id, relation_name: r.relation_name} END) AS relations
}
RETURN d {.id, .title, .source, .format, .status, .content_hash, .bytes, .n_chunks, .n_images, .extractor, .pages,
          loaded_at: toString(d.loaded_at)} AS document, chunks, entities, relations
