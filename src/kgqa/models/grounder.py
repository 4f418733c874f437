"""ReferenceImageGrounder: a stand-in for a vision-language model. NOT a VLM.

No VLM weights reach a CPU-only machine, so the ``local`` vision backend answers
the one visual question VisPath needs (Eq. 1, "which entity does the image
show?") by matching the query image against the KG's own entity images,
``(:Image {sha256, path})-[:DEPICTS]->(:Entity)`` (``cypher/entity_reference_images``).

Matching, top to bottom:

1. Each image is scaled to at most ``SIDE`` pixels and turned to grayscale
   (colour changes then matter little).
2. ORB keypoints and binary descriptors (scikit-image): oriented FAST corners,
   rotated BRIEF — invariant to rotation, robust to scale (image pyramid), to
   crops (local features) and to JPEG noise.
3. Shortlist: when there are more than ``SHORTLIST`` references, a cheap global
   descriptor (a perceptual hash tried at four rotations, plus a hue–saturation
   histogram) keeps the most similar ones.
4. Verification: descriptors are matched (mutual nearest neighbours, Lowe ratio
   test) and a similarity transform is fitted with RANSAC. With ``e`` the
   inliers beyond what unrelated images reach by chance (``CHANCE_INLIERS``),
   a reference scores ``e / (e + INLIER_HALF)`` in [0, 1).
5. Colour layout, for textureless pictures (flags, logos: fewer than
   ``TEXTURELESS`` keypoints, query and reference alike) where ORB finds no
   corners: an 8x8 CIELAB grid of the query's centre against sub-windows of each
   reference (crop-tolerant), lightness offset removed, aspect ratio compared.
   The nearest entity scores its margin over the runner-up (``1 - d1/d2``, a
   ratio test; nothing beyond ``LAYOUT_MAX_DISTANCE``), every other entity 0.

The cues form a cascade: when any reference has geometric (ORB) evidence, the ORB
scores decide; only when none has, colour layout does. ``recognize``
answers only above ``KGQA_GROUNDER_MIN_SCORE``. Neither cue can tell that a
picture shows something the KG has no image of, beyond these scores.

Features are computed lazily and cached on disk by sha256
(``<data_dir>/models/grounder-v1/``). ``generate_json`` delegates to the
ChatModel with the image replaced by a note naming what the grounder recognised.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
from pydantic import BaseModel

from kgqa.core.config import Settings
from kgqa.core.errors import BadModelReply, InvalidInput, ModelUnavailable
from kgqa.models.accounting import Meter
from kgqa.core.images import ImageInput
from kgqa.models.base import ChatModel

T = TypeVar("T", bound=BaseModel)

FEATURE_VERSION = "grounder-v2"
SIDE = 320            # longer side in pixels before feature extraction
N_KEYPOINTS = 400
SHORTLIST = 40        # references verified geometrically per query
CHANCE_INLIERS = 4    # RANSAC finds up to this many inliers between unrelated images
INLIER_HALF = 8       # inliers beyond chance at which the score is 0.5
RATIO = 0.85          # Lowe's ratio test on Hamming distances
GRID = 8              # colour layout: GRID x GRID cells (CIELAB means)
PROBE = 0.8           # the query's central fraction compared by colour layout
WINDOWS = tuple((r, fx, fy) for r in (0.56, 0.63, 0.7, 0.77, 0.84, 0.91)
                for fx in (0.0, 0.25, 0.5, 0.75, 1.0) for fy in (0.0, 0.25, 0.5, 0.75, 1.0))
LAYOUT_SCALE = 6.0    # mean ΔE (CIE76) under which a lone reference counts as a layout match
LAYOUT_WEIGHT = 1.0   # score of a layout match = LAYOUT_WEIGHT * its margin (1 - d1/d2)
LAYOUT_MAX_DISTANCE = 26.0  # mean ΔE beyond which colour layout says nothing
TEXTURELESS = 150     # fewer ORB keypoints than this: a flat picture, compared by colour layout
ASPECT_WEIGHT = 15.0  # ΔE added per unit of |log aspect ratio| difference


@dataclass
class Features:
    keypoints: np.ndarray     # (n, 2) row, col in the scaled image
    descriptors: np.ndarray   # (n, 256) bool
    phash: np.ndarray         # (4, 64) bool: pHash of the image at 0/90/180/270 degrees
    hist: np.ndarray          # (H*S,) float32, L1-normalised hue-saturation histogram
    probe: np.ndarray         # (GRID, GRID, 3) CIELAB layout of the central PROBE part (used as a query)
    windows: np.ndarray       # (len(WINDOWS), GRID, GRID, 3) layouts of sub-windows (used as a reference);
                              # empty (0, GRID, GRID, 3) while the image has only been a query
    aspect: float             # width / height


@dataclass
class Reference:
    entity_id: str
    name: str
    sha256: str
    path: Path


def _scaled(img):
    """RGB Pillow image with the longer side at most SIDE."""
    from PIL import Image

    w, h = img.size
    f = SIDE / max(w, h)
    if f < 1:
        img = img.resize((max(1, round(w * f)), max(1, round(h * f))), Image.BILINEAR)
    return img


def extract(img, windows: bool = True) -> Features:
    """Features of an RGB Pillow image; ``windows=False`` (a query image): its sub-window layouts, which only a
    reference needs, left empty."""
    import imagehash
    from skimage.color import rgb2gray, rgb2hsv
    from skimage.feature import ORB

    img = _scaled(img.convert("RGB"))
    rgb = np.asarray(img, dtype=np.float64) / 255.0
    gray = rgb2gray(rgb)
    kp = np.zeros((0, 2))
    desc = np.zeros((0, 256), dtype=bool)
    try:
        orb = ORB(n_keypoints=N_KEYPOINTS, fast_threshold=0.05, downscale=1.3, n_scales=6)
        orb.detect_and_extract(gray)
        kp, desc = orb.keypoints, orb.descriptors
    except (RuntimeError, ValueError, IndexError):
        pass  # textureless image: no keypoints, only the global descriptor
    ph = np.stack([imagehash.phash(img.rotate(a, expand=True)).hash.flatten() for a in (0, 90, 180, 270)])
    hsv = rgb2hsv(rgb)
    hist, _, _ = np.histogram2d(hsv[..., 0].ravel(), hsv[..., 1].ravel(), bins=(12, 4), range=((0, 1), (0, 1)))
    hist = hist.astype(np.float32).ravel()
    hist /= max(hist.sum(), 1.0)
    probe, wins = _layouts(img, windows)
    return Features(np.asarray(kp, dtype=np.float32), np.asarray(desc, dtype=bool), ph, hist, probe, wins,
                    img.size[0] / img.size[1])


def _grids(imgs) -> np.ndarray:
    """GRID x GRID mean colours (box filter) in CIELAB, of each image: (len(imgs), GRID, GRID, 3). One colour
    conversion for the stack (it is per pixel: each grid is what it would be alone)."""
    from PIL import Image
    from skimage.color import rgb2lab

    small = np.stack([np.asarray(im.resize((GRID, GRID), Image.BOX), dtype=np.float64) for im in imgs])
    return rgb2lab(small / 255.0).astype(np.float32)


def _layouts(img, windows: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Colour layouts for textureless pictures (flags, logos), which give ORB no corners.

    As a query, the central PROBE part (a crop or a small rotation, with its filled
    corners, hardly touches it); as a reference, WINDOWS: sub-windows at several
    sizes and positions, so that a cropped query still finds its part (``windows=False``: none, an empty stack).
    """
    w, h = img.size
    m = (1 - PROBE) / 2
    crops = [img.crop((round(w * m), round(h * m), round(w * (1 - m)), round(h * (1 - m))))]
    for r, fx, fy in WINDOWS if windows else ():
        x0, y0 = (1 - r) * fx * w, (1 - r) * fy * h
        crops.append(img.crop((round(x0), round(y0), round(x0 + r * w), round(y0 + r * h))))
    grids = _grids(crops)
    return grids[0], grids[1:]


