// purpose: set entity descriptions (wikidata5m_text.txt) on entities that already exist.
// params:  $rows (list of {id: 'Q…', description: string})
// returns: written (int, entities found)
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.description = row.description
RETURN count(*) AS written
