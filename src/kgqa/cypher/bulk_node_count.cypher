// purpose: how many nodes the database holds (kgqa load wikidata5m --bulk refuses a non-empty database);
//          the writer lease's node (kgqa.core.writer_lease) is no data and is left out
// params:  none
// returns: nodes (int, from the count store)
CALL { MATCH (n) RETURN count(n) AS all_nodes }
CALL { MATCH (l:WriterLease) RETURN count(l) AS leases }
RETURN all_nodes - leases AS nodes