def layout_distance(q: Features, r: Features) -> float:
    """Mean colour difference (ΔE) between the query's centre and the best reference window,
    lightness offset removed (brightness changes), plus an aspect-ratio penalty."""
    d = r.windows - q.probe[None]                       # (W, G, G, 3)
    d[..., 0] -= d[..., 0].mean(axis=(1, 2), keepdims=True)
    de = np.sqrt((d ** 2).sum(axis=-1)).mean(axis=(1, 2))
    return float(de.min()) + ASPECT_WEIGHT * abs(float(np.log(q.aspect / r.aspect)))



def global_similarity(q: Features, r: Features) -> float:
    """Cheap shortlist score in [0, 1]: best pHash agreement over rotations, and colour."""
    ph = 1.0 - min(np.count_nonzero(q.phash[i] != r.phash[0]) for i in range(4)) / 64.0
    col = float(np.minimum(q.hist, r.hist).sum())
    return 0.6 * ph + 0.4 * col


def hamming_matches(d1: np.ndarray, d2: np.ndarray, max_ratio: float = RATIO) -> np.ndarray:
    """Pairs (i, j) of binary descriptors that are each other's nearest by Hamming distance and pass Lowe's
    ratio test (nearest over second nearest of i below ``max_ratio``); the nearest is the lowest index among
    equals. Distances are the popcount of the XOR of the packed bits; the pairs are those of scikit-image's
    ``match_descriptors(metric="hamming", cross_check=True, max_ratio=max_ratio)``."""
    word = np.uint64 if d1.shape[1] % 64 == 0 else np.uint8
    a = np.packbits(d1, axis=1).view(word)
    b = np.packbits(d2, axis=1).view(word)
    dist = np.bitwise_count(a[:, None, :] ^ b[None, :, :]).sum(axis=2, dtype=np.int64).astype(np.float64)
    nearest = dist.argmin(axis=1)
    i = np.flatnonzero(dist.argmin(axis=0)[nearest] == np.arange(len(a)))      # mutual
    j = nearest[i]
    best = dist[i, j]
    dist[i, j] = np.inf
    second = dist[i].min(axis=1) if len(b) > 1 else np.full(len(i), np.inf)
    second[second == 0] = np.finfo(np.float64).eps
    keep = best / second < max_ratio
    return np.column_stack((i[keep], j[keep]))


