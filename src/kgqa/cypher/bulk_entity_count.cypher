// purpose: how many entities a database holds that was imported elsewhere from a --bulk's CSVs (kgqa load
//          wikidata5m --bulk checks it against the CSVs' count before it loads the rest)
// params:  none
// returns: entities (int, from the count store)
MATCH (e:Entity)
RETURN count(e) AS entities
