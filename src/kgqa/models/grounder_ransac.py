"""The RANSAC inlier count of the reference-image grounder, every trial's estimate at once.

The grounder (``kgqa.models.grounder.inliers``) fits a 2-D similarity transform to ORB matches with
scikit-image's ``ransac`` (Fischler and Bolles, "Random Sample Consensus"; the estimate is Umeyama's,
"Least-squares estimation of transformation parameters between two point patterns"). That loop runs up to
``max_trials`` estimates one at a time, each a dozen small numpy calls: most of an ask's image time.
``inlier_count`` gives the same number: it draws the same samples from the same generator, estimates all
trials together (the same formulas over a stack of 3-point samples), and replays the loop's bookkeeping —
which trial is best so far, how far the dynamic trial budget shrinks — over their inlier counts.

A trial whose batched estimate could disagree with scikit-image's own (a residual within ``GUARD`` pixels of
the threshold, a sample close to degenerate, a non-finite value) is estimated again by scikit-image itself,
so a count never rests on rounding. ``tests/unit/test_grounder_fast.py`` checks equality with ``ransac``.
"""

from __future__ import annotations

import numpy as np

GUARD = 1e-2          # pixels: a residual this close to the threshold is decided by scikit-image's own estimate
NEAR_SINGULAR = 1e6   # a sample whose smallest singular value is within this factor of the rank tolerance
CHUNK = 32            # trials drawn and estimated together


def _umeyama(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Similarity transforms (T, 3, 3) of stacked samples (T, k, 2) with scaling, as scikit-image's ``_umeyama``;
    and per trial whether the estimate is close to a case it treats apart (rank deficient, det(A) ≈ 0)."""
    num = src.shape[1]
    src_mean = src.mean(axis=1, keepdims=True)
    dst_mean = dst.mean(axis=1, keepdims=True)
    src_demean = src - src_mean
    dst_demean = dst - dst_mean
    A = np.swapaxes(dst_demean, 1, 2) @ src_demean / num
    detA = np.linalg.det(A)
    d = np.ones((len(A), 2))
    d[detA < 0, 1] = -1
    U, S, V = np.linalg.svd(A)
    tol = S.max(axis=1) * 2 * np.finfo(float).eps
    shaky = (S.min(axis=1) <= NEAR_SINGULAR * tol) | (np.abs(detA) <= NEAR_SINGULAR * tol * S.max(axis=1))
    R = U @ (d[:, :, None] * V)
    scale = 1.0 / src_demean.var(axis=1).sum(axis=1) * (S * d).sum(axis=1)
    T = np.zeros((len(A), 3, 3))
    T[:, 2, 2] = 1.0
    T[:, :2, 2] = dst_mean[:, 0, :] - scale[:, None] * (R @ np.swapaxes(src_mean, 1, 2))[:, :, 0]
    T[:, :2, :2] = R * scale[:, None, None]
    return T, shaky


def _exact_trial(model_class, src: np.ndarray, dst: np.ndarray, idx: np.ndarray, threshold: float):
    """One trial as scikit-image runs it: (inlier count, residual sum), or None when the estimate fails."""
    model = model_class.from_estimate(src[idx], dst[idx])
    if not model:
        return None
    r = np.abs(model.residuals(src, dst))
    return int(np.count_nonzero(r < threshold)), float(r.dot(r))


def _trials(src: np.ndarray, dst: np.ndarray, idx: np.ndarray, threshold: float):
    """Inlier counts and residual sums of the trials whose samples are ``idx`` (T, k), and which of them
    scikit-image must estimate itself (``redo``)."""
    n = len(src)
    with np.errstate(all="ignore"):         # a degenerate sample's NaN is caught below (redo)
        T, shaky = _umeyama(src[idx].astype(np.float64), dst[idx].astype(np.float64))
        pts = np.concatenate([src, np.ones((n, 1), dtype=src.dtype)], axis=1)       # homogeneous (n, 3)
        moved = pts @ np.swapaxes(T, 1, 2)                                          # (trials, n, 3)
        w = np.where(moved[:, :, 2] == 0, np.finfo(float).eps, moved[:, :, 2])
        resid = np.sqrt((((moved[:, :, :2] / w[:, :, None]) - dst) ** 2).sum(axis=2))
    counts = np.count_nonzero(resid < threshold, axis=1)
    sums = np.einsum("ij,ij->i", resid, resid)
    redo = shaky | ~np.isfinite(resid).all(axis=1) | (np.abs(resid - threshold) < GUARD).any(axis=1) | (sums <= 0)
    return counts, sums, redo


def inlier_count(src: np.ndarray, dst: np.ndarray, *, min_samples: int = 3, residual_threshold: float = 4.0,
                 max_trials: int = 300, stop_probability: float = 0.999, seed: int = 0) -> int:
    """``np.count_nonzero(mask)`` of ``ransac((src, dst), SimilarityTransform, min_samples, residual_threshold,
    max_trials=max_trials, stop_probability=stop_probability, rng=seed)``; 0 where that finds no inliers.
    Samples are drawn as that draws them (one before its loop, then one per trial), CHUNK trials at a time, as
    far as the trial budget goes."""
    from skimage.measure.fit import _dynamic_max_trials
    from skimage.transform import SimilarityTransform

    n = len(src)
    rng = np.random.default_rng(seed)
    idx = np.zeros((0, min_samples), dtype=np.int64)
    counts, sums, redo = [np.zeros(0)] * 3
    best, best_sum, budget, t = 0, np.inf, max_trials, 0
    while t < budget:
        if t == len(idx):
            more = np.stack([rng.choice(n, min_samples, replace=False) for _ in range(min(CHUNK, max_trials - t))])
            c, s, r = _trials(src, dst, more, residual_threshold)
            idx, counts, sums, redo = (np.concatenate([a, b]) for a, b in ((idx, more), (counts, c), (sums, s),
                                                                            (redo, r)))
        trial = (_exact_trial(SimilarityTransform, src, dst, idx[t], residual_threshold) if redo[t]
                 else (int(counts[t]), float(sums[t])))
        t += 1
        if trial is None:
            continue
        c, s = trial
        if c > best or (c == best and s < best_sum):
            best, best_sum = c, s
            budget = min(budget, _dynamic_max_trials(best, n, min_samples, stop_probability))
            if best_sum <= 0:
                break
    return best
