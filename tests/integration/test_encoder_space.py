"""The encoder that made a graph's vectors: recorded by a load, checked by the next load, ``ask`` and ``serve``
(real Neo4j, the real MiniLM; kgqa.models.vector_space).

MiniLM's vectors and model2vec's static ones are both 384-d: before the record, a graph loaded with one and
asked with the other answered without an error, from the wrong neighbours. The graph's record is put back as
it was after each test (other modules' loads wrote theirs), and the tiny KG loaded here is deleted by id.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import assert_one_line_error, free_port, run_kgqa

pytestmark = pytest.mark.integration

#: ids no other fixture KG uses
ENTITIES = {"Q99900006101": "Vesterholm Lighthouse", "Q99900006102": "Annelie Brask"}
RELATION = ("P99900061", "architect")


def set_record(graph, space: dict | None) -> None:
    graph._run("MATCH (s:EncoderSpace) DELETE s", {}, write=True)
    if space is not None:
        graph.write("encoder_space_record", space={k: v for k, v in space.items() if k != "since"})


@pytest.fixture()
def record(graph):
    """``record(space)`` sets the graph's encoder record; the record it had is put back afterwards."""
    before = graph.read("encoder_space")
    yield lambda space: set_record(graph, space)
    set_record(graph, before[0]["space"] if before else None)


def encoder(backend: str):
    from kgqa.models.encoder import SentenceEncoder

    return SentenceEncoder(backend=backend)


def tiny_kg(folder: Path) -> Path:
    folder.mkdir()
    (folder / "wikidata5m_relation.txt").write_text("\t".join(RELATION) + "\n", encoding="utf-8")
    (folder / "wikidata5m_entity.txt").write_text("".join(f"{q}\t{n}\n" for q, n in ENTITIES.items()),
                                                  encoding="utf-8")
    a, b = ENTITIES
    (folder / "wikidata5m_transductive_train.txt").write_text(f"{a}\t{RELATION[0]}\t{b}\n", encoding="utf-8")
    for split in ("valid", "test"):
        (folder / f"wikidata5m_transductive_{split}.txt").write_text("", encoding="utf-8")
    return folder


def remove_tiny(graph) -> None:
    graph._run("UNWIND $ids AS id MATCH (e:Entity {id: id}) DETACH DELETE e", {"ids": list(ENTITIES)}, write=True)
    graph._run("MATCH (r:Relation {id: $id}) DETACH DELETE r", {"id": RELATION[0]}, write=True)


def test_a_load_records_its_encoder_and_the_same_family_is_accepted(graph, record, tmp_path):
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions
    from kgqa.models.vector_space import check_space

    record(None)                                   # a graph loaded before the record existed
    remove_tiny(graph)
    try:
        load_wikidata5m(graph, tiny_kg(tmp_path / "kg"), options=LoadOptions(progress=False))
        space = graph.read("encoder_space")[0]["space"]
        assert (space["family"], space["model"], space["dim"]) == ("transformer", "all-MiniLM-L6-v2", 384)
        assert space["since"]
        assert len(graph.read("load_entities_lacking_embedding", ids=list(ENTITIES))) == 0
        # torch, onnx and onnx-int8 give the same vectors (int8 within 0.99 cosine): all accepted
        for backend in ("torch", "onnx", "onnx-int8"):
            assert check_space(graph, encoder(backend))["weights"] == space["weights"]
    finally:
        remove_tiny(graph)


def test_a_minilm_graph_refuses_a_model2vec_load_before_writing(graph, record, tmp_path):
    from kgqa.core.errors import InvalidInput
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    record(encoder("onnx").space)
    remove_tiny(graph)
    with pytest.raises(InvalidInput, match="KGQA_ENCODER_BACKEND=onnx"):
        load_wikidata5m(graph, tiny_kg(tmp_path / "kg"), encoder=encoder("model2vec"),
                        options=LoadOptions(progress=False))
    assert graph._run("UNWIND $ids AS id MATCH (e:Entity {id: id}) RETURN e.id AS id", {"ids": list(ENTITIES)},
                      write=False) == []


def test_ask_and_serve_on_a_model2vec_graph_with_minilm_say_so_in_one_line(graph, record):
    record(encoder("model2vec").space)
    env = {"KGQA_CHAT_BACKEND": "none", "KGQA_ENCODER_BACKEND": "onnx"}
    ask = run_kgqa("ask", "Who designed the Vesterholm Lighthouse?", env=env)
    assert_one_line_error(ask, "model2vec from all-MiniLM-L6-v2", "encodes with all-MiniLM-L6-v2 (transformer",
                          "KGQA_ENCODER_BACKEND=model2vec", "load the graph again", code=2)
    serve = run_kgqa("serve", "--port", str(free_port()), env=env, timeout=120)
    assert_one_line_error(serve, "KGQA_ENCODER_BACKEND=model2vec", code=2)


def test_a_document_load_with_model2vec_on_a_minilm_graph_says_so_in_one_line(graph, record, tmp_path):
    record(encoder("onnx").space)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "note.md").write_text("# Vesterholm\n\nThe lighthouse was designed by Annelie Brask.\n")
    out = run_kgqa("load", "documents", str(tmp_path / "docs"),
                   env={"KGQA_CHAT_BACKEND": "none", "KGQA_ENCODER_BACKEND": "model2vec"})
    assert_one_line_error(out, "the graph's vectors were made by all-MiniLM-L6-v2 (transformer",
                          "KGQA_ENCODER_BACKEND=onnx", code=2)
