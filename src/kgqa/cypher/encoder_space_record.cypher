// purpose: record the encoder whose vectors a load writes, once (kgqa.models.vector_space): the graph holds
//          one (:EncoderSpace) node, written before the load's first vector
// params:  $space (map: family, model, weights, dim, backend)
// returns: nothing
MERGE (s:EncoderSpace)
ON CREATE SET s += $space, s.since = toString(datetime())
