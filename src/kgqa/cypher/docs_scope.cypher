// purpose: the complete documents a question may be scoped to (kgqa ask --doc / --docs): those of $ids, or all
// params:  $ids: document ids (when not $all); $all: every complete document
// returns: id, source
MATCH (d:Document)
WHERE d.status = 'complete' AND ($all OR d.id IN $ids)
RETURN d.id AS id, d.source AS source
ORDER BY id
