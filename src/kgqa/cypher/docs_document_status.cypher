// purpose: the stored state of documents by id, to skip unchanged ones, replace changed ones, refuse an id
//          loaded from another file (kgqa load documents), and choose how to remove the old version
// params:  $ids: list of document ids
// returns: id, content_hash, link_key (null before issue 62), status, extractor, origin (the resolved file path or E-VQA url; null before issue 26),
//          source, nodes (chunks + entities + regions of a complete document; null while it is being written)
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.content_hash AS content_hash, d.link_key AS link_key, d.status AS status, d.extractor AS extractor,
       d.origin AS origin, d.source AS source,
       CASE WHEN d.status = 'complete'
            THEN coalesce(d.n_chunks, 0) + coalesce(d.n_entities, 0) + coalesce(d.n_regions, 0) END AS nodes
