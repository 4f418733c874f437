// purpose: the naive baseline of bench/hops.py: uncapped variable-length [*1..2] expansion from one entity
// params:  $id (string, entity id)
// returns: paths (int, number of 1- and 2-hop paths enumerated)
MATCH (e:Entity {id: $id})-[*1..2]->(t:Entity)
RETURN count(*) AS paths
