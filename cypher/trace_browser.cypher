// purpose: the one line `kgqa ask` prints for Neo4j Browser: the question, its paths and the entities they pass
// params:  $id (string, question/trace id; `kgqa ask` prints it with the id written in)
// returns: q, h, p, s, e, l, x (graph elements for Browser to draw)
MATCH (q:Question {id: $id}) OPTIONAL MATCH (q)-[h:HAS_PATH]->(p:Path)-[s:STEP]->(e:Entity) OPTIONAL MATCH (q)-[l:STARTS_AT|ANSWERED_BY]->(x:Entity) RETURN q, h, p, s, e, l, x
