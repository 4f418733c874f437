// purpose: the writer renews its lease while it writes (every quarter of its time to live)
// params:  $holder, $ttl_ms
// returns: renewed (0: another writer took it, after it expired)
OPTIONAL MATCH (l:WriterLease {name: 'writer'}) WHERE l.holder = $holder
SET l.expires = timestamp() + $ttl_ms
RETURN count(l) AS renewed
