"""The fast paths of the CRAFT kernels against the computations they stand in for.

Each fast path must give the same numbers as the plain computation, bit for bit (the
fits, the restart chosen and the labels must not change): categorical cost terms
computed once per distinct row of codes; level counts updated from the rows whose
label changed; the membership matrix filled one cluster at a time; a calibration
never fitting the same (seed, lambda) twice; the compiled kernels of
``_craft/costs_jit.pyx`` and ``_craft/nll_jit.pyx`` against the numpy code they replace.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

import sparseclust._craft.core as core
from sparseclust import craft

ALPHA = 0.01


def repeated_rows(seed: int, n: int = 3000, P: int = 2, levels=(3, 5, 2), n_distinct=40):
    """Numeric cells (some missing) and codes drawn from ``n_distinct`` distinct rows
    (some cells missing, -1), so a block has few distinct rows of codes."""
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, P))
    X[g.random((n, P)) < 0.1] = np.nan
    pool = np.column_stack([g.integers(-1, L, size=n_distinct) for L in levels])
    codes = pool[g.integers(n_distinct, size=n)]
    return X, codes, list(levels)


def random_state(data: core.CraftData, K: int, g: np.random.Generator) -> core.State:
    labels = g.integers(K, size=data.n)
    labels[:K] = np.arange(K)
    v = g.random((K, data.P + data.Q)) < 0.6
    st, _ = core.update(data, labels, K, v, sigma_floor=0.05)
    return st


@pytest.mark.parametrize("K", [1, 2, 3, 5, 12])
@pytest.mark.parametrize("seed", [0, 1])
def test_costs_on_distinct_rows_equal_costs_row_by_row(seed, K):
    X, codes, L = repeated_rows(seed)
    data = core.prepare(X, codes, L, alpha=ALPHA)
    st = random_state(data, K, np.random.default_rng(seed + 5))
    plain = core.costs(data, st, 0.03)  # nothing cached yet: every row's own terms
    dist = core.distinct_rows(data)
    assert dist is not None and dist[1].size <= 40
    ucodes, first, inv = dist
    np.testing.assert_array_equal(ucodes[inv], codes)  # every row maps to its codes
    np.testing.assert_array_equal(core.costs(data, st, 0.03), plain)  # bit for bit


def test_distinct_rows_only_when_few():
    g = np.random.default_rng(0)
    codes = g.integers(0, 50, size=(2000, 3))  # nearly all rows distinct
    data = core.prepare(np.zeros((2000, 0)), codes, [50, 50, 50], alpha=ALPHA)
    assert core.distinct_rows(data) is None
    X, codes, L = repeated_rows(1, n=500)  # too few rows to be worth it
    assert core.distinct_rows(core.prepare(X, codes, L, alpha=ALPHA)) is None
    X, codes, L = repeated_rows(1, levels=(4,))  # one feature: nothing to save
    assert core.distinct_rows(core.prepare(X, codes, L, alpha=ALPHA)) is None


def test_unique_rows_packed_key_and_byte_rows_agree():
    """Rows keyed by one packed integer (few levels) or by their bytes (too many
    levels to pack) give the same distinct rows."""
    _, codes, L = repeated_rows(2, n=2000, levels=(3, 5, 2, 7))
    codes = codes.astype(np.int8)
    first, inv = core._unique_rows(codes, np.asarray(L))
    huge = np.asarray([2**20] * 4)  # product of (L + 1) beyond 2**62: byte keys
    first2, inv2 = core._unique_rows(codes, huge)
    assert first.size == first2.size
    np.testing.assert_array_equal(codes[first][inv], codes)
    np.testing.assert_array_equal(codes[first2][inv2], codes)
    # the same partition of the rows
    pairs = pd.crosstab(inv, inv2)
    assert ((pairs > 0).sum(axis=1) == 1).all() and ((pairs > 0).sum(axis=0) == 1).all()


def naive_level_counts(data: core.CraftData, labels: np.ndarray, K: int) -> np.ndarray:
    """(K, slots): one loop over rows and features (slot 0 of a feature: missing)."""
    slots = data.level_q.size + data.Q
    out = np.zeros((K, slots), dtype=np.int64)
    for i in range(data.n):
        for q in range(data.Q):
            out[labels[i], data.offsets[q] + q + 1 + data.codes[i, q]] += 1
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_level_counts_updated_from_changed_rows_equal_a_recount(seed):
    X, codes, L = repeated_rows(seed, n=400, n_distinct=300)
    data = core.prepare(X, codes, L, alpha=ALPHA)
    g = np.random.default_rng(seed)
    old = g.integers(3, size=data.n)
    old_counts = core.level_counts(data, old, 3)
    np.testing.assert_array_equal(old_counts, naive_level_counts(data, old, 3))
    for n_changed, K in [(0, 3), (5, 3), (20, 5), (300, 4)]:  # 300: above the share, recount
        new = old.copy()
        rows = g.choice(data.n, n_changed, replace=False)
        new[rows] = g.integers(K, size=n_changed)
        got = core.level_counts(data, new, K, (old, old_counts))
        np.testing.assert_array_equal(got, naive_level_counts(data, new, K))


@pytest.mark.parametrize("K", [1, 2, 6, 7, 40])
def test_block_stats_equal_literal_sums(K):
    """The membership matrix however filled (by cluster, scattered, sparse): counts
    exact, sums as the literal per-cluster sums."""
    X, codes, L = repeated_rows(3, n=600, n_distinct=100)
    data = core.prepare(X, codes, L, alpha=ALPHA)
    g = np.random.default_rng(K)
    labels = g.integers(K, size=data.n)
    got = core.block_stats(data, labels, K)
    given = core.block_stats(data, labels, K, core.level_counts(data, labels, K))
    for key in got:
        np.testing.assert_array_equal(got[key], given[key])
    obs = ~np.isnan(X)
    for k in range(K):
        rows = labels == k
        assert got["nk"][k] == rows.sum()
        np.testing.assert_allclose(got["s1"][k], np.where(obs, X, 0)[rows].sum(axis=0), atol=1e-12)
        np.testing.assert_allclose(got["cnt"][k], obs[rows].sum(axis=0))
    np.testing.assert_array_equal(
        got["counts"],
        naive_level_counts(data, labels, K)[:, np.arange(data.level_q.size) + data.level_q + 1],
    )


def test_membership_by_cluster_equals_scattered(monkeypatch):
    X, codes, L = repeated_rows(4, n=700)
    data = core.prepare(X, codes, L, alpha=ALPHA)
    labels = np.random.default_rng(0).integers(4, size=data.n)
    a = core.block_stats(data, labels, 4)
    monkeypatch.setattr(core, "_MEMBER_BY_CLUSTER", 0)
    b = core.block_stats(data, labels, 4)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("seed", [0, 1])
def test_fit_with_fast_paths_equals_fit_without(monkeypatch, seed):
    """A whole fit (several blocks, clusters opened and dropped, missing cells): the
    same labels, state and objective trace with the fast paths switched off."""
    X, codes, L = repeated_rows(seed, n=5000, n_distinct=60)
    X[:2500, 0] += 4 * (codes[:2500, 0] == 1)

    def run(block_rows):
        data = core.prepare(X, codes, L, alpha=ALPHA)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return core.craft_fit(
                core.as_blocked(data, block_rows),
                10.0,
                m=0.5,
                rho=0.24,
                with_nll=True,
                rng=np.random.default_rng(seed),
            )

    reused: list[bool] = []
    same = core._same_parameters
    monkeypatch.setattr(
        core, "_same_parameters", lambda a, b: reused.append(same(a, b)) or same(a, b)
    )
    fast = run(2048)
    assert fast.converged and reused == [True]  # the last pass's costs were reused
    monkeypatch.setattr(core, "_same_parameters", lambda a, b: False)
    monkeypatch.setattr(core, "DISTINCT_SHARE", 0.0)
    monkeypatch.setattr(core, "_RECOUNT_SHARE", -1.0)
    monkeypatch.setattr(core, "_MEMBER_BY_CLUSTER", 0)
    slow = run(2048)
    assert fast.state.K >= 2 and fast.n_iter >= 3
    np.testing.assert_array_equal(fast.labels, slow.labels)
    np.testing.assert_array_equal(fast.objective, slow.objective)
    assert fast.nll == slow.nll
    for f in ("zeta", "sigma", "log_eta", "counts", "v"):
        np.testing.assert_array_equal(getattr(fast.state, f), getattr(slow.state, f))


def test_calibration_never_fits_the_same_seed_and_lambda_twice(monkeypatch):
    """A restart that misses k at the reference lambda is re-calibrated from 2 lambda,
    whose first halving is that lambda again: the fit made is reused, not repeated."""
    from sparseclust.datasets import load_wine

    seen: list[tuple] = []
    original = core.craft_fit

    def counted(d, lam, *, rng, **kw):
        seen.append((lam, tuple(rng.bit_generator.state["state"].values())))
        return original(d, lam, rng=rng, **kw)

    monkeypatch.setattr(core, "craft_fit", counted)
    wine = load_wine().drop(columns="class")
    fit = craft(wine, m=0.5, k=3, n_init=12, rng=0)
    assert len(seen) == len(set(seen))
    r = fit.restarts
    lam_ref = r["lam"][r["n_clusters"] == 3].iloc[0]
    assert (r["lam"] != lam_ref).any()  # some restart was re-calibrated in this run


def test_row_min_equals_argmin_and_pick():
    g = np.random.default_rng(0)
    for K in (1, 2, 3):
        D = g.integers(0, 4, size=(500, K)).astype(float)  # many exact ties
        D[::5] = -0.0
        idx, dmin = np.empty(500, dtype=np.int64), np.empty(500)
        core._row_min(D, idx, dmin)
        np.testing.assert_array_equal(idx, D.argmin(axis=1))
        np.testing.assert_array_equal(dmin, D[np.arange(500), D.argmin(axis=1)])
        for bad in (np.nan, np.inf, -np.inf):  # not all finite: argmin's own rule
            E = D.copy()
            E[7, K - 1] = bad
            core._row_min(E, idx, dmin)
            np.testing.assert_array_equal(idx, E.argmin(axis=1))


def test_feature_sums_equal_the_sparse_product_bit_for_bit():
    g = np.random.default_rng(1)
    for _ in range(200):
        L = g.integers(1, 45, size=int(g.integers(1, 9)))
        d = core.prepare(np.zeros((2, 0)), np.zeros((2, L.size), dtype=int), list(L), alpha=ALPHA)
        A = g.standard_normal((int(g.integers(1, 6)), int(L.sum()))) * 10.0 ** g.integers(
            -3, 6, size=(1, int(L.sum()))
        )
        A[g.random(A.shape) < 0.3] = -0.0  # 0 * a negative log share
        ref = np.asarray(A @ d.level_sum)
        got = core.feature_sums(d, A)
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))


def test_one_cluster_stats_kept_per_block_equal_block_stats():
    X, codes, L = repeated_rows(5, n=1500)
    data = core.prepare(X, codes, L, alpha=ALPHA)
    counts, stats = core._one_cluster_stats(data)
    assert core._one_cluster_stats(data)[1] is stats  # computed once
    zeros = np.zeros(data.n, dtype=np.int64)
    ref = core.block_stats(data, zeros, 1)
    np.testing.assert_array_equal(counts, core.level_counts(data, zeros, 1))
    for key in ref:
        np.testing.assert_array_equal(stats[key], ref[key])


def test_prepared_data_and_its_block_caches_are_freed_with_the_fit():
    """The row blocks are cached on the data (not in a table whose values would keep
    every data set alive); pickling leaves them out."""
    import gc
    import pickle
    import weakref

    X, codes, L = repeated_rows(6, n=2000)
    df = pd.DataFrame(X, columns=["x0", "x1"]).assign(
        **{f"c{q}": pd.Categorical(codes[:, q]) for q in range(codes.shape[1])}
    )
    fit = craft(df, m=0.5, k=2, n_init=2, rng=0)
    data = fit._prep.data
    assert "_blocked" in data.__dict__
    assert "_blocked" not in pickle.loads(pickle.dumps(data)).__dict__
    blocks = core.as_blocked(data).executor.blocks
    assert all(b in core._DISTINCT for b in blocks)
    ref = weakref.ref(data)
    del fit, data, blocks
    gc.collect()
    assert ref() is None


# ------------------------------------------- compiled kernels against numpy's numbers
def _bits(a: np.ndarray) -> np.ndarray:
    """The bit patterns (signs of zero and NaN payloads included)."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def _numpy_level_sums(codes, offsets, table):
    """The per-feature gathers the compiled level sums replace (take, then add)."""
    out = None
    for q in range(codes.shape[1]):
        rows = np.take(table, codes[:, q].astype(np.intp) + offsets[q] + q + 1, axis=0)
        out = rows.copy() if out is None else out + rows
    return out


