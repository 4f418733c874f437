// purpose: the query the Neo4j Browser link of `kgqa ask` / `kgqa trace open` fills in: the question and every
//          node its evidence used (paths and their steps, chunks/documents used, subgraph nodes, start and answer
//          entities, the figures of the chunk the answer was read from), the KG's facts between those nodes, and the relation catalogue's (:Relation {id, name})
//          node of each fact's type: a fact is typed by its property id (P19) and Browser captions a relationship
//          with its type, so these nodes are the legend that names them (place of birth)
// params:  $id (string, question/trace id; kgqa.core.trace.browser_cypher writes it in)
// returns: q, trace (paths q->Path->node, q->Subgraph->node, q->start/answer/used node, q->cited chunk->figure), facts (relationships
//          between the nodes reached), relations (the Relation nodes of the facts' types); no row when the id
//          is unknown
MATCH (q:Question {id: $id})
OPTIONAL MATCH a = (q)-[:HAS_PATH|HAS_SUBGRAPH]->()-[:STEP|CONTAINS]->()
OPTIONAL MATCH b = (q)-[:STARTS_AT|ANSWERED_BY|USED]->()
OPTIONAL MATCH c = (q)-[u:USED]->(:Chunk)-[:HAS_IMAGE]->(:Image) WHERE u.sentence IS NOT NULL
WITH q, collect(DISTINCT a) + collect(DISTINCT b) + collect(DISTINCT c) AS trace
WITH q, trace, [p IN trace | last(nodes(p))] AS ns
UNWIND ns + [null] AS x
OPTIONAL MATCH (x)-[f]->(y) WHERE y IN ns
OPTIONAL MATCH (r:Relation {id: type(f)})
RETURN q, trace, collect(DISTINCT f) AS facts, collect(DISTINCT r) AS relations
