// purpose: node and relationship counts (kgqa doctor, load summaries, tests)
// params:  none
// returns: entities, relations, images, facts
CALL () { MATCH (e:Entity) RETURN count(e) AS entities }
CALL () { MATCH (r:Relation) RETURN count(r) AS relations }
CALL () { MATCH (i:Image) RETURN count(i) AS images }
CALL () { MATCH (:Entity)-[f]->(:Entity) RETURN count(f) AS facts }
RETURN entities, relations, images, facts
