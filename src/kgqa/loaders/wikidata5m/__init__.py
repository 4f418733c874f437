"""Load the official Wikidata5M release (plus entity images) into Neo4j.

Input files (found in ``path`` or one folder below it, as the release archives unpack):

* ``wikidata5m_entity.txt``    ``QID<TAB>label<TAB>alias…`` (the first name is the label)
* ``wikidata5m_relation.txt``  ``PID<TAB>label<TAB>alias…``
* triples ``head<TAB>PID<TAB>tail``: ``wikidata5m_transductive_{train,valid,test}.txt``,
  else ``wikidata5m_inductive_{…}.txt``, else ``wikidata5m_all_triplet.txt``
* optional ``wikidata5m_text.txt``  ``QID<TAB>description``
* optional images: ``images=DIR`` of ``<QID>.<ext>`` and/or ``entity_images.tsv``
  (see ``kgqa.loaders.images``)

Graph model (docs/ARCHITECTURE.md): ``(:Entity {id, name, aliases, description, name_embedding})``,
``(:Relation {id, name, aliases, embedding})``, facts as relationships typed by the PID,
``(:Image)-[:DEPICTS]->(:Entity)``.

The load runs top to bottom:

1. **validate** every file completely (column count, id syntax, unknown relation,
   dangling entity, encoding, images) before anything is written. Strict mode raises
   ``InvalidInput("file:line: why")`` at the first bad line; lenient mode records the
   line in a rejects file and the write pass skips it.
2. **write** relations (MERGE), entities, descriptions, facts, images. Batches of
   ``batch_size`` rows, one transaction each; a fact batch is grouped by relation type and
   uses the dynamic type ``[:$(row.type)]`` (one query plan for all 822 types; each type
   checked by ``kgqa.core.graph.relation_type`` and against the catalogue). Into a graph that
   holds none of the input's entities (none of their facts) the loader CREATEs; otherwise
   it MERGEs. Repeated triples in the input are written once.
3. **embed** relation names and entity names that have no embedding yet (names
   deduplicated per chunk, encoded in batches), then wait for the vector indexes.

Idempotent and resumable: each entity / description / fact batch advances a
``(:LoadCheckpoint {key})`` (key: phase + input files' paths, sizes, mtimes) in the same
transaction, to the last input line it covers. A rerun of the same command continues after
that line in the same CREATE/MERGE mode, so a run killed at any point ends, when rerun, in
the state of one clean run: nothing written twice, nothing missing. A checkpoint whose last
written row has since left the graph is dropped and the phase starts over (in MERGE mode if
the graph still holds some of the rows). Relations and images are MERGEd on constraint-backed
ids; the embedding phase asks Neo4j which loaded entities still lack a vector.

The modules, in the order a load uses them: ``options`` (LoadOptions, the LoadReport),
``files`` (finding the release's files, reading and parsing their lines), ``validate`` (step 1),
``write`` (step 2, with the resume checkpoints), ``embed`` (step 3, and the deferred vector
index), ``load`` (the Loader that runs them: ``load_wikidata5m``), ``bulk`` (``--bulk``: the same
validation and phases around ``neo4j-admin database import``).
"""
