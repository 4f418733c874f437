// purpose: the entity images the reference-image grounder matches query images against
// params:  none
// returns: entity_id, name, sha256, path (one row per image; an entity may have several)
MATCH (i:Image)-[:DEPICTS]->(e:Entity)
WHERE i.path IS NOT NULL
RETURN e.id AS entity_id, e.name AS name, i.sha256 AS sha256, i.path AS path
ORDER BY entity_id, sha256
