"""Load illustrated documents as per-document multimodal KGs in Neo4j (mKG-RAG, Section 3.1).

mKG-RAG: "mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation
for Knowledge-intensive VQA". Inputs (``kgqa load documents DIR``):

* Markdown (``.md``/``.markdown``) and HTML (``.html``/``.htm``) files; images referenced by
  relative path (``![alt](images/x.png)``, ``<img src alt>``), never fetched from a URL.
  HTML is parsed with the standard library's ``html.parser`` as text: ``<script>`` and
  ``<style>`` content is dropped, nothing is ever executed.
* E-VQA knowledge-base JSON lines (``.jsonl``): ``{url: {title, section_titles, section_texts,
  image_urls, image_section_indices, image_reference_descriptions}}`` per line; images are
  resolved by the URL's file name in ``--images DIR`` (URLs are never fetched).

The pipeline per document, top to bottom:

1. **validate** every input file first (UTF-8, size limit, images readable): ``--strict``
   (default) stops at the first problem with one line naming the file (and line), before
   anything is written; ``--lenient`` skips and counts it (a missing image drops that image).
2. **segment** (3.1): sections with images are kept whole; runs of sections without images
   are merged up to ``chunk_tokens`` tokens and longer ones split at sentence ends. Tokens are
   counted with the local LLM's tokenizer (SmolLM2's). Nothing is dropped (the reference code
   drops a trailing text section under 200 tokens and splits image sections over 500; the
   paper keeps image sections whole, and so do we).
3. **textual graph** (3.1.1): per segment, the ChatModel's structured output (``TextGraph``:
   entities {name, type, description}, relations {head, tail, summary}).
4. **visual graph** (3.1.2): per image, objects {category, normalised bbox} and binary relations
   {subject, predicate, object}, asked of the VisionModel (a VLM over vLLM in production). On a
   CPU machine (``KGQA_VISION_BACKEND=local``) no scene-graph or VLM weights exist: the
   **stand-in** makes the whole image the one object (bbox 0,0,1,1), its category the image's
   alt text, with no relations. It is named ``whole-image stand-in`` in the report and on
   every Region it produces (``stand_in: true``).
5. **vision-text matching** (3.1.3, Eq. 1): the VisionModel gets the image, both graphs in text
   form and an exemplar; a matched object becomes a ``(:Region {bbox})-[:DEPICTS]->`` of its
   entity; a matched relation gets the union of its two boxes as ``region_bbox``.
6. **merge** identical entities (same name, case-insensitive) and relations (same head and tail)
   within the document only: each document is its own KG.
7. **embed** (all-MiniLM-L6-v2): entities (name + description), relations (head, tail, summary),
   chunks, documents (title, image captions, text), into the Neo4j vector indexes. Chunks and the
   other long texts are embedded as passages (bf16 on a CPU with native bf16, cosine ≥ 0.9999 to
   fp32; ``KGQA_LOAD_THREADS`` workers).
8. **link** (beyond the paper): ``(:DocEntity)-[:SAME_AS {score}]->(:Entity)`` when name,
   aliases and description agree with a Wikidata entity above ``link_threshold``.
9. **write**: a document of at most ``write_batch`` rows (500) in ONE transaction, which first
   removes the previous version and ends by storing its content hash; a larger one in transactions
   of at most ``write_batch`` rows, its ``Document`` node ``status: 'writing'`` until the last one
   marks it ``complete`` with its content hash (retrieval reads complete documents only). A
   document whose stored hash equals the new one is skipped; a changed one is replaced exactly; a
   killed ingestion leaves the old version, the new one, or a document that is not complete and
   that the rerun removes (in bounded transactions) and writes again: never a mix taken for a
   document, never a duplicate. The rerun redoes only the documents not committed complete.

A model reply that does not fit the schema (``BadModelReply``) costs that step only: the
segment gets no textual graph, the image no matches; each is counted as a fallback in the
report. ``ModelUnavailable`` (the model cannot be reached) stops the load.

The modules: ``options`` (DocOptions, the DocReport), ``parse`` (Markdown and HTML into sections),
``discover`` (step 1: the input files read and validated, E-VQA JSON lines included), ``segment``
(step 2), ``kg`` (the per-document KG, step 6), ``extract`` (the model steps 3–5), ``embed``
(step 7), ``link`` (step 8), ``store`` (step 9, and list / show / remove), ``loader`` (the
DocumentLoader that runs them).
"""
