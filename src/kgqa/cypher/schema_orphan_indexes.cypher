// purpose: indexes named as one of schema.cypher's constraints but owned by none: a constraint's index whose
//          creation was cut off (Neo4j killed between the index and the constraint), which would make
//          CREATE CONSTRAINT … IF NOT EXISTS fail ("There already exists an index called …")
// params:  $names (the constraint names in schema.cypher)
// returns: name
SHOW INDEXES YIELD name, owningConstraint
WHERE name IN $names AND owningConstraint IS NULL
RETURN name
