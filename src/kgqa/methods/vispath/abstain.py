"""VisPath's abstention (``abstain_below`` > 0; our addition): the grounding score and the decision.

``measure_grounding`` scores how firmly the start entity is grounded; ``weak_grounding`` says why the run
should end without an answer, or None. Two inputs VisPath abstains on whatever their grounding score:

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

from kgqa.core.errors import BadModelReply
from kgqa.methods.vispath.records import VisPathRun

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


def measure_grounding(vision, image, run: VisPathRun) -> None:
    """How firmly the start entity is grounded: ``run.grounding`` (0–1) and its parts.

    Our addition (the paper always answers). Parts: ``recognition``, the image's best match score
    where the vision backend ranks reference images (a declined recognition counts its best score, or 0
    when the backend reports none), and ``link``, the start entity's cosine to the object o it was
    linked from. The grounding is the weaker of the two: every later hop stands on it."""
    parts: dict[str, float] = {}
    declined = any(f.message.startswith("recognition:") for f in run.fallbacks)
    if image is not None:
        rank = getattr(vision, "rank", None)                # the reference-image grounder's scores
        try:
            best = rank(image, 1) if callable(rank) else None
        except BadModelReply:
            best = None
        if is_blank(image):
            parts["recognition"], parts["blank"] = 0.0, 1.0
        elif best:
            parts["recognition"] = float(best[0][1])
        elif declined:
            parts["recognition"] = 0.0
    if run.start is not None:
        parts["link"] = float(run.start.retrieval)
    run.grounding_parts = {k: round(v, 4) for k, v in parts.items()}
    scores = [v for k, v in parts.items() if k != "blank"]
    run.grounding = round(min(scores), 4) if run.start is not None and scores else 0.0


def weak_grounding(run: VisPathRun, t: float) -> str | None:
    """Why the start entity is too weakly grounded to answer from (``t``: ``abstain_below``), or None.

    A low-scoring or declined recognition (a black image "is" Monaco at 0.14), or a start entity whose
    name barely matches the object o (an injected "HACKED" links to nothing at cosine 0.3), ends the
    run without an answer instead of reasoning from it (``measure_grounding`` gives the scores)."""
    if overrides_instructions(run.question):
        return "the question asks to override instructions, not about the graph"
    if run.grounding_parts.get("blank"):
        return "the image is blank (one colour, nothing to recognise)"
    rec = run.grounding_parts.get("recognition")
    if rec is not None and rec < t:
        if any(f.message.startswith("recognition:") for f in run.fallbacks):
            return f"the image was not recognised (best match score {rec:.2f} < {t})"
        return f"image recognised as {run.object_name!r} with score {rec:.2f} < {t}"
    if run.start is None:
        return "no start entity in the graph"
    if run.start.retrieval < t:
        return (f"start entity {run.start.name} [{run.start.id}] matches {run.object_name!r} "
                f"with cosine {run.start.retrieval:.2f} < {t}")
    return None
