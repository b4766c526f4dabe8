"""craft() with K chosen automatically (neither ``k`` nor ``lam``): candidates capped by
the rows, the adjusted Rand index without scikit-learn, and on data over
``k_sample_rows`` the choice on a seeded subsample, then the restarts on all rows
exactly as ``craft(k=K)`` runs them (issue 22, item 8)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

from sparseclust import craft
from sparseclust._craft import core as core
from sparseclust._craft import select_k
from sparseclust._craft.select_k import adjusted_rand, k_cap, k_sample
from sparseclust.exceptions import DataWarning
from sparseclust.metrics import purity
from sparseclust.simulate import craft_fig2c

#: Few fits: these tests are about where K is chosen, not how well.
FAST = dict(k_max=4, n_pairs=2, n_refs=2, n_init=2)


def mixed(n: int, seed: int = 0) -> pd.DataFrame:
    """4 numeric + 2 categorical columns, 3 clusters."""
    rng = np.random.default_rng(seed)
    g = rng.integers(3, size=n)
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) + 3.0 * (g == j % 3) for j in range(4)})
    for j in range(2):
        hit = rng.random(n) < 0.8
        df[f"c{j}"] = pd.Categorical(np.where(hit, g, rng.integers(3, size=n)).astype(str))
    return df


# ------------------------------------------------------------ the adjusted Rand index
def test_adjusted_rand_is_sklearns_bit_for_bit():
    sk = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    pairs = [
        (np.zeros(5, int), np.zeros(5, int)),  # one cluster each: full agreement
        (np.arange(6), np.arange(6)),  # singletons
        (np.array([0]), np.array([0])),
        (np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])),
        (np.array([0, 0, 0, 0]), np.array([0, 1, 2, 3])),
        (np.array([3, 3, 5, 5]), np.array([0, 0, 7, 7])),  # codes with gaps
    ]
    for _ in range(200):
        n = int(rng.integers(2, 400))
        a, b = rng.integers(rng.integers(1, 9), size=n), rng.integers(rng.integers(1, 9), size=n)
        pairs.append((a, np.where(rng.random(n) < 0.5, a, b)))
    for a, b in pairs:
        assert adjusted_rand(a, b) == sk.adjusted_rand_score(a, b)


def test_the_choice_of_k_imports_no_sklearn():
    """scikit-learn's import costs seconds, more than the whole choice on small data."""
    code = (
        "import sys, numpy as np, pandas as pd, sparseclust as sc\n"
        "r = np.random.default_rng(0)\n"
        "X = pd.DataFrame(r.normal(size=(24, 3)), columns=list('abc'))\n"
        "fit = sc.craft(X, k_max=3, n_pairs=1, n_refs=1, n_init=1, rng=0)\n"
        "assert fit.k_selection is not None\n"
        "print('sklearn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------- candidates and rows
def test_k_candidates_stop_at_sqrt_half_the_rows():
    """32 rows: K = 2..4, not 2..8 (K = 8 on a subsample of 26 rows is clusters of 3)."""
    df = mixed(32)
    for method, first in (("stability", 1), ("gap", 1)):
        fit = craft(df, m=0.5, k_method=method, n_pairs=1, n_refs=2, n_init=2, rng=0)
        assert fit.k_selection["k"].tolist() == list(range(first, k_cap(32) + 1))
        assert fit.k <= 4
    assert k_cap(2) == 2 and k_cap(32) == 4 and k_cap(200) == 10


def test_small_data_fits_unchanged(monkeypatch):
    """With PAIR_FITS None, from LIGHT_ROWS (200) to 5,000 rows the subsample fits are
    those of earlier versions: the mean and sd over the disjoint pairs of subsamples
    (0, 1), (2, 3) below were printed by the code before issue 22 on 120 rows (which
    chose K = 2 by them), and the same fits' agreement tensor gives them back. The
    stability now averages all pairs of the 4 subsamples (K = 3, the design's)."""
    monkeypatch.setattr(select_k, "LIGHT_ROWS", 0)
    monkeypatch.setattr(select_k, "PAIR_FITS", None)  # craft(k=)'s fits (issue 17: lighter)
    seen = []
    real = select_k.agreement
    monkeypatch.setattr(
        select_k, "agreement", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1]
    )
    fit = craft(mixed(120), m=0.5, **FAST, rng=0)
    tab = fit.k_selection
    ((A, fitted),) = seen
    assert fitted.tolist() == [4, 4, 4]  # 4 subsamples: nothing left to drop
    disjoint = np.stack([A[:, 0, 1], A[:, 2, 3]])
    np.testing.assert_allclose(
        disjoint.mean(axis=0),
        [0.9007399257486974, 0.7734464290266168, 0.5730812897604668],
        rtol=1e-15,
    )
    np.testing.assert_allclose(
        disjoint.std(axis=0),
        [0.03157029992887511, 0.009525391847118703, 0.14146831448934827],
        rtol=1e-12,
    )
    iu = np.triu_indices(4, 1)
    np.testing.assert_array_equal(tab["stability"][1:], A[:, iu[0], iu[1]].mean(axis=1))
    np.testing.assert_array_equal(tab["gap"], [0.0, 0.8046342892103504, np.nan, np.nan])
    assert fit.k == 3 and tab["stability"].idxmax() == 2
    assert tab.attrs == {
        "gap_test": "K > 1",
        "rows": 120,
        "n_obs": 120,
        "k_method": "stability",
        "flat": False,
        "at_cap": "",
    }
    assert "subsample of" not in repr(fit)