@pytest.mark.parametrize("K", [1, 2, 4, 5, 19])
def test_compiled_level_sums_are_numpys_gathers(K):
    from sparseclust._craft.costs_jit import level_sums

    g = np.random.default_rng(K)
    levels = np.array([3, 1, 4, 2, 5])
    offsets = np.concatenate([[0], np.cumsum(levels)[:-1]])
    codes = np.column_stack([g.integers(-1, L, size=300) for L in levels]).astype(np.int8)
    table = g.normal(size=(levels.sum() + levels.size, K)) * 10.0 ** g.integers(-3, 4, K)
    for q, o in enumerate(offsets):  # the zero row a missing code lands on
        table[o + q] = 0.0
    got = level_sums(codes.T, offsets, table, 0, codes.shape[0], np.empty((300, K)))
    assert np.array_equal(_bits(got), _bits(_numpy_level_sums(codes, offsets, table)))
    part = level_sums(codes.T, offsets, table, 100, 130, np.empty((30, K)))
    assert np.array_equal(_bits(part), _bits(got[100:130]))


@pytest.mark.parametrize("K", [1, 2, 3, 5, 12])
@pytest.mark.parametrize("seed", [0, 1])
def test_likelihood_gathers_only_each_rows_own_cluster_same_number(seed, K):
    """neg_loglik's categorical terms: the compiled gather of each row's own cluster is
    the picked column of every cluster's level sums, bit for bit, and so the total."""
    from sparseclust._craft.nll_jit import own_level_sums

    X, codes, L = repeated_rows(seed, n=2000)
    data = core.prepare(X, codes, L, alpha=ALPHA)
    g = np.random.default_rng(seed + 11)
    st = random_state(data, K, g)
    labels = g.integers(K, size=data.n)
    A = (data.log_eta0[None, :] - st.log_eta) * st.v[:, data.P :][:, data.level_q]
    table = core._level_table(data.offsets, A)
    every = _numpy_level_sums(data.codes, data.offsets, table)
    own = own_level_sums(data.codes.T, data.offsets, table, labels, np.empty(data.n))
    assert np.array_equal(_bits(own), _bits(every[np.arange(data.n), labels]))
    numeric = dataclasses.replace(data, codes=data.codes[:, :0], Q=0)
    num = core.neg_loglik(numeric, st, labels) if data.P else 0.0
    want = num + float(every[np.arange(data.n), labels].sum() + data.g0.sum())
    assert core.neg_loglik(data, st, labels) == want


def test_compiled_row_min_is_argmin():
    from sparseclust._craft.costs_jit import row_min

    g = np.random.default_rng(0)
    for K in (1, 2, 3, 7, 19):
        D = g.integers(0, 3, size=(400, K)).astype(float)  # ties
        D[g.random(D.shape) < 0.05] = np.nan
        D[g.random(D.shape) < 0.05] = np.inf
        D[g.random(D.shape) < 0.05] = -np.inf
        idx, dmin = np.empty(400, dtype=np.int64), np.empty(400)
        row_min(D, idx, dmin)
        want = D.argmin(axis=1)
        assert np.array_equal(idx, want)
        assert np.array_equal(dmin, D[np.arange(400), want], equal_nan=True)


def test_compiled_feature_sums_match_the_padded_accumulation():
    data = core.prepare(np.zeros((4, 0)), np.zeros((4, 3), dtype=np.int8), [2, 1, 4], alpha=ALPHA)
    g = np.random.default_rng(1)
    A = g.normal(size=(6, 7))
    A[0] = -0.0  # a -0.0 total must come out 0.0
    A[1, :2] = [1e-300, -1e-300]
    pos = np.arange(7) - data.offsets[data.level_q]
    pad = np.zeros((6, 3, 4))
    pad[:, data.level_q, pos] = A
    want = np.add.accumulate(pad, axis=2)[:, :, -1] + 0.0
    assert np.array_equal(_bits(core.feature_sums(data, A)), _bits(want))


