// purpose: the whole relation catalogue with its stored SBERT embeddings (kgqa.kg.KG caches it once per process)
// params:  none
// returns: id, name, aliases (list<string> or null), embedding (list<float> 384-d, or null when the loader
//          has not embedded it)
MATCH (r:Relation)
RETURN r.id AS id, r.name AS name, r.aliases AS aliases, r.embedding AS embedding
ORDER BY id