def test_k_sample_rule():
    d = core.prepare(
        np.random.default_rng(0).normal(size=(50, 2)),
        np.zeros((50, 1), dtype=np.int64),
        [2],
        alpha=0.01,
    )
    seed = np.random.SeedSequence(5)
    assert k_sample(d, 50, seed) is d and k_sample(d, None, seed) is d
    sub = k_sample(d, 20, seed)
    rows = np.sort(np.random.default_rng(np.random.SeedSequence(5)).choice(50, 20, replace=False))
    assert sub.n == 20
    np.testing.assert_array_equal(sub.X0, d.X0[rows])
    assert sub.col_mean is d.col_mean and sub.col_sd is d.col_sd  # the data's statistics
    np.testing.assert_array_equal(k_sample(d, 20, np.random.SeedSequence(5)).X0, sub.X0)


# ---------------------------------------------------- a subsample, then all rows
def test_k_chosen_on_a_subsample_then_fitted_on_all_rows():
    sim = craft_fig2c(rng=0)
    before = sim.data.copy()
    fit = craft(sim.data, m=1 / 3, k_sample_rows=100, **FAST, rng=0)
    assert sim.data.equals(before)
    att = fit.k_selection.attrs
    assert (att["rows"], att["n_obs"], att["k_method"]) == (100, 300, "stability")
    assert fit.k == 3 == fit.n_clusters and purity(sim.labels, fit.labels) == 1.0
    line = "K = 3 chosen on a subsample of 100 of 300 rows (stability)"
    assert line in repr(fit)
    assert line in str(fit.summary())
    # the restarts are craft(k=K)'s, bit for bit
    ref = craft(sim.data, m=1 / 3, k=3, n_init=FAST["n_init"], rng=0)
    pd.testing.assert_series_equal(fit.labels, ref.labels)
    assert fit.lam == ref.lam and fit.neg_loglik == ref.neg_loglik
    pd.testing.assert_frame_equal(fit.restarts, ref.restarts)
    # seeded: the same rows again, other rows with another rng
    again = craft(sim.data, m=1 / 3, k_sample_rows=100, **FAST, rng=0)
    pd.testing.assert_frame_equal(again.k_selection, fit.k_selection)
    other = craft(sim.data, m=1 / 3, k_sample_rows=100, **FAST, rng=1)
    assert not other.k_selection["stability"].equals(fit.k_selection["stability"])


def test_gap_method_on_a_subsample():
    sim = craft_fig2c(rng=1)
    fit = craft(sim.data, m=1 / 3, k_method="gap", k_sample_rows=120, **FAST, rng=1)
    assert fit.k_selection.attrs["rows"] == 120 and fit.k_selection["k"].max() == 4
    assert "rows (gap)" in repr(fit)


def test_k_sample_rows_is_checked():
    with pytest.raises(ValueError, match="k_sample_rows"):
        craft(mixed(30), k_sample_rows=1)