def test_compiled_centres_match_numpys_state_update():
    g = np.random.default_rng(2)
    K, P = 6, 4
    cnt = g.integers(0, 5, size=(K, P)).astype(float)
    s1 = g.normal(size=(K, P)) * cnt
    s2 = s1 * s1 / np.where(cnt > 0, cnt, 1.0) + g.random((K, P)) * cnt
    s2[0, 0] = s1[0, 0] ** 2 / max(cnt[0, 0], 1.0) - 1e-12  # a negative variance
    nk = np.array([3.0, 1.0, 0.0, 4.0, 2.0, 5.0])
    col_mean, col_sd = g.normal(size=P), np.array([1.0, 0.0, 2.0, 0.5])
    stats = {"nk": nk, "s1": s1, "s2": s2, "cnt": cnt, "counts": np.zeros((K, 0))}
    data = core.prepare(g.normal(size=(5, P)), np.zeros((5, 0), dtype=np.int8), [], alpha=ALPHA)
    data = dataclasses.replace(data, col_mean=col_mean, col_sd=col_sd)
    st, _ = core.state_from_stats(data, stats, np.ones((K, P), dtype=bool), 0.05)
    keep = np.flatnonzero(nk)
    has = cnt[keep] > 0
    zeta = np.where(has, s1[keep] / np.where(has, cnt[keep], 1.0), col_mean[None, :])
    var = np.where(has, s2[keep] / np.where(has, cnt[keep], 1.0) - zeta * zeta, 0.0)
    sigma = np.maximum(np.sqrt(np.maximum(var, 0.0)), 0.05 * col_sd[None, :])
    sigma[nk[keep] < 2, :] = 1.0
    sigma[~has] = np.maximum(col_sd[None, :], 1e-12).repeat(keep.size, 0)[~has]
    sigma = np.where(sigma > 0, sigma, 1.0)
    assert np.array_equal(_bits(st.zeta), _bits(zeta))
    assert np.array_equal(_bits(st.sigma), _bits(sigma))


