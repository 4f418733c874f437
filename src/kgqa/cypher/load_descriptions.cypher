// purpose: set entity descriptions (wikidata5m_text.txt) on entities that already exist, and
//          advance the load checkpoint in the same transaction (a rerun skips what is done)
// params:  $rows (list of {id: 'Q…', description: string}),
//          $key (checkpoint key), $mode ('merge'), $file (int), $line (int: last input line covered),
//          $last (list<string>: the last row written, to detect a stale checkpoint), $inputs (list<string>: file paths)
// returns: written (int, entities found)
UNWIND $rows AS row
OPTIONAL MATCH (e:Entity {id: row.id})
FOREACH (_ IN CASE WHEN e IS NULL THEN [] ELSE [1] END | SET e.description = row.description)
WITH count(e) AS written
MERGE (c:LoadCheckpoint {key: $key})
SET c.mode = $mode, c.file = $file, c.line = $line, c.last = $last, c.inputs = $inputs,
    c.updated_at = datetime()
RETURN written
