// purpose: upsert Wikidata5M entity rows (MERGE on the unique id; idempotent).
//          An entity whose name changed loses its name embedding so a later phase re-embeds it.
// params:  $rows (list of {id: 'Q…', name: string, aliases: list<string>})
// returns: written (int)
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
WITH e, row, (e.name IS NOT NULL AND e.name <> row.name) AS renamed
SET e.name = row.name, e.aliases = row.aliases
FOREACH (_ IN CASE WHEN renamed THEN [1] ELSE [] END | REMOVE e.name_embedding)
RETURN count(*) AS written
