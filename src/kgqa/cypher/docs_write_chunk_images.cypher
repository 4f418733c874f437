// purpose: link chunks to their images; Image nodes are shared by sha256 (with entity images and other documents);
//          a PDF's figure keeps its page on the link
// params:  $images: list of {chunk_id, sha256, path, width, height, mime, alt, page}
// returns: written
UNWIND $images AS row
MATCH (c:Chunk {id: row.chunk_id})
MERGE (i:Image {sha256: row.sha256})
  ON CREATE SET i.path = row.path, i.width = row.width, i.height = row.height, i.mime = row.mime
MERGE (c)-[h:HAS_IMAGE]->(i)
SET h.alt = row.alt, h.page = row.page
RETURN count(h) AS written
