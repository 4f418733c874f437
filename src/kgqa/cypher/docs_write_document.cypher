// purpose: create one document node (first statement of the one write transaction per document;
//          docs_mark_complete ends it). The caller removed any previous version first.
// params:  $doc: {id, title, source, origin, format, content_hash, bytes, n_chunks, n_images, embedding, extractor,
//          pages (a PDF's page count, else null)}
// returns: id
CREATE (d:Document {id: $doc.id})
SET d.title = $doc.title, d.source = $doc.source, d.origin = $doc.origin, d.format = $doc.format, d.bytes = $doc.bytes,
    d.n_chunks = $doc.n_chunks, d.n_images = $doc.n_images, d.embedding = $doc.embedding,
    d.extractor = $doc.extractor, d.pages = $doc.pages, d.status = 'writing'
RETURN d.id AS id
