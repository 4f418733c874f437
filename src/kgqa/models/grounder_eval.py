"""Perturbed copies of reference images, for the grounder's test and benchmark.

Reference images are scikit-image's bundled sample photos (no download). Each
perturbation is one a user's photo of a known entity plausibly has: a crop, a
rotation, a different scale, a colour change, heavy JPEG compression, or all of
them at once. Deterministic for a given seed.
"""

from __future__ import annotations

import io
from typing import Callable

import numpy as np

#: skimage.data photos used as "entity images" (distinct pictures; cat() is chelsea()).
SAMPLES = ("astronaut", "coffee", "chelsea", "rocket", "hubble_deep_field", "immunohistochemistry",
           "retina", "camera", "moon", "brick", "grass", "gravel", "coins", "clock", "text", "page",
           "stereo_motorcycle", "cell", "logo")


def sample_images(names=SAMPLES) -> dict[str, "object"]:
    """name → RGB Pillow image of each skimage sample photo."""
    import skimage.data
    from PIL import Image

    out = {}
    for n in names:
        arr = getattr(skimage.data, n)()
        if isinstance(arr, tuple):  # stereo_motorcycle: (left, right, disparity)
            arr = arr[0]
        if arr.dtype == bool:
            arr = (arr * 255).astype(np.uint8)
        out[n] = Image.fromarray(arr).convert("RGB")
    return out


def _crop(im, rng):
    w, h = im.size
    f = rng.uniform(0.65, 0.8)
    cw, ch = int(w * f), int(h * f)
    x, y = rng.integers(0, w - cw + 1), rng.integers(0, h - ch + 1)
    return im.crop((int(x), int(y), int(x) + cw, int(y) + ch))


def _rotate(im, rng):
    angle = float(rng.choice([-1, 1]) * rng.uniform(10, 30))
    return im.rotate(angle, expand=True, fillcolor=(0, 0, 0))


def _rotate90(im, rng):
    return im.rotate(90, expand=True)


def _scale(im, rng):
    from PIL import Image

    f = rng.uniform(0.35, 0.6)
    w, h = im.size
    return im.resize((max(8, int(w * f)), max(8, int(h * f))), Image.BILINEAR)


def _colour(im, rng):
    from PIL import ImageEnhance

    arr = np.asarray(im.convert("HSV")).copy()
    arr[..., 0] = (arr[..., 0].astype(int) + int(rng.integers(40, 100))) % 256   # hue shift
    from PIL import Image

    out = Image.fromarray(arr, mode="HSV").convert("RGB")
    out = ImageEnhance.Brightness(out).enhance(float(rng.uniform(0.7, 1.3)))
    return ImageEnhance.Contrast(out).enhance(float(rng.uniform(0.7, 1.3)))


def _jpeg(im, rng):
    from PIL import Image

    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=int(rng.integers(10, 20)))
    buf.seek(0)
    return Image.open(buf).convert("RGB")


def _all(im, rng):
    for f in (_crop, _rotate, _scale, _colour, _jpeg):
        im = f(im, rng)
    return im


PERTURBATIONS: dict[str, Callable] = {
    "crop": _crop, "rotate": _rotate, "rotate90": _rotate90, "scale": _scale,
    "colour": _colour, "jpeg": _jpeg, "all": _all,
}


def perturbed(im, kind: str, seed: int = 0):
    return PERTURBATIONS[kind](im, np.random.default_rng(seed))


def write_jpeg(im, path, quality: int = 92) -> None:
    im.convert("RGB").save(path, format="JPEG", quality=quality)