# --------------------------------------------------------------------------- Dask
@pytest.mark.filterwarnings("ignore::sparseclust.exceptions.PerformanceWarning")
def test_dask_draws_the_rows_memory_draws():
    """One rule: when the rows fit in the Dask sample (``sample_rows``), the K choice on
    Dask runs on the rows the in-memory choice runs on; the restarts then run as
    ``craft(k=K)`` runs them (with ``calibrate="full"``: the in-memory fit)."""
    dask = pytest.importorskip("dask")
    pytest.importorskip("dask.dataframe")
    sim = craft_fig2c(rng=0)
    ref = craft(sim.data, m=1 / 3, k_sample_rows=100, **FAST, rng=0)
    with dask.config.set(scheduler="synchronous"):
        got = craft(
            sim.data, m=1 / 3, k_sample_rows=100, **FAST, backend="dask", calibrate="full", rng=0
        )
    assert got.k == ref.k and got.k_selection.attrs == ref.k_selection.attrs
    pd.testing.assert_frame_equal(got.k_selection, ref.k_selection, rtol=1e-9)
    assert got.lam_method == "stability" and got.lam == pytest.approx(ref.lam, rel=1e-9)
    np.testing.assert_array_equal(got.labels.compute().to_numpy(), ref.labels.to_numpy())
    # K chosen on a smaller Dask sample; calibrate="full" still calibrates on all rows
    # (it calibrated on the sample before: lambda 26.87 instead of 25.77 here)
    with dask.config.set(scheduler="synchronous"):
        got = craft(
            sim.data, m=1 / 3, **FAST, backend="dask", calibrate="full", sample_rows=150, rng=0
        )
    assert got.k_selection.attrs["rows"] == 150 and got.k == 3
    given = craft(sim.data, m=1 / 3, k=3, n_init=FAST["n_init"], rng=0)
    assert got.lam == pytest.approx(given.lam, rel=1e-9)
    np.testing.assert_array_equal(got.labels.compute().to_numpy(), given.labels.to_numpy())


# --------------------------------------------------------------------------- large
@pytest.mark.slow
def test_default_subsample_on_larger_data():
    """12,000 rows: K chosen on the default 5,000 of them, the fit on all."""
    rng = np.random.default_rng(0)
    sims = [craft_fig2c(rng=s) for s in range(40)]
    df = pd.concat([s.data for s in sims], ignore_index=True)
    truth = np.concatenate([s.labels for s in sims])
    fit = craft(df, m=1 / 3, k_max=4, n_pairs=2, n_refs=2, rng=rng)
    att = fit.k_selection.attrs
    assert (att["rows"], att["n_obs"]) == (5000, 12000)
    assert fit.k == 3 and purity(truth, fit.labels) == 1.0
    assert "K = 3 chosen on a subsample of 5,000 of 12,000 rows (stability)" in repr(fit)


def test_light_fits_on_small_data():
    """Below LIGHT_ROWS the K choice runs lighter fits: 20 rows of two clear clusters
    (the case that took a minute) find K = 2, one Gaussian cloud K = 1."""
    rng = np.random.default_rng(0)
    two = rng.standard_normal((20, 3))
    two[:10] += 3.0
    fit = craft(two, rng=0)
    assert fit.k == 2
    assert fit.k_selection["k"].tolist() == [1, 2, 3]  # k_cap(20) = 3
    assert craft(rng.standard_normal((30, 3)), rng=0).k == 1


# ------------------------------------------------- the stability test's shared work
def _pieces(n: int = 90):
    from sparseclust._craft.front import default_rho
    from sparseclust._craft.prepared import prepare_table
    from sparseclust._data.table import build_table

    d = prepare_table(build_table(mixed(n), min_rows=2), True, 0.01).data
    settings = core.Settings(m=0.5, rho=default_rho(0.5), budget="fixed", eps_c=None, eps_v=None)
    return d, settings, core.craft_constants(0.5, default_rho(0.5))


