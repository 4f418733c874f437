// purpose: set Entity.label_keys (kgqa.kg.label_keys of the name and aliases) on existing entities
// params:  $rows (list of {id: 'Q…', label_keys: list<string>})
// returns: written (int)
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.label_keys = row.label_keys
RETURN count(*) AS written
