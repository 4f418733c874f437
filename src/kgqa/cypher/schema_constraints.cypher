// purpose: every constraint, to check the schema is present (kgqa doctor)
// params:  none
// returns: name, type, labels, properties
SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties
RETURN name, type, labelsOrTypes AS labels, properties
