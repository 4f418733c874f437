// purpose: the writer gives its lease back (only while it still holds it)
// params:  $holder
// returns: nothing
MATCH (l:WriterLease {name: 'writer'}) WHERE l.holder = $holder
REMOVE l.holder, l.host, l.pid, l.command, l.since, l.expires
