// purpose: merge facts between existing entities (idempotent: MERGE) and advance the load
//          checkpoint in the same transaction. The relationship type is the Wikidata property
//          id, passed as a value ($(row.type), Neo4j 5.26 dynamic type) after the loader checked it
//          with kgqa.graph.relation_type and against the relation catalogue.
// params:  $rows (list of {h: 'Q…', type: 'P…', t: 'Q…'}, grouped by type),
//          $key (checkpoint key), $mode ('merge'), $file (int), $line (int: last input line covered),
//          $last (list<string>: the last row written, to detect a stale checkpoint), $inputs (list<string>: file paths)
// returns: written (int)
UNWIND $rows AS row
MATCH (h:Entity {id: row.h})
MATCH (t:Entity {id: row.t})
MERGE (h)-[:$(row.type)]->(t)
WITH count(*) AS written
MERGE (c:LoadCheckpoint {key: $key})
SET c.mode = $mode, c.file = $file, c.line = $line, c.last = $last, c.inputs = $inputs,
    c.updated_at = datetime()
RETURN written