def test_shared_subsamples_give_the_unshared_agreement():
    """Each subsample taken once and fitted at every K (shared blocking and caches)
    gives the agreement tensor of fits on fresh copies (subsample_labels, the rows and
    seeds of _draw_subsamples), bit for bit; with the sequential drop, the K left
    early keep the complete tensor's values on the subsamples they were fitted on."""
    d, settings, consts = _pieces()
    ks, n_pairs, size, fits = [2, 3, 4, 5], 3, 72, (0, 2)
    root = np.random.SeedSequence  # a fresh one per call (spawning advances it)
    A, fitted = select_k.agreement(d, settings, consts, ks, root(7), n_pairs, size, fits, None)
    assert fitted.tolist() == [6, 6, 6, 6]
    rows, seeds = select_k._draw_subsamples(d, root(7), n_pairs, size, len(ks))
    assert all(r.size == size and np.all(np.diff(r) > 0) for r in rows)
    for j, kk in enumerate(ks):
        lab = [
            select_k.subsample_labels(d, settings, consts, kk, rows[s], seeds[s][j], *fits)
            for s in range(6)
        ]
        for s in range(6):
            for t in range(s):
                want = (
                    adjusted_rand(lab[s], lab[t])
                    if lab[s] is not None and lab[t] is not None
                    else np.nan
                )
                np.testing.assert_equal(A[j, s, t], want)
                np.testing.assert_equal(A[j, t, s], want)
    assert np.isnan(A[:, range(6), range(6)]).all()
    # the sequential test: a strict z drops every K but the leader after 4 subsamples,
    # and with one K left the winner is decided: no fit on the last two
    B, left = select_k.agreement(
        d, settings, consts, ks, root(7), n_pairs, size, fits, None, (4, -9.0)
    )
    assert left.tolist() == [4, 4, 4, 4]
    np.testing.assert_array_equal(B[:, :4, :4], A[:, :4, :4])
    assert np.isnan(B[:, 4:]).all() and np.isnan(B[:, :, 4:]).all()
    # a lax z keeps every K in: all fitted on every subsample, the complete tensor
    C, left = select_k.agreement(
        d, settings, consts, ks, root(7), n_pairs, size, fits, None, (4, 1e9)
    )
    assert left.tolist() == [6, 6, 6, 6]
    np.testing.assert_array_equal(C, A)


def test_jackknife_se_is_the_leave_one_subsample_out_formula():
    rng = np.random.default_rng(3)
    r = 6
    A, B = (np.triu(rng.random((r, r)), 1) for _ in range(2))
    A, B = A + A.T, B + B.T
    np.fill_diagonal(A, np.nan)
    np.fill_diagonal(B, np.nan)
    A[0, 3] = A[3, 0] = np.nan  # a fit that missed K: its pairs left out
    loo = []
    for i in range(r):
        keep = [x for x in range(r) if x != i]
        a = [A[s, t] for s in keep for t in keep if s < t and np.isfinite(A[s, t])]
        b = [B[s, t] for s in keep for t in keep if s < t]
        loo.append(np.mean(a) - np.mean(b))
    loo = np.array(loo)
    want = np.sqrt((r - 1) / r * ((loo - loo.mean()) ** 2).sum())
    assert select_k.jackknife_se(A, B, r) == pytest.approx(want, rel=1e-12)
    assert select_k.jackknife_se(A, None, r) > 0


def test_contenders_keep_k_within_noise_and_drop_unreached_k():
    rng = np.random.default_rng(0)
    r = 5
    A = np.full((3, r, r), np.nan)
    for j, (mu, sd) in enumerate([(0.9, 0.05), (0.85, 0.2), (0.3, 0.02)]):
        v = np.triu(mu + sd * rng.standard_normal((r, r)), 1)
        A[j] = v + v.T
        np.fill_diagonal(A[j], np.nan)
    on, five = np.ones(3, dtype=bool), np.full(3, r)
    assert select_k.contenders([2, 3, 4], A, five, on, 2.33).tolist() == [True, True, False]
    # a larger z keeps the far K; a K whose fits never reached K clusters drops out
    assert select_k.contenders([2, 3, 4], A, five, on, 1e6).tolist() == [True, True, True]
    B = A.copy()
    B[1] = np.nan
    assert select_k.contenders([2, 3, 4], B, five, on, 1e6).tolist() == [True, False, True]
    # the leader is taken among those in: K = 4 alone in leads, K = 2 and 3 stay out
    # (fitted on as many subsamples, paired test against it: they beat it, so they
    # come back in)
    out = select_k.contenders([2, 3, 4], A, five, np.array([False, False, True]), 2.33)
    assert out.tolist() == [True, True, True]


