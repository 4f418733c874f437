// purpose: first load into a graph without entities: CREATE entity rows (the unique constraint on
//          Entity.id still guards against duplicates) and advance the load checkpoint in the same
//          transaction, so a resumed run starts after the last committed batch.
// params:  $rows (list of {id: 'Q…', name: string, aliases: list<string>, label_keys: list<string>}),
//          $key (checkpoint key), $mode ('create'), $file (int), $line (int: last input line covered),
//          $last (list<string>: the last row written, to detect a stale checkpoint), $inputs (list<string>: file paths)
// returns: written (int)
UNWIND $rows AS row
CREATE (e:Entity {id: row.id, name: row.name, aliases: row.aliases, label_keys: row.label_keys})
WITH count(*) AS written
MERGE (c:LoadCheckpoint {key: $key})
SET c.mode = $mode, c.file = $file, c.line = $line, c.last = $last, c.inputs = $inputs,
    c.updated_at = datetime()
RETURN written
