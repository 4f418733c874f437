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
   a reference scores ``e / (e + INLIER_HALF)`` in [0, 1); ties (e.g. all 0)
   are broken by the global descriptor. An entity's score is its best image's.

Features are computed lazily and cached on disk by sha256
(``<data_dir>/models/grounder-v1/``). ``generate_json`` delegates to the
ChatModel with the image replaced by a note naming what the grounder recognised.
"""

from __future__ import annotations

import io
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
from pydantic import BaseModel

from kgqa.config import REPO_ROOT, Settings
from kgqa.errors import InvalidInput, ModelUnavailable
from kgqa.models.accounting import Meter
from kgqa.models.base import ChatModel, ImageInput

T = TypeVar("T", bound=BaseModel)

FEATURE_VERSION = "grounder-v1"
SIDE = 320            # longer side in pixels before feature extraction
N_KEYPOINTS = 400
SHORTLIST = 40        # references verified geometrically per query
CHANCE_INLIERS = 4    # RANSAC finds up to this many inliers between unrelated images
INLIER_HALF = 8       # inliers beyond chance at which the score is 0.5
RATIO = 0.85          # Lowe's ratio test on Hamming distances


@dataclass
class Features:
    keypoints: np.ndarray     # (n, 2) row, col in the scaled image
    descriptors: np.ndarray   # (n, 256) bool
    phash: np.ndarray         # (4, 64) bool: pHash of the image at 0/90/180/270 degrees
    hist: np.ndarray          # (H*S,) float32, L1-normalised hue-saturation histogram


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


def extract(img) -> Features:
    """Features of an RGB Pillow image."""
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
    return Features(np.asarray(kp, dtype=np.float32), np.asarray(desc, dtype=bool), ph, hist)


def global_similarity(q: Features, r: Features) -> float:
    """Cheap shortlist score in [0, 1]: best pHash agreement over rotations, and colour."""
    ph = 1.0 - min(np.count_nonzero(q.phash[i] != r.phash[0]) for i in range(4)) / 64.0
    col = float(np.minimum(q.hist, r.hist).sum())
    return 0.6 * ph + 0.4 * col


def inliers(q: Features, r: Features, seed: int = 0) -> int:
    """Geometrically consistent ORB matches between two images (RANSAC similarity transform)."""
    from skimage.feature import match_descriptors
    from skimage.measure import ransac
    from skimage.transform import SimilarityTransform

    if len(q.descriptors) < 4 or len(r.descriptors) < 4:
        return 0
    m = match_descriptors(q.descriptors, r.descriptors, metric="hamming", cross_check=True,
                          max_ratio=RATIO)
    if len(m) < 4:
        return 0
    src = q.keypoints[m[:, 0]][:, ::-1]   # (row, col) → (x, y)
    dst = r.keypoints[m[:, 1]][:, ::-1]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "No inliers found": we return 0
            model, mask = ransac((src, dst), SimilarityTransform, min_samples=3, residual_threshold=4.0,
                                 max_trials=300, rng=seed)
    except (ValueError, np.linalg.LinAlgError):
        return 0
    if model is None or mask is None:
        return 0
    return int(np.count_nonzero(mask))


class FeatureCache:
    """Features by image sha256, in memory and as .npz files on disk."""

    def __init__(self, directory: Path | None):
        self.dir = directory
        self._mem: dict[str, Features] = {}
        self._lock = threading.Lock()

    def get(self, sha256: str, load_image) -> Features:
        with self._lock:
            if sha256 in self._mem:
                return self._mem[sha256]
        f = self._read(sha256)
        if f is None:
            f = extract(load_image())
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
                return Features(z["keypoints"], z["descriptors"], z["phash"], z["hist"])
        except (OSError, ValueError, KeyError):
            return None

    def _write(self, sha256: str, f: Features) -> None:
        p = self._file(sha256)
        if p is None:
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".tmp.npz")
        np.savez(tmp, keypoints=f.keypoints, descriptors=f.descriptors, phash=f.phash, hist=f.hist)
        tmp.replace(p)


def _resolve(path: str) -> Path:
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return REPO_ROOT / p


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

    def _query_features(self, image: ImageInput) -> Features:
        from kgqa.images import open_rgb

        try:
            return self.features.get(image.sha256, lambda: open_rgb(image))
        except (OSError, ValueError, SyntaxError) as e:
            raise InvalidInput(f"{image.path}: not a readable image: {e}") from e

    # -- matching -------------------------------------------------------------
    def rank(self, image: ImageInput, k: int = 5) -> list[tuple[str, float]]:
        """The ``k`` best-matching entities as (entity_id, score), best first."""
        return [(ref.entity_id, score) for ref, score in self._rank(image, k)]

    def _rank(self, image: ImageInput, k: int) -> list[tuple[Reference, float]]:
        with self.meter.call("vision"):
            refs = self.references
            if not refs:
                raise ModelUnavailable("reference-image grounder: the graph has no entity images "
                                       "((:Image)-[:DEPICTS]->(:Entity))")
            q = self._query_features(image)
            feats = [(ref, self._ref_features(ref)) for ref in refs]
            feats = [(ref, f) for ref, f in feats if f is not None]
            if len(feats) > SHORTLIST:
                feats.sort(key=lambda rf: global_similarity(q, rf[1]), reverse=True)
                feats = feats[:SHORTLIST]
            best: dict[str, tuple[Reference, float, float]] = {}
            for ref, f in feats:
                extra = max(0, inliers(q, f) - CHANCE_INLIERS)
                score = (extra / (extra + INLIER_HALF), global_similarity(q, f))
                if ref.entity_id not in best or score > best[ref.entity_id][1:]:
                    best[ref.entity_id] = (ref, *score)
            ranked = sorted(best.values(), key=lambda r: (-r[1], -r[2], r[0].entity_id))
            return [(r[0], r[1]) for r in ranked[:k]]

    def recognize(self, image: ImageInput, hint: str = "") -> str:
        """The name of the KG entity the image shows (``hint`` is not used by this stand-in).

        Raises ModelUnavailable when no reference image matches (score below
        ``KGQA_GROUNDER_MIN_SCORE``), so that the caller takes its fallback.
        """
        ranked = self._rank(image, 1)
        if not ranked or ranked[0][1] < self.min_score:
            best = f"best {ranked[0][0].entity_id} at {ranked[0][1]:.2f}" if ranked else "no candidates"
            raise ModelUnavailable(f"reference-image grounder: no KG entity image matches {image.path.name} "
                                   f"({best} < {self.min_score})")
        return ranked[0][0].name

    def generate_json(self, image: ImageInput | None, prompt: str, schema: type[T], *,
                      system: str | None = None, max_tokens: int = 256) -> T:
        if self.chat is None:
            raise ModelUnavailable("reference-image grounder: no ChatModel for the textual part")
        note = ""
        if image is not None:
            try:
                note = f"[image: a picture of {self.recognize(image)}]\n"
            except ModelUnavailable:
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
