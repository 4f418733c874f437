// purpose: upsert Wikidata5M entity rows (MERGE on the unique id; idempotent) and, in the same
//          transaction, advance the load checkpoint. An entity whose name changed loses its name
//          embedding so a later phase re-embeds it.
// params:  $rows (list of {id: 'Q…', name: string, aliases: list<string>, label_keys: list<string>}),
//          $key (checkpoint key), $mode ('merge'), $file (int), $line (int: last input line covered),
//          $last (list<string>: the last row written, to detect a stale checkpoint), $inputs (list<string>: file paths)
// returns: written (int)
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
WITH e, row, (e.name IS NOT NULL AND e.name <> row.name) AS renamed
SET e.name = row.name, e.aliases = row.aliases, e.label_keys = row.label_keys
FOREACH (_ IN CASE WHEN renamed THEN [1] ELSE [] END | REMOVE e.name_embedding)
WITH count(*) AS written
MERGE (c:LoadCheckpoint {key: $key})
SET c.mode = $mode, c.file = $file, c.line = $line, c.last = $last, c.inputs = $inputs,
    c.updated_at = datetime()
RETURN written
