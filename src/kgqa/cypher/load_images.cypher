// purpose: upsert content-addressed images and link each to the entity it depicts (idempotent: MERGE)
// params:  $rows (list of {sha256, path (absolute), width, height, mime, entity: 'Q…'})
// returns: written (int, links made or found)
UNWIND $rows AS row
MATCH (e:Entity {id: row.entity})
MERGE (i:Image {sha256: row.sha256})
SET i.path = row.path, i.width = row.width, i.height = row.height, i.mime = row.mime
MERGE (i)-[:DEPICTS]->(e)
RETURN count(*) AS written
