"""The grounder's fast matching and RANSAC count are scikit-image's: a recognised photo scores the same."""

import warnings

import numpy as np
import pytest
from skimage.measure import ransac
from skimage.transform import SimilarityTransform

from kgqa.models.grounder_ransac import inlier_count


def skimage_count(src, dst, seed=0) -> int:
    """What the grounder counted before: scikit-image's loop, one trial at a time."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, mask = ransac((src, dst), SimilarityTransform, min_samples=3, residual_threshold=4.0,
                             max_trials=300, stop_probability=0.999, rng=seed)
    return 0 if model is None or mask is None else int(np.count_nonzero(mask))


def matches(rng, n: int, share: float, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """ORB-like matches in a 320-pixel image: ``share`` of them follow one similarity transform (with
    ``noise`` pixels of jitter), the rest are random pairs; float32 keypoints as the grounder stores them."""
    src = rng.uniform(0, 320, (n, 2))
    a = rng.uniform(-np.pi, np.pi)
    s = rng.uniform(0.5, 2.0)
    R = s * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    dst = src @ R.T + rng.uniform(-50, 50, 2) + rng.normal(0, noise, (n, 2))
    bad = rng.random(n) >= share
    dst[bad] = rng.uniform(0, 320, (int(bad.sum()), 2))
    return src.astype(np.float32), dst.astype(np.float32)


@pytest.mark.parametrize("case", range(40))
def test_the_count_is_scikit_images(case):
    rng = np.random.default_rng(case)
    n = int(rng.integers(4, 200))
    share = [0.0, 0.05, 0.2, 0.5, 0.9][case % 5]
    src, dst = matches(rng, n, share, noise=[0.5, 2.0, 3.9][case % 3])
    assert inlier_count(src, dst, seed=case % 3) == skimage_count(src, dst, seed=case % 3)


def test_degenerate_samples_count_as_scikit_images():
    # repeated and collinear points make some 3-point samples fail; those trials are skipped in both
    src = np.array([[10, 10], [10, 10], [10, 10], [20, 20], [30, 30], [40, 40], [55, 12]], dtype=np.float32)
    dst = src * 1.5 + 7
    assert inlier_count(src, dst) == skimage_count(src, dst)
    same = np.zeros((6, 2), dtype=np.float32)
    assert inlier_count(same, same + 3) == skimage_count(same, same + 3)


@pytest.mark.parametrize("case", range(12))
def test_descriptor_matches_are_scikit_images(case):
    from skimage.feature import match_descriptors

    from kgqa.models.grounder import RATIO, hamming_matches

    rng = np.random.default_rng(100 + case)
    n, m = int(rng.integers(1, 400)), int(rng.integers(1, 400))
    d1 = rng.random((n, 256)) < 0.5
    d2 = rng.random((m, 256)) < 0.5
    d2[: min(n, m) // 2] = d1[: min(n, m) // 2] ^ (rng.random((min(n, m) // 2, 256)) < 0.05)   # near copies
    if case % 4 == 0:
        d2[-1] = d2[0]                                                                          # exact ties
    want = match_descriptors(d1, d2, metric="hamming", cross_check=True, max_ratio=RATIO)
    assert np.array_equal(hamming_matches(d1, d2).astype(np.int64), want.astype(np.int64))


def test_a_query_image_gets_its_reference_windows_when_it_becomes_a_reference(tmp_path):
    from PIL import Image

    from kgqa.models.grounder import FeatureCache, extract

    rng = np.random.default_rng(7)
    img = Image.fromarray((rng.random((120, 200, 3)) * 255).astype(np.uint8))
    cache = FeatureCache(tmp_path)
    q = cache.get("ab" * 32, lambda: img, windows=False)
    assert len(q.windows) == 0                                   # a query does without them
    full = extract(img)
    assert np.array_equal(q.probe, full.probe) and np.array_equal(q.descriptors, full.descriptors)
    r = cache.get("ab" * 32, lambda: img)                         # the same picture, now a reference
    assert np.array_equal(r.windows, full.windows)
    again = FeatureCache(tmp_path).get("ab" * 32, lambda: None)   # from disk, windows kept
    assert np.array_equal(again.windows, full.windows)
