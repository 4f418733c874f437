// purpose: first load into a graph without facts: CREATE facts (input already deduplicated by the
//          loader) and advance the load checkpoint in the same transaction, so a run killed at any
//          point resumes after the last committed batch without duplicating a fact. The type is the
//          Wikidata property id, checked with kgqa.graph.relation_type and against the catalogue.
// params:  $rows (list of {h: 'Q…', type: 'P…', t: 'Q…'}, grouped by type),
//          $key (checkpoint key), $mode ('create'), $file (int), $line (int: last input line covered),
//          $last (list<string>: the last row written, to detect a stale checkpoint), $inputs (list<string>: file paths)
// returns: written (int)
UNWIND $rows AS row
MATCH (h:Entity {id: row.h})
MATCH (t:Entity {id: row.t})
CREATE (h)-[:$(row.type)]->(t)
WITH count(*) AS written
MERGE (c:LoadCheckpoint {key: $key})
SET c.mode = $mode, c.file = $file, c.line = $line, c.last = $last, c.inputs = $inputs,
    c.updated_at = datetime()
RETURN written
