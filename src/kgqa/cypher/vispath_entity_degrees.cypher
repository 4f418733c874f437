// purpose: a sample of entities with their out-degree (bench/hops.py picks random and top-1% start entities)
// params:  $limit (int, how many entities to sample, in id order from a random skip), $skip (int)
// returns: id, degree
MATCH (e:Entity)
WITH e SKIP $skip LIMIT $limit
RETURN e.id AS id, COUNT { (e)-->() } AS degree
