"""CRAFT's k-means++-style seeding (``core.seed_clusters``) on data held in one block of
rows, compiled: one call opens the ``K`` singletons of a fit at a fixed number of
clusters.

Imported only inside :mod:`.core` (``import sparseclust`` loads no numba). The seeding
does what the numpy/block code does (``core._k_seed_costs``, ``core._k_seed_draw``),
with the same numbers bit for bit:

* a row's cost to a singleton is the compiled pass loop's cost
  (:func:`~sparseclust._craft.loop_jit._all_costs`, checked bit for bit against the
  numpy costs), its singleton the loop's (:func:`~sparseclust._craft.loop_jit._singleton`);
* the random draws (the first row, each singleton's ``Bernoulli(m)`` features, each
  round's key) are the caller's, taken from its ``Generator`` in the numpy code's order,
  and the logs of the rows' uniforms are numpy's, computed by the caller
  (``log(u) / w`` is a division of numpy's log, the same in any program);
* the next seed is the first row of largest ``log(u) / w`` among the rows of positive
  weight not taken yet (numpy's ``argmax``: the earliest of ties); the seeding stops
  early when no row has weight, or when the largest score is ``-inf``.
"""

from __future__ import annotations

import numpy as np

from .._engine.jit import kernel
from .loop_jit import _all_costs, _singleton

__all__ = ["seed_rows"]


@kernel
def seed_rows(dat, cur, V, logu, first, fp, masked, taken):  # pragma: no cover - compiled
    """Open singletons in ``cur`` (zeta, sigma, log_eta, counts, v; ``K = V.shape[0]``
    rows) at ``first``, then at rows drawn k-means++-style under the CRAFT cost: each
    next row the one of largest ``logu[j, r] / w_r`` (``j`` the round), ``w_r`` a row's
    smallest cost to the singletons so far minus the smallest such cost over all rows
    (``np.minimum`` and ``min`` with numpy's NaN rule), rows taken excluded. ``dat``:
    the block's inputs (``core._loop_inputs``); ``V[k]`` singleton ``k``'s features;
    ``fp``: the pass loop's floats (``F_delta`` at 1, ``sigma_override`` or -1 at 5).
    Fills ``taken`` with the rows opened and returns how many."""
    n, K = dat[3].size, V.shape[0]
    excluded = np.zeros(n, np.bool_)
    dmin = np.empty(n)
    taken[0] = first
    excluded[first] = True
    k = np.int64(0)
    while True:
        _singleton(cur, k, taken[k], V[k], dat)
        k += 1
        if k == K:
            break
        c = _all_costs(cur, k - 1, k, dat, fp, masked)
        for r in range(n):
            x = c[r, 0]
            if k > 1:
                y = dmin[r]  # np.minimum: NaN if either is NaN
                x = y if (y != y or (x == x and y < x)) else x
            dmin[r] = x
        floor = dmin[0]  # min(): NaN if any is NaN
        for r in range(n):
            if dmin[r] != dmin[r]:
                floor = dmin[r]
                break
            if dmin[r] < floor:
                floor = dmin[r]
        best, j = -np.inf, -1
        for r in range(n):
            w = dmin[r] - floor
            if excluded[r] or not w > 0.0:
                continue
            s = logu[k - 1, r] / w
            if j < 0 or s > best:
                best, j = s, r
        if j < 0 or best == -np.inf:
            break
        taken[k] = j
        excluded[j] = True
    return k