def inliers(q: Features, r: Features, seed: int = 0) -> int:
    """Geometrically consistent ORB matches between two images (RANSAC similarity transform; the count
    scikit-image's ``ransac`` gives, all trials estimated at once: ``kgqa.models.grounder_ransac``)."""
    from kgqa.models.grounder_ransac import inlier_count

    if len(q.descriptors) < 4 or len(r.descriptors) < 4:
        return 0
    m = hamming_matches(q.descriptors, r.descriptors)
    if len(m) < 4:
        return 0
    src = q.keypoints[m[:, 0]][:, ::-1]   # (row, col) → (x, y)
    dst = r.keypoints[m[:, 1]][:, ::-1]
    try:
        return inlier_count(src, dst, min_samples=3, residual_threshold=4.0, max_trials=300,
                            stop_probability=0.999, seed=seed)
    except (ValueError, np.linalg.LinAlgError):
        return 0


class FeatureCache:
    """Features by image sha256, in memory and as .npz files on disk."""

    def __init__(self, directory: Path | None):
        self.dir = directory
        self._mem: dict[str, Features] = {}
        self._lock = threading.Lock()

    def get(self, sha256: str, load_image, windows: bool = True) -> Features:
        """The image's features; ``windows=False`` (a query) does without the sub-window layouts, which are
        added the first time the same image is asked for as a reference."""
        with self._lock:
            f = self._mem.get(sha256)
        if f is not None and (len(f.windows) or not windows):
            return f
        f = f or self._read(sha256)
        if f is None:
            f = extract(load_image(), windows)
            self._write(sha256, f)
        elif windows and not len(f.windows):
            f = replace(f, windows=_layouts(_scaled(load_image().convert("RGB")))[1])
            self._write(sha256, f)
        with self._lock:
            self._mem[sha256] = f
        return f

    def _file(self, sha256: str) -> Path | None:
        return None if self.dir is None else self.dir / sha256[:2] / f"{sha256}.npz"

    def _read(self, sha256: str) -> Features | None:
        p = self._file(sha256)
        if p is None or not p.exists():
            return None
        try:
            with np.load(p) as z:
                return Features(z["keypoints"], z["descriptors"], z["phash"], z["hist"], z["probe"], z["windows"],
                                float(z["aspect"]))
        except (OSError, ValueError, KeyError):
            return None

    def _write(self, sha256: str, f: Features) -> None:
        p = self._file(sha256)
        if p is None:
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp.npz")
        np.savez(tmp, keypoints=f.keypoints, descriptors=f.descriptors, phash=f.phash, hist=f.hist,
                 probe=f.probe, windows=f.windows, aspect=np.float64(f.aspect))
        tmp.replace(p)


