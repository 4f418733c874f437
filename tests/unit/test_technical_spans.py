"""Answers that respect technical tokens (kgqa.core.spans.whole_tokens, applied to every span the learned reader
proposes): a path, MIME type, file name or version is never returned cut from inside, and nothing is glued after
it. The shipped reader reads passages written in the test; the rule itself is checked on its own."""

from __future__ import annotations

import pytest

from kgqa.core.spans import is_technical, whole_tokens
from kgqa.models.heads import span_reader as S
from tests.unit.test_span_reader import SHIPPED


def widened(text: str, piece: str, after: str = "") -> str:
    s = text.index(piece, text.index(after) if after else 0)
    a, b = whole_tokens(text, s, s + len(piece))
    return text[a:b]


def test_a_piece_of_a_technical_token_widens_to_it_and_trailing_noise_is_dropped():
    t = ("Players treat audio/midi as audio/x-midi. Compressed archives are also application/zip files. "
         "The manual covers version 4.19.0, 18 August 2022. Written by Thomas Leonard tal197 at home. "
         "See the pkix.asn file and the --strict flag. It cost $3.5 million in the U.S. Army's 1990 budget.")
    assert widened(t, "x-midi") == "audio/x-midi"
    assert widened(t, "midi", "x-midi") == "audio/x-midi"
    assert widened(t, "application/zip files") == "application/zip"
    assert widened(t, "4.19.0, 18 August 2022") == "4.19.0"
    assert widened(t, "Thomas Leonard tal197") == "Thomas Leonard"
    assert widened(t, "pkix") == "pkix.asn"
    assert widened(t, "strict") == "--strict"
    # ordinary text is left as it was: numbers, abbreviations, a name and what follows it
    for piece in ("3.5 million", "U.S", "Army", "1990 budget", "Compressed archives"):
        assert widened(t, piece) == piece
    assert [w for w in ("U.S.", "Ph.D.", "e.g.", "3.5", "1,000", "x-midi", "10:30") if is_technical(w)] == []


@pytest.fixture(scope="module")
def reader():
    import torch

    torch.set_num_threads(1)
    return S.load_span_reader(SHIPPED)


@pytest.mark.skipif(not SHIPPED.is_file(), reason="no shipped span-reader checkpoint")
@pytest.mark.parametrize("passage,question,answer", [
    ("The sound player treats audio/midi files under their alias audio/x-midi as well. Each alias is listed once.",
     "What is the alias of audio/midi?", "audio/x-midi"),
    ("Every streamable type is a subclass of application/octet-stream, and every text type is a subclass of "
     "text/plain.", "Every streamable type is a subclass of which type?", "application/octet-stream"),
    ("The syntax of the definitions is shown in the pkix.asn file that comes with the library.",
     "Which file shows the syntax of the definitions?", "pkix.asn"),
])
def test_the_reader_returns_a_technical_token_whole(reader, passage, question, answer):
    (best,) = reader.read(question, [passage], top=1)
    assert best.text == answer and passage[best.start:best.end] == answer
