// purpose: how many nodes the database holds (kgqa load wikidata5m --bulk refuses a non-empty database)
// params:  none
// returns: nodes (int, from the count store)
MATCH (n) RETURN count(n) AS nodes
