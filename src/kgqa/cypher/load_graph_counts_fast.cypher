// purpose: how many entities and relationships the graph holds, from Neo4j's count store (O(1));
//          zero means a first load can CREATE without checking its ids one by one
// params:  none
// returns: entities (int), relationships (int)
CALL () { MATCH (e:Entity) RETURN count(e) AS entities }
CALL () { MATCH ()-[r]->() RETURN count(r) AS relationships }
RETURN entities, relationships
