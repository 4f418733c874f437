// purpose: where an earlier run of the same load (same input files) got to, for resuming
// params:  $key (string: hash of the phase and the input files' paths, sizes and mtimes)
// returns: mode ('create' | 'merge'), file (int), line (int), last (list<string>: last row written);
//          no row when there is none
MATCH (c:LoadCheckpoint {key: $key})
RETURN c.mode AS mode, c.file AS file, c.line AS line, c.last AS last
