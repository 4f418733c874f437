// purpose: every index with its type and state, to check the schema is present and ONLINE
// params:  none
// returns: name, type, state, labels, properties, populationPercent
SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties, populationPercent
RETURN name, type, state, labelsOrTypes AS labels, properties, populationPercent
