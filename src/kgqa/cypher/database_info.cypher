// purpose: the database as the server names it (its name and store id): what the writer lease's line names
// params:  none
// returns: id, name
CALL db.info() YIELD id, name
RETURN id, name
