// purpose: the file of one stored image (kgqa serve's GET /images/{sha256}: only images the graph holds are served)
// params:  $sha256: the image's sha256 (64 hex digits)
// returns: path, mime; no row when the graph holds no such image
MATCH (i:Image {sha256: $sha256})
RETURN i.path AS path, i.mime AS mime
