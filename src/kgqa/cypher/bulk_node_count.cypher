// purpose: how many nodes the database holds (kgqa load wikidata5m --bulk refuses a non-empty database);
//          the writer lease's node (kgqa.core.writer_lease) and the encoder's record (kgqa.models.vector_space)
//          are no data and are left out
// params:  none
// returns: nodes (int, from the count store)
CALL { MATCH (n) RETURN count(n) AS all_nodes }
CALL { MATCH (l:WriterLease) RETURN count(l) AS leases }
CALL { MATCH (s:EncoderSpace) RETURN count(s) AS spaces }
RETURN all_nodes - leases - spaces AS nodes
