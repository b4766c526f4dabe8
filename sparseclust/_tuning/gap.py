"""The gap statistic and its choice rules, one home for every method.

Permutation tuning of sparse k-means / hierarchical clustering (Witten & Tibshirani
2010, as sparcl) compares the objective on the data with the objective on
column-permuted data; CRAFT's automatic K compares the negative log-likelihood with
that of reference data (Tibshirani, Walther & Hastie 2001). Both then choose a point
of a gap curve by one of the rules of :func:`choose_by_gap`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["GAP_RULES", "choose_by_gap", "gap_statistics"]

#: Rule names accepted by :func:`choose_by_gap` ("max" and "globalmax", "1se" and
#: "firstSEmax" are the same rules under sparcl's and R ``cluster::maxSE``'s names).
GAP_RULES = ("max", "globalmax", "1se", "firstSEmax", "Tibs2001SEmax")


def gap_statistics(tots: np.ndarray, permtots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(gaps, sd_gaps)`` from ``tots`` (m,) and ``permtots`` (m, nperms), as sparcl:
    ``log(tots) - mean(log(permtots))`` and the sd (ddof 1) of the logs.

    Examples
    --------
    >>> gaps, sds = gap_statistics(np.array([np.e, np.e**2]), np.array([[1.0, 1.0], [np.e, np.e]]))
    >>> gaps.tolist(), sds.tolist()
    ([1.0, 1.0], [0.0, 0.0])
    """
    tots = np.asarray(tots, dtype=np.float64)
    logs = np.log(np.asarray(permtots, dtype=np.float64))
    gaps = np.log(tots) - logs.mean(axis=1)
    sds = logs.std(axis=1, ddof=1) if logs.shape[1] > 1 else np.full(tots.shape, np.nan)
    return gaps, sds


def choose_by_gap(xs: Sequence[float], gap: np.ndarray, sd: np.ndarray, rule: str) -> int:
    """Index of the chosen point of a gap curve ``gap`` (sd ``sd``) over ``xs``.

    Points whose gap is NaN (never reached) are skipped; a NaN sd counts as 0.

    * ``"max"`` / ``"globalmax"``: the first maximum (sparcl's ``bestw``);
    * ``"1se"`` / ``"firstSEmax"``: the smallest ``x`` whose gap is at least the
      maximum gap less the sd at the maximum;
    * ``"Tibs2001SEmax"`` (``xs`` increasing): the first ``x`` whose gap is at least
      the next point's gap less that point's sd (Tibshirani, Walther & Hastie 2001).

    Examples
    --------
    >>> w = np.array([1.5, 2.0, 3.0]); g = np.array([0.2, 0.45, 0.5]); sd = np.array([.1, .1, .1])
    >>> choose_by_gap(w, g, sd, "max"), choose_by_gap(w, g, sd, "1se")
    (2, 1)
    >>> ks, sd4 = [1, 2, 3, 4], np.full(4, 0.2)
    >>> choose_by_gap(ks, np.array([0.0, 1.0, 3.0, 2.9]), sd4, "Tibs2001SEmax")
    2
    """
    gap = np.asarray(gap, dtype=np.float64)
    sd = np.asarray(sd, dtype=np.float64)
    ok = np.flatnonzero(~np.isnan(gap))
    if ok.size == 0:
        return 0
    best = int(ok[np.argmax(gap[ok])])
    if rule in ("max", "globalmax"):
        return best
    if rule in ("1se", "firstSEmax"):
        near = ok[gap[ok] >= gap[best] - (sd[best] if np.isfinite(sd[best]) else 0.0)]
        return int(near[np.argmin(np.asarray(xs, dtype=np.float64)[near])])
    if rule == "Tibs2001SEmax":
        for a, b in zip(ok[:-1], ok[1:]):
            if gap[a] >= gap[b] - (sd[b] if np.isfinite(sd[b]) else 0.0):
                return int(a)
        return int(ok[-1])
    raise ValueError(f"rule must be one of {list(GAP_RULES)}; got rule={rule!r}.")
