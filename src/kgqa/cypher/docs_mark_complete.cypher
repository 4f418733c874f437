// purpose: the last statement of a document's write transaction: its content hash and status 'complete'
//          (a document whose hash is stored is skipped by the next ingestion while unchanged)
// params:  $id, $content_hash, $link_key (the link settings and the KG linked against: another one relinks),
//          $counts: {entities, relations, regions, same_as}
// returns: id
MATCH (d:Document {id: $id})
SET d.content_hash = $content_hash, d.link_key = $link_key, d.status = 'complete', d.loaded_at = datetime(),
    d.n_entities = $counts.entities, d.n_relations = $counts.relations, d.n_regions = $counts.regions,
    d.n_same_as = $counts.same_as
RETURN d.id AS id
