// purpose: which of the (label, id) references a trace is about to link to exist (the trace writer refuses
//          to store a trace whose evidence points at a missing node). Labels are a fixed whitelist here,
//          never spliced: Entity, DocEntity, Chunk, Document (by id) and Image (by sha256).
// params:  $refs (list of {label, id})
// returns: label, id (one row per reference that resolves)
UNWIND $refs AS r
CALL (r) {
  MATCH (n:Entity {id: r.id}) WHERE r.label = 'Entity' RETURN n
  UNION
  MATCH (n:DocEntity {id: r.id}) WHERE r.label = 'DocEntity' RETURN n
  UNION
  MATCH (n:Chunk {id: r.id}) WHERE r.label = 'Chunk' RETURN n
  UNION
  MATCH (n:Document {id: r.id}) WHERE r.label = 'Document' RETURN n
  UNION
  MATCH (n:Image {sha256: r.id}) WHERE r.label = 'Image' RETURN n
}
RETURN DISTINCT r.label AS label, r.id AS id
