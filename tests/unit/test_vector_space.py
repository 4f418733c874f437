"""The encoder's record in the graph (kgqa.models.vector_space), around a stand-in graph; the real Neo4j, the
CLI's line and the loads are in tests/integration/test_encoder_space.py."""

from __future__ import annotations

import os
import shutil

import pytest

from kgqa.core.errors import InvalidInput
from kgqa.models.vector_space import check_space, record_space, weights_digest


class Graph:
    """Holds the record as the two named queries would."""

    def __init__(self, space=None):
        self.space, self.writes = space, 0

    def read(self, name, **kw):
        assert name == "encoder_space"
        return [{"space": self.space}] if self.space else []

    def write(self, name, space):
        assert name == "encoder_space_record"
        self.space, self.writes = dict(space), self.writes + 1


class Encoder:
    def __init__(self, family="transformer", weights="w1", backend="onnx"):
        self.space = {"family": family, "model": "all-MiniLM-L6-v2", "weights": weights, "dim": 384,
                      "backend": backend}


def test_the_digest_follows_the_weights_not_the_install(tmp_path):
    a = tmp_path / "a"
    a.mkdir()
    (a / "model.safetensors").write_bytes(bytes(range(256)) * 20_000)     # 5 MB: both ends read
    (a / "README.md").write_text("not weights")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    os.utime(b / "model.safetensors", (1, 1))            # a reinstall: other mtimes, same bytes
    (b / "README.md").write_text("another readme")
    assert weights_digest(a) == weights_digest(b)
    data = bytearray((b / "model.safetensors").read_bytes())
    data[-1] ^= 1                                        # the last byte of the weights
    (b / "model.safetensors").write_bytes(bytes(data))
    assert weights_digest(a) != weights_digest(b)


def test_a_load_records_once_and_the_same_family_passes():
    g = Graph()
    record_space(g, Encoder(backend="onnx"))
    record_space(g, Encoder(backend="onnx-int8"))        # the same vectors: no second record, no error
    assert g.writes == 1 and g.space["backend"] == "onnx"
    assert check_space(g, Encoder(backend="torch"))["weights"] == "w1"


def test_a_graph_without_a_record_or_an_encoder_without_a_space_passes():
    assert check_space(Graph(), Encoder()) is None
    assert check_space(Graph(Encoder().space), object()) is None


@pytest.mark.parametrize("theirs, mine, fix", [
    (Encoder("model2vec", backend="model2vec"), Encoder(), "KGQA_ENCODER_BACKEND=model2vec"),
    (Encoder(), Encoder("model2vec", backend="model2vec"), "KGQA_ENCODER_BACKEND=onnx"),
    (Encoder(weights="w2"), Encoder(), "KGQA_ENCODER_MODEL to the graph's model (all-MiniLM-L6-v2)"),
])
def test_another_encoder_is_one_line_naming_both_and_the_fix(theirs, mine, fix):
    g = Graph(theirs.space)
    with pytest.raises(InvalidInput) as e:
        record_space(g, mine)                            # a load stops before its first vector
    line = str(e.value)
    assert "\n" not in line and fix in line and "load the graph again" in line
    assert f"weights {theirs.space['weights']}" in line and f"backend {mine.space['backend']}" in line
    assert g.writes == 0
