// purpose: name, version and edition of the Neo4j server (kgqa doctor, kgqa neo4j status)
// params:  none
// returns: name, version, edition
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition
