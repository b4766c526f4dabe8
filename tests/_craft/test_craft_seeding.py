"""The compiled k-means++-style seeding (``_craft/seed_jit.seed_rows``) against the
numpy seeding over row blocks (``core.seed_clusters``).

On one in-memory block the seeding of a fit at a fixed number of clusters runs
compiled; on several row blocks (or with ``core.COMPILED_CELLS`` set to 0) it runs the
numpy/block code. The two must open the same singletons bit for bit (rows, centres,
sds, level shares and counts, features) and leave the generator in the same state:
mixed, numeric and categorical data with missing cells, shared distinct rows, several
K, every feature kept, a fixed sigma, ties of the draw's scores, and more clusters
asked for than there are distinct rows (the seeding stops early).
"""

from __future__ import annotations

import numpy as np
import pytest

import sparseclust._craft.core as core


def _data(seed: int, n: int, P: int, levels: tuple[int, ...], missing: float, pool: int = 0):
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, P)) + 3.0 * (np.arange(n) % 3)[:, None]
    codes = np.zeros((n, len(levels)), dtype=np.int64)
    for q, L in enumerate(levels):
        codes[:, q] = g.integers(0, L, size=n)
    if pool:  # rows drawn from a few distinct rows
        pick = g.integers(pool, size=n)
        X, codes = X[pick], codes[pick]
    X[g.random(X.shape) < missing] = np.nan
    codes[g.random(codes.shape) < missing] = -1
    return core.prepare(X, codes, list(levels), alpha=0.01)


DATA = {
    "mixed": lambda: _data(0, 300, 4, (3, 5, 2), 0.0),
    "mixed_missing": lambda: _data(1, 250, 3, (4, 2, 6), 0.1),
    "numeric_missing": lambda: _data(2, 200, 6, (), 0.05),
    "categorical_missing": lambda: _data(3, 220, 0, (3, 3, 4, 2, 5), 0.05),
    "distinct_rows": lambda: _data(4, 2000, 2, (3, 5, 2), 0.0, pool=40),
}
SETTINGS = {
    "drawn": dict(m=0.5, F_delta=0.3, select_all=False, sigma_override=None),
    "all_fixed_sigma": dict(m=0.5, F_delta=0.0, select_all=True, sigma_override=0.7),
}


def _seeds(data, K, seed, *, compiled, block_rows=core.BLOCK_ROWS, **kw):
    """(state, first row, three draws of the generator after) of one seeding."""
    B = core.as_blocked(data, block_rows)
    old = core.COMPILED_CELLS
    core.COMPILED_CELLS = old if compiled else 0
    try:
        assert core._block_compiles(B) == (compiled and block_rows >= data.n)
        rng = np.random.default_rng(seed)
        st, first = core.seed_clusters(B, K, rng=rng, **kw)
    finally:
        core.COMPILED_CELLS = old
    return st, first, rng.random(3)


def _assert_same(a, b):
    assert a[1] == b[1]
    for f in ("zeta", "sigma", "log_eta", "counts", "v"):
        x, y = getattr(a[0], f), getattr(b[0], f)
        assert x.dtype == y.dtype, f
        np.testing.assert_array_equal(x, y, err_msg=f)
    np.testing.assert_array_equal(a[2], b[2])  # the generator left where the draws leave it


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("how", sorted(SETTINGS))
def test_compiled_seeding_equals_the_row_block_seeding(name, how):
    data = DATA[name]()
    for K in (1, 2, 3, 6, 25):
        for seed in range(3):
            c = _seeds(data, K, seed, compiled=True, **SETTINGS[how])
            assert 1 <= c[0].K <= K  # fewer when no row is left with weight
            _assert_same(c, _seeds(data, K, seed, compiled=False, **SETTINGS[how]))
            _assert_same(c, _seeds(data, K, seed, compiled=False, block_rows=37, **SETTINGS[how]))


def test_more_clusters_than_distinct_rows():
    """Five distinct rows of small integers, every feature kept, no feature terms: a
    row's cost to its own singleton is exactly 0, so once the five are taken no row has
    weight and the seeding stops at five of the eight clusters asked for."""
    g = np.random.default_rng(5)
    X = g.integers(-3, 4, size=(5, 3)).astype(float)[g.permutation(np.arange(60) % 5)]
    data = core.prepare(X, np.zeros((60, 0), dtype=np.int64), [], alpha=0.01)
    kw = dict(m=1.0, F_delta=0.0, select_all=True, sigma_override=None)
    for seed in range(4):
        c = _seeds(data, 8, seed, compiled=True, **kw)
        assert c[0].K == 5
        _assert_same(c, _seeds(data, 8, seed, compiled=False, **kw))
        _assert_same(c, _seeds(data, 8, seed, compiled=False, block_rows=7, **kw))
    data = _data(5, 60, 2, (3, 2), 0.1, pool=5)  # may take a row twice (cost terms differ)
    for seed in range(4):
        c = _seeds(data, 8, seed, compiled=True, **SETTINGS["drawn"])
        _assert_same(c, _seeds(data, 8, seed, compiled=False, block_rows=7, **SETTINGS["drawn"]))


def test_ties_go_to_the_earliest_row():
    """Rows whose cost to the first singleton is infinite (a cell of 1e200: its square
    overflows) have infinite weight, so ``log(u) / w = -0.0`` for all of them: a tie
    of the largest score, won by the earliest such row."""
    X = np.random.default_rng(6).normal(size=(50, 2))
    huge = [11, 23, 37]
    X[huge, 0] = 1e200
    kw = dict(m=1.0, F_delta=0.0, select_all=True, sigma_override=None)
    with np.errstate(over="ignore", invalid="ignore"):  # the squares overflow on purpose
        data = core.prepare(X, np.zeros((50, 0), dtype=np.int64), [], alpha=0.01)
        seen = 0
        for seed in range(6):
            c = _seeds(data, 2, seed, compiled=True, **kw)
            _assert_same(c, _seeds(data, 2, seed, compiled=False, **kw))
            _assert_same(c, _seeds(data, 2, seed, compiled=False, block_rows=9, **kw))
            if c[1] not in huge:  # the second seed: the first huge row
                seen += 1
                np.testing.assert_array_equal(c[0].zeta[1], X[huge[0]])
    assert seen


def test_seeded_fits_equal_on_both_paths():
    """Whole fits at a fixed K (compiled seeding and passes against the numpy code)."""
    data = DATA["mixed_missing"]()
    fits = []
    for cells in (core.COMPILED_CELLS, 0):
        old, core.COMPILED_CELLS = core.COMPILED_CELLS, cells
        try:
            rng = np.random.default_rng(11)
            fits.append(core.seeded_fit(data, 5, m=0.5, rho=0.24, with_nll=True, rng=rng))
        finally:
            core.COMPILED_CELLS = old
    a, b = fits
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.objective, b.objective)
    assert (a.lam, a.nll, a.start, a.n_iter) == (b.lam, b.nll, b.start, b.n_iter)
