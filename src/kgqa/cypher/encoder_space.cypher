// purpose: the encoder whose vectors the graph holds, as the first load that wrote vectors recorded it
//          (kgqa.models.vector_space); checked before a question is asked and before a load adds vectors
// params:  none
// returns: space (map: family, model, weights, dim, backend, since); no row when no load recorded one
MATCH (s:EncoderSpace)
RETURN s {.family, .model, .weights, .dim, .backend, .since} AS space
LIMIT 1
