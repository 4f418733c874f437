// purpose: VisPath Eq. 5 exact (uncut) expansion: every outgoing fact of each frontier entity, for exact
//          scoring in Python (small graphs, --expansion exact, and the bench/hops.py reference)
// params:  $frontier (list<string>, entity ids), $hidden (list<string>, fact keys "head_id|relation_id|tail_id"
//          hidden by the incomplete-KG protocol; [] hides nothing)
// returns: head_id, head_name, relation_id, tail_id, tail_name
UNWIND $frontier AS fid
MATCH (e:Entity {id: fid})-[f]->(t:Entity)
WHERE size($hidden) = 0 OR NOT (e.id + '|' + type(f) + '|' + t.id) IN $hidden
RETURN e.id AS head_id, e.name AS head_name, type(f) AS relation_id, t.id AS tail_id, t.name AS tail_name
