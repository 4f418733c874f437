// purpose: the second statement of taking the writer lease, in the same transaction, when it was free,
//          expired, or held by an exited pid of this host: this writer holds it until now + $ttl_ms
// params:  $holder (a token of this writer), $host, $pid, $command, $ttl_ms
// returns: nothing
MATCH (l:WriterLease {name: 'writer'})
SET l.holder = $holder, l.host = $host, l.pid = $pid, l.command = $command, l.since = timestamp(),
    l.expires = timestamp() + $ttl_ms
