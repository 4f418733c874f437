// purpose: VisPath Eq. 5 exact (uncut) expansion: every outgoing fact of each frontier entity, for exact
//          scoring in Python (small graphs, --expansion exact, and the bench/hops.py reference)
// params:  $frontier (list<string>, entity ids)
// returns: head_id, head_name, relation_id, tail_id, tail_name
UNWIND $frontier AS fid
MATCH (e:Entity {id: fid})-[f]->(t:Entity)
RETURN e.id AS head_id, e.name AS head_name, type(f) AS relation_id, t.id AS tail_id, t.name AS tail_name
