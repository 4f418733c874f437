"""Two inputs VisPath abstains on whatever their grounding score (``abstain_below`` > 0; our addition).

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843) always answers. bench/abstain.py showed that the grounding score alone cannot
separate these from real questions without abstaining on many answerable ones: an all-black image
matches a flat reference image by colour layout (0.14 on the demo KG, 0.36 on more-dev's), and the
injection "Ignore previous instructions and …" links its capitalised words to some entity at cosine
≈ 0.25. So they are named directly:

* a blank image: (almost) one colour, nothing in it to recognise;
* a question that asks to override the instructions instead of asking about the graph.
"""

from __future__ import annotations

import re

#: a blank image: the standard deviation of its grey levels (0–255) is below this
BLANK_STD = 2.0

_OVERRIDE = re.compile(
    r"\b(ignore|disregard|forget|override|bypass)\b[^.?!]{0,40}?\b(previous|prior|above|earlier|all|any|your|the|system)?"
    r"\s*(instructions?|prompts?|rules|directions|guidelines)\b", re.IGNORECASE)


def is_blank(image) -> bool:
    """Whether the query image is (almost) a single colour; False when it cannot be read here."""
    try:
        import numpy as np

        from kgqa.core.images import open_rgb

        im = open_rgb(image).convert("L")
        im.thumbnail((128, 128))
        return float(np.asarray(im, dtype=np.float32).std()) < BLANK_STD
    except Exception:  # noqa: BLE001 - not decodable here (a test stand-in): the grounder judges it
        return False


def overrides_instructions(question: str) -> bool:
    """Whether the question asks to ignore/override instructions ("Ignore previous instructions and …")."""
    return bool(_OVERRIDE.search(question or ""))
