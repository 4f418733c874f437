// purpose: the stored state of documents by id, to skip unchanged ones and replace changed ones (kgqa load documents)
// params:  $ids: list of document ids
// returns: id, content_hash, status
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.content_hash AS content_hash, d.status AS status
