// purpose: every loaded document with its counts (kgqa docs list)
// params:  none
// returns: id, title, source, format, status, chunks, entities, relations, regions, same_as, loaded_at, content_hash
MATCH (d:Document)
RETURN d.id AS id, d.title AS title, d.source AS source, d.format AS format, d.status AS status,
       d.n_chunks AS chunks, d.n_entities AS entities, d.n_relations AS relations, d.n_regions AS regions,
       d.n_same_as AS same_as, toString(d.loaded_at) AS loaded_at, d.content_hash AS content_hash
ORDER BY d.id
