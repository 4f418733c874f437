// purpose: the kgqa schema: constraints and indexes for the graph model in docs/ARCHITECTURE.md.
//          Idempotent (IF NOT EXISTS); applied by `kgqa neo4j init` and before every load.
// params:  none
// returns: nothing
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE;
CREATE CONSTRAINT relation_id IF NOT EXISTS FOR (r:Relation) REQUIRE r.id IS UNIQUE;
CREATE CONSTRAINT image_sha256 IF NOT EXISTS FOR (i:Image) REQUIRE i.sha256 IS UNIQUE;
CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE;
CREATE CONSTRAINT docentity_id IF NOT EXISTS FOR (e:DocEntity) REQUIRE e.id IS UNIQUE;
CREATE CONSTRAINT question_id IF NOT EXISTS FOR (q:Question) REQUIRE q.id IS UNIQUE;
CREATE CONSTRAINT path_id IF NOT EXISTS FOR (p:Path) REQUIRE p.id IS UNIQUE;
// one writer per database (kgqa.core.writer_lease)
CREATE CONSTRAINT writer_lease_name IF NOT EXISTS FOR (l:WriterLease) REQUIRE l.name IS UNIQUE;
CREATE INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON (e.name);
// entity linking by label (kgqa.kg.KG.label_matches): each normalised name or alias one keyword term
CREATE FULLTEXT INDEX entity_label_keys IF NOT EXISTS FOR (e:Entity) ON EACH [e.label_keys]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'keyword'}};
CREATE INDEX question_created_at IF NOT EXISTS FOR (q:Question) ON (q.created_at);
CREATE VECTOR INDEX entity_name_embedding IF NOT EXISTS
FOR (e:Entity) ON e.name_embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX relation_embedding IF NOT EXISTS
FOR (r:Relation) ON r.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX docentity_embedding IF NOT EXISTS
FOR (e:DocEntity) ON e.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX docrel_embedding IF NOT EXISTS
FOR ()-[r:DOC_REL]-() ON r.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE INDEX docentity_doc_id IF NOT EXISTS FOR (e:DocEntity) ON (e.doc_id);
CREATE INDEX region_doc_id IF NOT EXISTS FOR (r:Region) ON (r.doc_id);
CREATE INDEX chunk_doc_id IF NOT EXISTS FOR (c:Chunk) ON (c.doc_id);
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS
FOR (c:Chunk) ON c.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE VECTOR INDEX document_embedding IF NOT EXISTS
FOR (d:Document) ON d.embedding
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