def _resolve(path: str) -> Path:
    # loaders store resolved paths; a relative one (an older load) is taken from the working directory
    return Path(path)


class ReferenceImageGrounder:
    """VisionModel stand-in: recognises KG entities by matching their reference images."""

    backend = "local"
    name = "reference-image-grounder (stand-in, not a VLM)"

    def __init__(self, settings: Settings, graph=None, chat: ChatModel | None = None,
                 meter: Meter | None = None, references: list[Reference] | None = None):
        self.settings = settings
        self.graph = graph
        self.chat = chat
        self.meter = meter or Meter()
        self.min_score = settings.grounder_min_score
        self.features = FeatureCache(settings.models_dir / FEATURE_VERSION)
        self._refs = references
        self._lock = threading.Lock()
        self._ranked: dict[str, list[tuple[Reference, float]]] = {}   # query sha256 -> full ranking
        self.skipped: list[str] = []   # reference images that could not be read

    # -- references -----------------------------------------------------------
    @property
    def references(self) -> list[Reference]:
        with self._lock:
            if self._refs is None:
                if self.graph is None:
                    raise ModelUnavailable("reference-image grounder: no graph to read entity images from")
                rows = self.graph.read("entity_reference_images")
                self._refs = [Reference(r["entity_id"], r["name"] or r["entity_id"], r["sha256"],
                                        _resolve(r["path"])) for r in rows]
            return self._refs

    def reference_features(self, ref: Reference) -> Features | None:
        """The features of one reference image (cached), or None when it cannot be read (benchmarks)."""
        return self._ref_features(ref)

    def _ref_features(self, ref: Reference) -> Features | None:
        def load():
            from PIL import Image

            with Image.open(ref.path) as im:
                return im.convert("RGB")
        from PIL import Image

        try:
            return self.features.get(ref.sha256, load)
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:
            self.skipped.append(f"{ref.path}: {e}")  # an unreadable reference is left out, not fatal
            return None

    def query_features(self, image: ImageInput) -> Features:
        """The features of a query image, as recognition computes them (benchmarks)."""
        return self._query_features(image)

    def _query_features(self, image: ImageInput) -> Features:
        from kgqa.core.images import open_rgb

        try:
            return self.features.get(image.sha256, lambda: open_rgb(image), windows=False)
        except (OSError, ValueError, SyntaxError) as e:
            raise InvalidInput(f"{image.path}: not a readable image: {e}") from e

    # -- matching -------------------------------------------------------------
    def rank(self, image: ImageInput, k: int = 5) -> list[tuple[str, float]]:
        """The ``k`` best-matching entities as (entity_id, score), best first."""
        return [(ref.entity_id, score) for ref, score in self._rank(image, k)]

    def _rank(self, image: ImageInput, k: int) -> list[tuple[Reference, float]]:
        with self.meter.call("vision"):
            with self._lock:
                done = self._ranked.get(image.sha256)
            if done is not None:  # VisPath asks about the same image several times per question
                return done[:k]
            ranked = self._rank_all(image)
            with self._lock:
                if len(self._ranked) >= 256:
                    self._ranked.pop(next(iter(self._ranked)))
                self._ranked[image.sha256] = ranked
            return ranked[:k]

    def _rank_all(self, image: ImageInput) -> list[tuple[Reference, float]]:
        refs = self.references
        if not refs:
            raise BadModelReply("reference-image grounder: the graph has no entity images "
                                "((:Image)-[:DEPICTS]->(:Entity))", code="declined")
        q = self._query_features(image)
        feats = [(ref, self._ref_features(ref)) for ref in refs]
        feats = [(ref, f) for ref, f in feats if f is not None]
        if len(feats) > SHORTLIST:
            feats.sort(key=lambda rf: global_similarity(q, rf[1]), reverse=True)
            feats = feats[:SHORTLIST]
        # per entity: best ORB score, and smallest colour-layout distance over its images
        orb: dict[str, float] = {}
        lay: dict[str, float] = {}
        glob: dict[str, float] = {}
        ref_of: dict[str, Reference] = {}
        for ref, f in feats:
            extra = max(0, inliers(q, f) - CHANCE_INLIERS)
            e = ref.entity_id
            orb[e] = max(orb.get(e, 0.0), extra / (extra + INLIER_HALF))
            flat = len(q.keypoints) < TEXTURELESS and len(f.keypoints) < TEXTURELESS
            lay[e] = min(lay.get(e, np.inf), layout_distance(q, f) if flat else np.inf)
            glob[e] = max(glob.get(e, 0.0), global_similarity(q, f))
            ref_of.setdefault(e, ref)
        # colour layout speaks only for its nearest entity, by its margin over the runner-up
        # (ratio test): a flag close to two others is not recognised
        order = sorted(lay, key=lay.get)
        margin = {e: 0.0 for e in lay}
        if order and np.isfinite(lay[order[0]]):
            if len(order) >= 2 and np.isfinite(lay[order[1]]) and lay[order[1]] > 0:
                margin[order[0]] = max(0.0, 1.0 - lay[order[0]] / lay[order[1]])
            else:  # the only textureless reference: no runner-up to compare with
                margin[order[0]] = 1.0 if lay[order[0]] <= LAYOUT_SCALE else 0.0
        if any(v > 0 for v in orb.values()):   # geometric evidence decides when there is any
            score = orb
        else:
            score = {e: LAYOUT_WEIGHT * margin[e] if lay[e] <= LAYOUT_MAX_DISTANCE else 0.0 for e in lay}
        ranked = sorted(lay, key=lambda e: (-score[e], lay[e], -glob[e], e))  # ties: cheaper cues
        return [(ref_of[e], score[e]) for e in ranked]

    def recognize(self, image: ImageInput, hint: str = "") -> str:
        """The name of the KG entity the image shows (``hint`` is not used by this stand-in).

        Raises BadModelReply (code ``declined``) when no reference image matches (score below
        ``KGQA_GROUNDER_MIN_SCORE``), so that the caller takes its fallback.
        """
        ranked = self._rank(image, 1)
        if not ranked or ranked[0][1] < self.min_score:
            best = f"best {ranked[0][0].entity_id} at {ranked[0][1]:.2f}" if ranked else "no candidates"
            raise BadModelReply(f"reference-image grounder: no KG entity image matches {image.path.name} "
                                f"({best} < {self.min_score})", code="declined")
        return ranked[0][0].name

    def generate_json(self, image: ImageInput | None, prompt: str, schema: type[T], *,
                      system: str | None = None, max_tokens: int = 256) -> T:
        if self.chat is None:
            raise ModelUnavailable("reference-image grounder: no ChatModel for the textual part")
        note = ""
        if image is not None:
            try:
                note = f"[image: a picture of {self.recognize(image)}]\n"
            except BadModelReply:
                note = "[image: not recognised]\n"
        return self.chat.generate_json(note + prompt, schema, system=system, max_tokens=max_tokens)


def image_from_array(arr: np.ndarray, fmt: str = "PNG", quality: int = 90) -> bytes:
    """Encode a numpy image (H, W[, 3]) as file bytes; used by tests and the benchmark."""
    from PIL import Image

    im = Image.fromarray(arr)
    if im.mode not in ("RGB", "L"):
        im = im.convert("RGB")
    buf = io.BytesIO()
    im.save(buf, format=fmt, **({"quality": quality} if fmt == "JPEG" else {}))
    return buf.getvalue()
