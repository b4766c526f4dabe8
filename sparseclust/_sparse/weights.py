"""Feature weights of the Witten & Tibshirani (2010) framework: one home for both modes.

The weight step of sparse k-means and sparse hierarchical clustering solves

    maximise  w'a   subject to  ||w||_2 <= 1,  ||w||_1 <= s,  w >= 0,

for a per-feature score ``a`` (between-cluster sums of squares, or u'D). Its solution
is a soft-threshold ``w = S(a+, delta) / ||S(a+, delta)||_2`` with ``delta = 0`` when
that already satisfies the L1 bound, otherwise the ``delta > 0`` that makes
``||w||_1 = s`` (Witten & Tibshirani 2010, Prop. 1).

Two modes:

``"exact"`` (default)
    ``a`` is clipped at 0 and ``delta`` is found in closed form: on the interval
    between two consecutive sorted scores the active set is fixed, and the L1/L2
    ratio condition is a quadratic in ``delta`` (:func:`exact_threshold`). O(p log p),
    no tolerance, scale-invariant, and the L1 bound always holds. When the top scores
    are tied and more than ``s**2`` of them share the maximum, no soft-threshold can
    meet the bound; the optimum is then ``w = s / t`` on the ``t`` tied features
    (``||w||_1 = s``, ``||w||_2 = s / sqrt(t) < 1``).
``"sparcl"``
    R's sparcl 1.0.4 ``BinarySearch`` replica (:func:`binary_search_sparcl`):
    absolute tolerances 1e-5 / 1e-4, at most 15 halvings, midpoint returned, no
    clipping. Reproduces sparcl's published numbers (its L1 bound can be exceeded and
    its threshold depends on the data's scale; see ``docs/decisions.md``).
"""

from __future__ import annotations

import numpy as np

from .lloyd import between_ss_blocks, column_totals_blocks, one_block

__all__ = [
    "between_ss",
    "column_totals",
    "binary_search_sparcl",
    "exact_threshold",
    "project_weights",
    "soft",
]

WEIGHT_MODES = ("exact", "sparcl")


def soft(a: np.ndarray, lam: float) -> np.ndarray:
    """Soft-threshold ``sign(a) * max(|a| - lam, 0)``."""
    a = np.asarray(a, dtype=np.float64)
    return np.sign(a) * np.maximum(np.abs(a) - lam, 0.0)


def binary_search_sparcl(a: np.ndarray, sumabs: float) -> float:
    """sparcl's ``BinarySearch(argu, sumabs)``: the threshold, bisected with absolute tolerances.

    Returns 0 when ``a`` is all zero or ``||a||_1 / ||a||_2 <= sumabs``. Otherwise
    bisects on ``[0, max|a| - 1e-5]`` while the bracket is wider than ``1e-4`` and at
    most 15 times, moving the upper end when the normalised soft-threshold's L1 norm
    is strictly below ``sumabs``, and returns the bracket's midpoint (which can be
    negative when ``max|a| < 1e-5``: sparcl's scale quirk, reproduced on purpose).

    Examples
    --------
    >>> binary_search_sparcl(np.array([3.0, 2.0, 1.0, 0.5, 0.0]), 1.2)  # R: 1.6982517854309083
    1.6982517854309083
    >>> binary_search_sparcl(np.array([3.0, 2.0, 1.0, 0.5, 0.0]), 5.0)
    0.0
    """
    a = np.asarray(a, dtype=np.float64)
    l2 = np.sqrt(np.sum(a * a))
    if l2 == 0 or np.sum(np.abs(a / l2)) <= sumabs:
        return 0.0
    lam1 = 0.0
    lam2 = float(np.max(np.abs(a))) - 1e-5
    it = 1
    while it <= 15 and (lam2 - lam1) > 1e-4:
        mid = (lam1 + lam2) / 2
        su = soft(a, mid)
        if np.sum(np.abs(su / np.sqrt(np.sum(su * su)))) < sumabs:
            lam2 = mid
        else:
            lam1 = mid
        it += 1
    return (lam1 + lam2) / 2


