// purpose: the most recent reasoning traces (kgqa trace show without an id)
// params:  $limit (int)
// returns: id, created_at, method, text, answer
MATCH (q:Question)
RETURN q.id AS id, toString(q.created_at) AS created_at, q.method AS method, q.text AS text, q.answer AS answer
ORDER BY q.created_at DESC
LIMIT $limit
