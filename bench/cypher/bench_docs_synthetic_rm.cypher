// purpose: bench/mkgrag.py: remove a batch of the synthetic document KGs it wrote (ids prefixed "bench-")
// params:  $limit: documents per call
// returns: removed (documents)
MATCH (d:Document) WHERE d.id STARTS WITH 'bench-'
WITH d LIMIT $limit
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (e:DocEntity {doc_id: d.id})
WITH d, collect(DISTINCT c) + collect(DISTINCT e) AS inner
FOREACH (n IN inner | DETACH DELETE n)
DETACH DELETE d
RETURN count(*) AS removed
