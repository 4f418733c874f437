// purpose: answer typing (VisPath terminal selection, GraSP answer node): the type evidence of entities —
//          each one's description and the names of its classes: `instance of`, then up to three `subclass of`
//          steps (the relation ids that mean them in this KG, found in its relation catalogue)
// params:  $ids (list<string>, entity ids), $instance_of (list<string>, relation ids meaning "instance of"),
//          $subclass_of (list<string>, relation ids meaning "subclass of"; may be empty)
// returns: id, description (null when the entity has none), classes (list<string>, class names; empty when none)
UNWIND $ids AS eid
MATCH (e:Entity {id: eid})
OPTIONAL MATCH (e)-[i]->(c:Entity)
  WHERE type(i) IN $instance_of
OPTIONAL MATCH (c)-[s*0..3]->(k:Entity)
  WHERE all(x IN s WHERE type(x) IN $subclass_of)
WITH e, collect(DISTINCT k.name) AS names
RETURN e.id AS id, e.description AS description, [n IN names WHERE n IS NOT NULL] AS classes
