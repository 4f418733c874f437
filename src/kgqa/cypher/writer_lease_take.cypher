// purpose: the first statement of taking the database's writer lease (kgqa.core.writer_lease): the lease node,
//          locked by a write before it is read, so that two takers are serialised; its holder as stored
// params:  none
// returns: holder, host, pid, command, since (ms), expires (ms), now (the server's clock, ms)
MERGE (l:WriterLease {name: 'writer'})
SET l.locked_at = timestamp()
RETURN l.holder AS holder, l.host AS host, l.pid AS pid, l.command AS command, l.since AS since,
       l.expires AS expires, timestamp() AS now