def test_a_k_left_early_comes_back_when_the_leader_falls():
    """fig3c-like: after 4 subsamples K = 3 leads with perfect agreement and leaves
    K = 2 (0.95, tight) behind; when K = 3's later fits fall apart (0.69 over all its
    pairs), K = 2's mean over its own subsamples is above it and K = 2 is back in;
    K = 5 (0.4) stays out."""
    S = 8
    A = np.full((3, S, S), np.nan)
    for j, v in enumerate([0.98, 1.0, 0.4]):
        A[j] = v
    A[0] = 0.95 + 0.01 * (np.add.outer(np.arange(S), np.arange(S)) % 3 - 1)  # some spread
    A[1, 4:, :] = A[1, :, 4:] = 0.6  # K = 3's subsamples 5-8 fitted badly
    for j in range(3):
        np.fill_diagonal(A[j], np.nan)
    fitted = np.array([4, 8, 4])
    was = np.array([False, True, False])
    assert select_k.contenders([2, 3, 5], A, fitted, was, 2.33).tolist() == [True, True, False]
    # while K = 3 was still perfect (4 subsamples), K = 2 trailed beyond noise
    four = np.array([4, 4, 4])
    assert select_k.contenders([2, 3, 5], A, four, np.ones(3, bool), 2.33).tolist() == [
        False,
        True,
        False,
    ]


def test_sequential_table_records_the_fits_and_chooses_among_the_complete():
    with warnings.catch_warnings():  # whether the curve is flat is not the point here
        warnings.simplefilter("ignore", DataWarning)
        fit = craft(mixed(150), m=0.5, k_max=6, n_pairs=3, n_refs=2, n_init=2, rng=0)
    tab = fit.k_selection.set_index("k")
    fits = tab["fits"].dropna()
    assert fits.max() == 6 and fits.min() >= 4 and fits.loc[fit.k] == 6
    full = tab.loc[fits.index[fits == 6], "stability"]
    assert fit.k == select_k.stability_choice(full.index.tolist(), full.to_numpy())
    assert (tab["se_stability"].dropna() >= 0).all()


def test_k_at_the_cap_is_told():
    """Four clear clusters and k_max=3: K = 3 is the largest candidate; the warning,
    the table's attrs, the verbose print and the summary say so (and how to go on)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((160, 3)) + np.repeat(np.eye(4, 3) * 8.0, 40, axis=0)
    with pytest.warns(DataWarning, match=r"K = 3 is the largest K considered \(k_max=3\)"):
        fit = craft(x, m=0.5, k_max=3, n_pairs=2, n_refs=2, n_init=2, rng=0)
    assert fit.k == 3 and fit.k_selection.attrs["at_cap"] == "k_max"
    assert "pass a larger k_max (at most 8 on these 160 rows)" in str(fit.summary())
    tab = fit.k_selection.copy()
    tab.attrs = {**tab.attrs, "at_cap": "rows"}
    assert "pass k= to fit more clusters" in select_k.verdict_text(tab, 3)
    assert select_k.cap_reason(3, 3, 3, 160) == "k_max"
    assert select_k.cap_reason(3, 3, 9, 20) == "rows"
    assert select_k.cap_reason(2, 3, 3, 160) == select_k.cap_reason(1, 1, 3, 160) == ""


def test_sequential_choice_is_the_same_for_any_n_jobs():
    """The rounds of the sequential test do not depend on the workers: two workers
    give the serial table (and fit) exactly."""
    df = mixed(210)
    kw = dict(m=0.5, k_max=5, n_pairs=3, n_refs=2, n_init=2, rng=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        one = craft(df, **kw)
        two = craft(df, n_jobs=2, **kw)
    pd.testing.assert_frame_equal(one.k_selection, two.k_selection, check_exact=True)
    assert one.k == two.k and one.labels.equals(two.labels)
    assert one.k_selection["fits"].max() <= 6
