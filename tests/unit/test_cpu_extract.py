"""The CPU extractor (kgqa.loaders.documents.cpu_extract) on real Markdown parsed by the loader's own parser:
the subject from the title, Key: value lines, table rows and sentence spans as facts whose provenance is
their line or sentence, relation phrases mapped to a catalogue. The encoder and graph are small fakes."""

from __future__ import annotations

import numpy as np

from kgqa.core.spans import spans
from kgqa.loaders.documents.cpu_extract import RelationCatalogue, cpu_text_graph, link_subject
from kgqa.loaders.documents.kg import DocumentKG
from kgqa.loaders.documents.parse import ParsedDocument, Section, parse_markdown
from kgqa.loaders.documents.segment import segment

DOC = """# Glass Bridge

## Overview

The Glass Bridge is a footbridge over the river Lune in Northbury. It opened on 3 May 2011.

## Facts

Architect: Mara Quell
Length: 240 metres

## Records

| Year | Visitors | Operator |
|------|----------|----------|
| 2019 | 410,000 | Lune Trust |
| 2020 | 120,000 | Lune Trust |
"""


def parsed(text: str = DOC) -> ParsedDocument:
    title, secs = parse_markdown(text)
    return ParsedDocument("glass_bridge", title, "glass_bridge.md", "markdown",
                          [Section(h, t, []) for h, t, _, _ in secs], text.encode())


def graph(text: str = DOC):
    doc = parsed(text)
    chunks = segment(doc, lambda s: len(s.split()), 300)
    kg = DocumentKG()
    subject = cpu_text_graph(doc, chunks, kg)
    return doc, kg, subject


def facts(kg):
    return {(kg.entities[r.head].name, kg.entities[r.tail].name): r for r in kg.relations.values()}


def test_the_title_is_the_subject_and_key_value_lines_are_its_facts():
    _, kg, subject = graph()
    assert subject.name == "Glass Bridge" and subject.type == "subject"
    f = facts(kg)
    r = f[("Glass Bridge", "Mara Quell")]
    assert r.phrase == "Architect" and r.context == "Facts" and r.sentence == "Architect: Mara Quell"
    assert kg.entities["240 metres"].type == "quantity"


def test_a_table_row_relates_its_first_cell_to_every_other_cell_under_the_column_name():
    _, kg, _ = graph()
    f = facts(kg)
    r = f[("2019", "410,000 visitors")]                 # a number cell is named with its column
    assert r.phrase == "Visitors" and r.context == "Records"
    assert "Visitors: 410,000" in r.sentence and "Operator: Lune Trust" in r.sentence    # the row is the provenance
    assert ("Glass Bridge", "2019") in f


def test_sentence_spans_hang_off_the_subject_with_the_sentence_as_provenance():
    _, kg, _ = graph()
    f = facts(kg)
    r = f[("Glass Bridge", "3 May 2011")]
    assert r.sentence == "It opened on 3 May 2011." and r.context == "Overview"
    assert kg.entities["3 may 2011"].type == "date"
    assert "Northbury" in {e.name for e in kg.entities.values()}


def test_a_name_after_a_naming_cue_is_one_span_whatever_its_case():
    s = spans("Its scientific name is Felis catus, and it is the only species of the family Felidae.")
    assert [x.text for x in s] == ["Felis catus", "Felidae"]


def test_relation_phrases_map_to_the_catalogue_above_the_threshold_only():
    class Enc:
        def encode(self, texts):
            return np.asarray([[1.0, 0.0] if ("architect" in t.lower()) else [0.0, 1.0] for t in texts])

    class G:
        def read(self, name, **kw):
            return [{"id": "P84", "name": "architect", "aliases": ["architect of"]}]

    _, kg, _ = graph()
    cat = RelationCatalogue(G(), Enc())
    n = cat.assign(list(kg.relations.values()))
    f = facts(kg)
    assert f[("Glass Bridge", "Mara Quell")].relation_id == "P84" and n >= 1
    assert f[("Glass Bridge", "3 May 2011")].relation_id is None       # "It opened on" is no architect


def test_the_subject_is_linked_by_its_label_key_and_not_otherwise():
    class G:
        def __init__(self, rows):
            self.rows, self.queries = rows, []

        def read(self, name, **kw):
            self.queries.append(kw["query"])
            return self.rows

    _, _, subject = graph()
    g = G([{"id": "Q42", "name": "Glass Bridge", "description": ""}])
    assert link_subject(g, subject) == {"docentity_id": subject.id, "entity_id": "Q42", "score": 1.0}
    assert g.queries == ['"glass bridge"']
    assert link_subject(G([]), subject) is None


def test_each_edge_of_a_sentence_has_the_words_between_its_head_and_its_tail_as_its_phrase():
    _, kg, _ = graph("# Varnholm\n\n## Overview\n\nVarnholm is an island in the Grey Sea whose main town is Skarby. "
                     "It was charted by the explorer Ivo Brand.\n")
    f = facts(kg)
    assert f[("Varnholm", "Grey Sea")].phrase == "is an island in the"
    assert f[("Varnholm", "Skarby")].phrase == "is an island in the whose main town is"   # other spans left out
    assert f[("Varnholm", "Ivo Brand")].phrase == "It was charted by the explorer"       # head not named: from start


TECHNICAL = """# Pump controller

## Interface

The controller reads its settings from /etc/pumpd/pumpd.conf and logs to syslog. The daemon pumpd_main accepts
the --dry-run flag. Valves report the type application/x-valve-state, and 100 of them fit on one bus.
Data of the firmware 2.13 is described in section 4.2 on page 17. It drives nine Merlin valves.
Users set the limit in bar. Each valve has 2 seals, and the users open it in the ratio 2:3 with data.

## Limits

Pressure: 12
Flow: 40 litres
Returns: PUMP_OK if the valve exists and the seal holds, PUMP_BUSY otherwise
"""


def test_the_extractor_keeps_no_bare_number_and_no_fragment_and_keeps_identifiers():
    _, kg, _ = graph(TECHNICAL)
    names = {e.name for e in kg.entities.values()}
    assert not [n for n in names if n.replace(",", "").replace(".", "").isdigit()], names     # "100", "2.13", "17"
    assert {"Data", "Users"}.isdisjoint(names)                            # ordinary words at a sentence's start
    assert {"/etc/pumpd/pumpd.conf", "pumpd_main", "--dry-run", "application/x-valve-state",
            "PUMP_OK", "PUMP_BUSY"} <= names                             # code identifiers, whole
    assert {"nine Merlin valves", "2 seals", "12 pressure", "40 litres", "2:3"} <= names   # with what they count
    assert not [n for n in names if n.startswith("PUMP_OK if")]          # a clause is not one entity
    f = facts(kg)
    r = f[("Pump controller", "application/x-valve-state")]
    assert r.sentence.startswith("Valves report the type application/x-valve-state")    # with its sentence
