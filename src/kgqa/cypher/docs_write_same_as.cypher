// purpose: link document entities to Wikidata entities (beyond the paper): (:DocEntity)-[:SAME_AS {score}]->(:Entity)
// params:  $links: list of {docentity_id, entity_id, score}
// returns: written
UNWIND $links AS row
MATCH (d:DocEntity {id: row.docentity_id}), (e:Entity {id: row.entity_id})
MERGE (d)-[s:SAME_AS]->(e)
SET s.score = row.score
RETURN count(s) AS written
