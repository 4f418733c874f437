// purpose: entities loaded before Entity.label_keys existed (entity linking's label lookup), a page at a time
// params:  $after (string: the last id of the previous page, '' first), $limit (int)
// returns: id, name, aliases
MATCH (e:Entity)
WHERE e.label_keys IS NULL AND e.id > $after
RETURN e.id AS id, e.name AS name, e.aliases AS aliases
ORDER BY e.id
LIMIT $limit
