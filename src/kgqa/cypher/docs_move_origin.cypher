// purpose: a document loaded again, with the same content, from another file (the checkout moved, the folder
//          was copied): the document now comes from that file, so that its next edit there replaces it
// params:  $id: document id; $origin: the resolved file path; $source: the path as given
// returns: nothing
MATCH (d:Document {id: $id})
SET d.origin = $origin, d.source = $source
