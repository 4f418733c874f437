// purpose: the first statement when a document is replaced in several transactions (a large one, or one left
//          half-written by a killed load): its status 'writing' and no content hash, so that neither retrieval
//          (mkgrag_document_search) nor the next load takes it as complete while its parts are removed
// params:  $id: document id
// returns: id (no row when the document is not there)
MATCH (d:Document {id: $id})
SET d.status = 'writing', d.content_hash = null
RETURN d.id AS id
