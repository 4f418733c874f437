// purpose: the one line `kgqa ask` prints for Neo4j Browser: the question and every node its evidence used
//          (paths and their steps, chunks/documents used, subgraph nodes, start and answer entities)
// params:  $id (string, question/trace id; `kgqa ask` prints it with the id written in)
// returns: q and lists of graph elements for Browser to draw
MATCH (q:Question {id: $id}) OPTIONAL MATCH (q)-[h:HAS_PATH]->(p:Path)-[s:STEP]->(e) WITH q, collect(h) AS hs, collect(p) AS ps, collect(s) AS ss, collect(e) AS es OPTIONAL MATCH (q)-[l:STARTS_AT|ANSWERED_BY|USED]->(x) WITH q, hs, ps, ss, es, collect(l) AS ls, collect(x) AS xs OPTIONAL MATCH (q)-[g:HAS_SUBGRAPH]->(sg:Subgraph)-[c:CONTAINS]->(y) RETURN q, hs, ps, ss, es, ls, xs, collect(g) AS gs, collect(sg) AS sgs, collect(c) AS cs, collect(y) AS ys
