// purpose: Wikidata entity candidates for one document entity whose name or alias equals the document
//          entity's name (label key, the keyword-analysed full-text index entity_label_keys): found
//          whatever the approximate vector index returns, among millions of entities too (SAME_AS linking)
// params:  $query (string: '"' + key + '"', key = kgqa.core.kg.label_key(name): words and single spaces),
//          $k (int)
// returns: id, name, aliases, description, score (1.0: the labels agree exactly)
CALL db.index.fulltext.queryNodes('entity_label_keys', $query, {limit: $k}) YIELD node
RETURN node.id AS id, node.name AS name, coalesce(node.aliases, []) AS aliases,
       node.description AS description, 1.0 AS score
