// purpose: which of these image digests the graph still holds (kgqa docs rm: a figure file under
//          <data dir>/figures whose Image node is gone is removed with its document)
// params:  $sha256s: list<string>
// returns: sha256, one row per digest the graph holds
UNWIND $sha256s AS sha
MATCH (i:Image {sha256: sha})
RETURN DISTINCT i.sha256 AS sha256
