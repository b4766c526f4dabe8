"""The compiled pass loop (``_craft/loop_jit.run_passes``) against the numpy pass.

A fit on one in-memory block runs its passes compiled; with ``core.COMPILED_CELLS``
set to 0 the same fit runs the numpy/block path. The two must give the same fit bit
for bit (labels, objective trace, lambda, state, passes, flags) and leave the fit's
random generator in the same state: numeric, categorical and mixed data, missing
cells, distinct-row sharing, many clusters (past the dense membership products and
the first buffers), every feature kept, a fixed sigma, fixed-k seeding, and fits
stopped by the calibration's cluster cap.
"""

from __future__ import annotations

import numpy as np
import pytest

import sparseclust._craft.core as core


def _data(seed: int, n: int, P: int, levels: tuple[int, ...], missing: float, pool: int = 0):
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, P)) + 3.0 * (np.arange(n) % 3)[:, None]
    X[g.random((n, P)) < missing] = np.nan
    codes = np.zeros((n, len(levels)), dtype=np.int64)
    for q, L in enumerate(levels):
        codes[:, q] = (g.integers(0, 2, size=n) + np.arange(n)) % L
    if pool:  # rows drawn from a few distinct rows of codes
        codes = codes[g.integers(pool, size=n)]
    codes[g.random(codes.shape) < missing] = -1
    return core.prepare(X, codes, list(levels), alpha=0.01)


DATA = {
    "mixed": lambda: _data(0, 300, 4, (3, 5, 2), 0.0),
    "mixed_missing": lambda: _data(1, 250, 3, (4, 2), 0.1),
    "numeric": lambda: _data(2, 200, 6, (), 0.0),
    "categorical": lambda: _data(3, 220, 0, (3, 3, 4, 2, 5), 0.05),
    "distinct_rows": lambda: _data(4, 2000, 2, (3, 5, 2), 0.05, pool=40),
}


def _both(data, lam, **kw):
    """(compiled fit, numpy fit, the generators after each) of one ``craft_fit`` call."""
    out = []
    for cells in (core.COMPILED_CELLS, 0):
        old, core.COMPILED_CELLS = core.COMPILED_CELLS, cells
        try:
            rng = np.random.default_rng(7)
            fit = core.craft_fit(data, lam, rng=rng, **{"m": 0.5, "rho": 0.24, **kw})
        finally:
            core.COMPILED_CELLS = old
        out.append((fit, rng.random(3)))
    return out


def _assert_same(a, b):
    (fa, ra), (fb, rb) = a, b
    np.testing.assert_array_equal(fa.labels, fb.labels)
    np.testing.assert_array_equal(fa.objective, fb.objective)
    np.testing.assert_array_equal(fa.sizes, fb.sizes)
    assert (fa.lam, fa.n_iter, fa.converged, fa.aborted) == (
        fb.lam,
        fb.n_iter,
        fb.converged,
        fb.aborted,
    )
    for f in ("zeta", "sigma", "log_eta", "counts", "v"):
        np.testing.assert_array_equal(getattr(fa.state, f), getattr(fb.state, f), err_msg=f)
    np.testing.assert_array_equal(ra, rb)  # the generator left where the draws leave it


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0])
def test_compiled_passes_equal_the_numpy_passes(name, scale):
    data = DATA[name]()
    lam = scale * (data.P + data.Q)
    _assert_same(*_both(data, lam, with_nll=True))


@pytest.mark.parametrize("name", ["mixed", "categorical", "numeric"])
def test_many_clusters_and_the_cluster_cap(name):
    """A small lambda opens dozens of clusters (beyond 32: the rows summed one by one;
    beyond the first buffers); the calibration's stop rules end such fits early."""
    data = DATA[name]()
    _assert_same(*_both(data, 0.02))
    _assert_same(*_both(data, 0.05, max_clusters=6, stop_above=(3, 6)))


@pytest.mark.parametrize("name", ["mixed_missing", "categorical"])
def test_every_feature_kept_and_fixed_sigma(name):
    data = DATA[name]()
    _assert_same(*_both(data, 2.0, select_all=True, feature_terms=False))
    _assert_same(*_both(data, 2.0, select_all=True, sigma_override=1 / np.sqrt(2)))


def test_seeded_fit_at_fixed_k():
    data = DATA["mixed_missing"]()
    _assert_same(*_both(data, None, fixed_k=4, with_nll=True))
