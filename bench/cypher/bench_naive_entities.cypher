// purpose: BENCHMARK BASELINE ONLY (bench/load.py): the plain node loader: 10k-row UNWIND … MERGE
// params:  $rows (list of {id, name, aliases})
// returns: written (int)
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
SET e.name = row.name, e.aliases = row.aliases
RETURN count(*) AS written
