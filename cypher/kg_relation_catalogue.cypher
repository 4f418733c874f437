// purpose: the whole relation catalogue with its stored SBERT embeddings (kgqa.kg.KG caches it once per process)
// params:  none
// returns: id, name, embedding (list<float> 384-d, or null when the loader has not embedded it)
MATCH (r:Relation)
RETURN r.id AS id, r.name AS name, r.embedding AS embedding
ORDER BY id
