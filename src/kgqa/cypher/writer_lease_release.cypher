// purpose: the writer gives its lease back (only while it still holds it): the node is removed, so that a
//          command leaves no node behind (a refused load "writes nothing"; --bulk's database stays empty)
// params:  $holder
// returns: nothing
MATCH (l:WriterLease {name: 'writer'}) WHERE l.holder = $holder
DELETE l
