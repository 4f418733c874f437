// purpose: the writer lease is one node: its name unique (also in schema.cypher; here for a database whose
//          schema predates it, before the first lease is taken)
// params:  none
// returns: nothing
CREATE CONSTRAINT writer_lease_name IF NOT EXISTS FOR (l:WriterLease) REQUIRE l.name IS UNIQUE