def test_compiled_level_counts_are_bincounts():
    g = np.random.default_rng(3)
    levels = [3, 2, 4]
    codes = np.column_stack([g.integers(-1, L, size=500) for L in levels]).astype(np.int8)
    data = core.prepare(np.zeros((500, 0)), codes, levels, alpha=ALPHA)
    slots = data.level_q.size + data.Q

    def bincounts(labels):
        cells = (codes + data.offsets + np.arange(1, 4)) + (labels * slots)[:, None]
        return np.bincount(cells.ravel(), minlength=5 * slots).reshape(5, slots)

    labels = g.integers(0, 5, size=500)
    assert np.array_equal(core.level_counts(data, labels, 5), bincounts(labels))
    moved = labels.copy()
    moved[:20] = (moved[:20] + 1) % 5  # few rows change: counts moved, not recounted
    prev = (labels, bincounts(labels))
    assert np.array_equal(core.level_counts(data, moved, 5, prev), bincounts(moved))


def plain_numeric_nll(data: core.CraftData, st: core.State, labels: np.ndarray) -> float:
    """The numeric part of core.neg_loglik as numpy computed it before the kernel:
    gathered per row, the selected or global term per cell, masked, summed per 8192 rows."""
    total, P = 0.0, data.P
    sd = np.where(data.col_sd > 0, data.col_sd, 1.0)
    den, log_sig = 2 * st.sigma * st.sigma, np.log(st.sigma)
    for s in range(0, data.n, 8192):
        lab, x = labels[s : s + 8192], data.X0[s : s + 8192]
        sel = (x - st.zeta[lab]) ** 2 / den[lab] + log_sig[lab]
        uns = (x - data.col_mean) ** 2 / (2 * sd * sd) + np.log(sd)
        term = np.where(st.v[lab, :P], sel, uns)
        if data.M is not None:
            term = term * data.M[s : s + 8192]
        total += float(term.sum())
    return total


@pytest.mark.parametrize(("n", "missing"), [(300, 0.0), (300, 0.1), (20000, 0.05)])
@pytest.mark.parametrize("K", [1, 3, 7])
def test_numeric_likelihood_kernel_equals_numpy(n, missing, K):
    """core.neg_loglik's numeric terms (nll_jit.numeric_terms) are numpy's, bit for bit:
    with and without missing cells, over more than one 8192-row piece, int8 labels."""
    g = np.random.default_rng(K)
    X = g.normal(size=(n, 4)) * [1.0, 3.0, 0.1, 50.0]
    X[g.random(X.shape) < missing] = np.nan
    data = core.prepare(X, np.zeros((n, 0), dtype=np.int64), [], alpha=ALPHA)
    st = random_state(data, K, g)
    labels = g.integers(K, size=n)
    for lab in (labels, labels.astype(np.int8)):
        assert core.neg_loglik(data, st, lab) == plain_numeric_nll(data, st, labels)