def exact_threshold(a: np.ndarray, s: float) -> float:
    """The exact soft-threshold ``delta >= 0`` with ``||S(a+, delta)||_1 = s ||S(a+, delta)||_2``.

    ``a`` is clipped at 0. Returns 0 when the bound is inactive. On the interval
    ``[a_(k+1), a_(k))`` of the scores sorted in decreasing order the top ``k`` are
    active; with ``A1``, ``A2`` their sum and sum of squares the condition
    ``(A1 - k d)^2 = s^2 (A2 - 2 d A1 + k d^2)`` has the root
    ``d = (A1 - s sqrt((k A2 - A1^2) / (k - s^2))) / k`` for ``k > s^2``. When more
    than ``s**2`` features tie at the maximum there is no root; the maximum score is
    returned (see :func:`project_weights` for the weights then).

    Examples
    --------
    >>> a = np.array([3.0, 2.0, 1.0, 0.5, 0.0])
    >>> d = exact_threshold(a, 1.2)
    >>> w = np.maximum(a - d, 0) / np.linalg.norm(np.maximum(a - d, 0))
    >>> round(float(w.sum()), 12)
    1.2
    """
    a = np.maximum(np.asarray(a, dtype=np.float64), 0.0)
    l2 = np.sqrt(np.sum(a * a))
    if l2 == 0 or np.sum(a) / l2 <= s:
        return 0.0
    # The ratio is scale-free: work on a / max(a) so that sums of squares stay O(p).
    top = float(a.max())
    b = np.sort(a[a > 0])[::-1] / top
    k = np.arange(1, b.size + 1, dtype=np.float64)
    A1 = np.cumsum(b)
    A2 = np.cumsum(b * b)
    nxt = np.append(b[1:], 0.0)
    s2 = s * s
    with np.errstate(invalid="ignore", divide="ignore"):
        spread = np.maximum(k * A2 - A1 * A1, 0.0)
        d = (A1 - s * np.sqrt(spread / (k - s2))) / k
    ok = (k > s2) & (d >= nxt) & (d < b)
    if not ok.any():
        # More than s^2 features tie at the top: no soft-threshold meets the bound.
        return top
    i = int(np.flatnonzero(ok)[0])
    return float(d[i]) * top


def project_weights(a: np.ndarray, s: float, mode: str = "exact") -> tuple[np.ndarray, float]:
    """Weights ``w`` maximising ``w'a`` under ``||w||_2 <= 1``, ``||w||_1 <= s`` (and the threshold).

    ``mode="exact"``: ``a`` clipped at 0, exact threshold; ``||w||_1 <= s`` always
    (up to rounding), ``w >= 0``. ``mode="sparcl"``: sparcl's ``soft(a, lam) /
    ||soft(a, lam)||_2`` with ``lam`` from :func:`binary_search_sparcl` (no
    clipping: negative scores keep their sign, as in sparcl). All-zero ``a`` gives
    all-zero weights in exact mode and NaN weights in sparcl mode (as sparcl).

    Examples
    --------
    >>> w, lam = project_weights(np.array([4.0, 3.0, 0.1]), 1.2)
    >>> np.round(w, 4).tolist(), round(float(w.sum()), 10)
    ([0.9742, 0.2258, 0.0], 1.2)
    """
    a = np.asarray(a, dtype=np.float64)
    if mode == "sparcl":
        lam = binary_search_sparcl(a, s)
        su = soft(a, lam)
        with np.errstate(invalid="ignore", divide="ignore"):
            return su / np.sqrt(np.sum(su * su)), lam
    pos = np.maximum(a, 0.0)
    lam = exact_threshold(pos, s)
    w = np.maximum(pos - lam, 0.0)
    norm = np.sqrt(np.sum(w * w))
    if norm > 0:
        return w / norm, lam
    if pos.max(initial=0.0) <= 0:
        return np.zeros_like(pos), lam
    tied = pos == pos.max()
    return np.where(tied, s / tied.sum(), 0.0), lam


def column_totals(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and total sums of squares (two-pass) of a complete matrix."""
    return column_totals_blocks(one_block(np.asarray(x, dtype=np.float64)))


def between_ss(
    x: np.ndarray,
    labels: np.ndarray,
    k: int | None = None,
    *,
    totals: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-feature between-, within- and total sums of squares ``(bcss, wcss, tss)``.

    Without missing values ``BCSS_j = sum_k n_k (mean_kj - mean_j)^2`` (no
    cancellation; a singleton cluster has within sum 0, as in sparcl's ``GetWCSS``),
    ``TSS_j`` two-pass, ``WCSS_j = TSS_j - BCSS_j``; ``totals`` (from
    :func:`column_totals`) saves recomputing the column totals in a loop. Missing
    values (NaN) are handled available-case: each feature's cluster means and sums
    use its observed cells only (``BCSS_j = sum_k n_kj (mean_kj - mean_j)^2`` with the
    observed counts ``n_kj``, again without cancellation), and the three sums are
    rescaled by ``n / n_observed`` of that feature so that features with missing
    cells stay comparable (without missing values nothing is rescaled). The block form is
    :func:`~._lloyd.between_ss_blocks`.
    """
    x = np.asarray(x, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if k is None:
        k = int(labels.max()) + 1 if labels.size else 0
    nan = totals is None and bool(np.isnan(x).any())  # totals are only given for complete x
    _, bcss, wcss, tss = between_ss_blocks(one_block(x), [labels], k, nan=nan, totals=totals)
    return bcss, wcss, tss
