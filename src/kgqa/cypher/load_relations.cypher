// purpose: upsert Wikidata5M relation catalogue rows (MERGE on the unique id; idempotent).
//          A relation whose name changed loses its embedding so a later phase re-embeds it.
// params:  $rows (list of {id: 'P…', name: string, aliases: list<string>})
// returns: written (int)
UNWIND $rows AS row
MERGE (r:Relation {id: row.id})
WITH r, row, (r.name IS NOT NULL AND r.name <> row.name) AS renamed
SET r.name = row.name, r.aliases = row.aliases
FOREACH (_ IN CASE WHEN renamed THEN [1] ELSE [] END | REMOVE r.embedding)
RETURN count(*) AS written
