"""Setting the new-cluster penalty of DP-style methods (DP-means, CRAFT, ...).

The same three ways for every such method:

* ``lam=<number>``: use it;
* ``k=<int>`` alone: calibrate lambda by bisection so that the converged
  clustering has exactly ``k`` clusters (:func:`calibrate_lambda`);
* ``lam="farthest_first", k=<int>``: the CRAFT paper's heuristic
  (:func:`sparseclust.farthest_first_lambda` for DP-means).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from .._data.params import check_int, check_number, user_stacklevel
from ..exceptions import CalibrationWarning

__all__ = ["Penalty", "calibrate_lambda", "resolve_penalty"]


@dataclass(frozen=True)
class Penalty:
    """How lambda is to be set: ``method`` in {"given", "calibrate", "farthest_first"}."""

    method: str
    lam: float | None
    k: int | None


def resolve_penalty(
    lam: Any, k: Any, *, n_obs: int, func: str, allow_none: bool = False
) -> Penalty:
    """Validate the ``lam=`` / ``k=`` pair of a DP-style method."""
    if k is not None:
        k = check_int("k", k, min=1)
        if k > n_obs:
            raise ValueError(f"k={k} must be <= the number of observations n_obs={n_obs}.")
    if isinstance(lam, str):
        if lam != "farthest_first":
            raise ValueError(
                f"lam must be a positive number, 'farthest_first' or None; got lam={lam!r}."
            )
        if k is None:
            raise ValueError(
                "lam='farthest_first' needs k= (the number of points the heuristic spreads); "
                f"e.g. {func}(df, lam='farthest_first', k=3)."
            )
        if k < 2:
            raise ValueError(f"lam='farthest_first' needs k >= 2; got k={k}.")
        return Penalty("farthest_first", None, k)
    if lam is not None:
        lam = check_number("lam", lam, min=0, min_inclusive=False)
        if k is not None:
            raise ValueError(
                f"give either lam= (a number) or k= (calibrate lambda to k clusters), not both; "
                f"got lam={lam}, k={k}. Use lam='farthest_first', k={k} for the paper's heuristic."
            )
        return Penalty("given", lam, None)
    if k is None:
        if allow_none:
            return Penalty("auto", None, None)
        raise ValueError(
            f"{func} needs the new-cluster penalty: pass lam=<number>, k=<int> (lambda "
            f"calibrated to give k clusters) or lam='farthest_first' with k=<int>."
        )
    return Penalty("calibrate", None, k)


def calibrate_lambda(
    fit: Callable[[float], Any],
    n_clusters: Callable[[Any], int],
    k: int,
    *,
    hi: float | None = None,
    start: float | None = None,
    step: float = 1.25,
    max_fits: int = 60,
    rtol: float = 1e-9,
    warn: bool = True,
) -> tuple[Any, float, pd.DataFrame]:
    """Find lambda whose converged fit has exactly ``k`` clusters.

    ``fit(lam)`` must be deterministic (same seed every call). Give one of:

    * ``hi``: a lambda giving one cluster or at most ``k``; lambda is halved from
      ``hi`` until the fit has at least ``k`` clusters, then bisected on the log scale;
    * ``start``: a hint, e.g. a lambda already calibrated to ``k`` on another run of
      the same data. The first fit is at ``start``; lambda then steps away from it
      towards ``k`` clusters (up when the fit has more, down when it has fewer) by the
      factor ``step``, squared after each step that does not reach the other side
      (``step``, ``step^2``, ``step^4``, ...: a hint far off is still bracketed in a
      few fits), then is bisected on the log scale between the last two lambdas.

    Any lambda giving ``k`` clusters is as valid as another; the first one found is
    returned. Returns ``(fit, lam, trace)`` where ``trace`` lists every
    (lam, n_clusters) tried. When ``k`` is never hit within ``max_fits`` fits, the
    fit with the number of clusters nearest to ``k`` (ties: the larger lambda) is
    returned with a :class:`~sparseclust.exceptions.CalibrationWarning` (none with
    ``warn=False``: the caller reports it).

    Examples
    --------
    >>> res, lam, trace = calibrate_lambda(lambda l: int(10 / l) + 1, lambda r: r, 3, hi=100.0)
    >>> res, 10 / 3 < lam <= 5
    (3, True)
    >>> res, lam, trace = calibrate_lambda(lambda l: int(10 / l) + 1, lambda r: r, 3, start=4.5)
    >>> res, lam, len(trace)  # the hint already gives 3 clusters: one fit
    (3, 4.5, 1)
    """
    if (hi is None) == (start is None):
        raise ValueError(
            f"calibrate_lambda needs exactly one of hi= (a lambda giving at most k clusters) "
            f"and start= (a hint); got hi={hi}, start={start}."
        )
    tried: list[tuple[float, int, Any]] = []

    def run(lam: float) -> int:
        r = fit(lam)
        kk = int(n_clusters(r))
        tried.append((lam, kk, r))
        return kk

    if start is not None:
        step = check_number("step", step, min=1, min_inclusive=False)
        _from_hint(run, k, float(start), step, max_fits, rtol)
        return _result(tried, k, warn)
    hi = float(hi)
    k_hi = run(hi)
    while k_hi > k and len(tried) < max_fits:  # hi too small: more clusters than wanted
        hi *= 4.0
        k_hi = run(hi)
    if k_hi != k:
        lo = hi
        k_lo = k_hi
        while k_lo < k and len(tried) < max_fits and lo > 1e-300:
            hi, k_hi = lo, k_lo
            lo /= 2.0
            k_lo = run(lo)
        if k_lo != k:
            _bisect(run, k, lo, hi, max_fits - len(tried), rtol)
    return _result(tried, k, warn)


def _bisect(
    run: Callable[[float], int], k: int, lo: float, hi: float, budget: int, rtol: float
) -> None:
    """Log-scale bisection between ``lo`` (more than ``k`` clusters) and ``hi`` (fewer)
    until a fit has ``k`` clusters, ``budget`` fits are spent or ``hi / lo <= 1 + rtol``."""
    while budget > 0 and hi / lo > 1 + rtol:
        mid = float(np.sqrt(lo * hi))
        k_mid = run(mid)
        budget -= 1
        if k_mid == k:
            return
        if k_mid > k:
            lo = mid
        else:
            hi = mid


def _from_hint(
    run: Callable[[float], int], k: int, start: float, step: float, max_fits: int, rtol: float
) -> None:
    """:func:`calibrate_lambda` from a hint: a fit at ``start``, steps of ``step``,
    ``step^2``, ... (at most 1e6) towards ``k`` clusters until they are bracketed, then
    bisection."""
    lam, kk = start, run(start)
    fits = 1
    while kk != k and fits < max_fits and 1e-300 < lam < 1e300:
        up = kk > k  # too many clusters: lambda too small
        nxt = lam * step if up else lam / step
        k_nxt = run(nxt)
        fits += 1
        if k_nxt == k or (k_nxt > k) != up:  # hit, or crossed over k: bracketed
            if k_nxt != k:
                lo, hi = (lam, nxt) if up else (nxt, lam)
                _bisect(run, k, lo, hi, max_fits - fits, rtol)
            return
        lam, kk, step = nxt, k_nxt, min(step * step, 1e6)


@lru_cache(maxsize=1)
def _trace_columns() -> pd.Index:
    """The columns of a calibration trace, made once: a frame built on (a copy of) it
    skips the columns' dtype inference, half the cost of a small frame (a calibration
    per restart, dozens per call)."""
    return pd.Index(["lam", "n_clusters"])


def _result(
    tried: list[tuple[float, int, Any]], k: int, warn: bool
) -> tuple[Any, float, pd.DataFrame]:
    """The first fit with ``k`` clusters, else the nearest (ties: the larger lambda),
    warned unless ``warn`` is False; with the trace of every (lam, n_clusters) tried."""
    columns = _trace_columns().copy()  # a frame's own (its name may be set)
    trace = pd.DataFrame([(lam, kk) for lam, kk, _ in tried], columns=columns)
    exact = [t for t in tried if t[1] == k]
    if exact:
        lam, _, r = exact[0]
        return r, lam, trace
    best = min(tried, key=lambda t: (abs(t[1] - k), -t[0]))
    if not warn:
        return best[2], best[0], trace
    warnings.warn(
        f"no lambda gave exactly k={k} clusters after {len(tried)} fits; returning lambda="
        f"{best[0]:.6g} with {best[1]} clusters (the nearest). Try lam= directly or another k.",
        CalibrationWarning,
        stacklevel=user_stacklevel(),
    )
    return best[2], best[0], trace
