"""craft(), dpmeans() and sparse_kmeans() on Dask DataFrames give the in-memory result,
whatever the partitioning."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from sparseclust import craft, dpmeans, kmeans_sparse_permute, sparse_kmeans
from sparseclust._craft import core as core
from sparseclust.exceptions import ConvergenceWarning, DataWarning
from sparseclust.metrics import purity

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

# the test frames are small: on a cluster each would draw the note that memory is faster
pytestmark = pytest.mark.filterwarnings("ignore::sparseclust.exceptions.PerformanceWarning")

N = 20_000
LAM = 16.0  # about three clusters on the data below


def mixed_frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) + 2.0 * (g == j % 3) for j in range(4)})
    for j in range(3):
        noise = np.array(list("abcd"))[rng.integers(0, 4, n)]
        df[f"c{j}"] = np.where(rng.random(n) < 0.7, np.array(list("abc"))[g], noise)
    df["c0"] = df["c0"].astype("str")  # the pandas str dtype
    df.loc[rng.random(n) < 0.05, "x1"] = np.nan  # missing cells, kept (missing="native")
    df.loc[rng.random(n) < 0.05, "c2"] = None
    df.index = pd.RangeIndex(1000, 1000 + n)  # labels must follow the caller's index
    return df


def partitioned(df: pd.DataFrame, cuts: list[int]):
    """A Dask DataFrame with the given row cuts (repeated cuts give empty partitions)."""
    bounds = [0, *cuts, len(df)]
    pieces = [dask.delayed(df.iloc[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    return dd.from_delayed(pieces, meta=df.iloc[:0], verify_meta=False)


LAYOUTS = {
    "1 partition": [],
    "3 uneven": [1234, 15000],
    "7 with an empty one": [100, 3000, 3000, 9000, 12000, 19990],
}


def assert_same_fit(got, ref, *, rtol=1e-12):
    assert got.n_clusters == ref.n_clusters
    assert got.n_iter == ref.n_iter and got.converged == ref.converged
    pd.testing.assert_frame_equal(got.selected, ref.selected)
    lab = got.labels.compute()
    pd.testing.assert_series_equal(lab, ref.labels)
    pd.testing.assert_series_equal(got.sizes, ref.sizes, check_dtype=False)
    for a, b in ((got.centers, ref.centers), (got.sds, ref.sds)):
        np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=rtol, atol=1e-13)
    np.testing.assert_allclose(got.level_shares.to_numpy(), ref.level_shares.to_numpy(), rtol=rtol)
    np.testing.assert_allclose(got.objective, ref.objective, rtol=rtol)
    assert got.lam == pytest.approx(ref.lam, rel=rtol)
    assert got.neg_loglik == pytest.approx(ref.neg_loglik, rel=rtol)
    assert repr(got).splitlines()[2:] == repr(ref).splitlines()[2:]  # printed the same
    assert repr(got).splitlines()[0] == repr(ref).splitlines()[0]
    assert set(got.summary().tables) <= set(ref.summary().tables)


@pytest.fixture(scope="module")
def frame():
    return mixed_frame()


@pytest.fixture(scope="module")
def reference(frame):
    return craft(frame, m=0.5, lam=LAM, n_init=2, rng=1)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_given_lambda_equals_in_memory(frame, reference, layout):
    ddf = partitioned(frame, LAYOUTS[layout])
    with dask.config.set(scheduler="synchronous"):
        got = craft(ddf, m=0.5, lam=LAM, n_init=2, rng=1)
    assert reference.n_clusters == 3 and reference.converged
    assert_same_fit(got, reference)
    assert got.labels.npartitions == ddf.npartitions
    assert got.table is None and got.n_obs == N


def test_calibrated_k_full_equals_in_memory(frame):
    ref = craft(frame, m=0.5, k=3, n_init=2, rng=4)
    with dask.config.set(scheduler="synchronous"):
        got = craft(
            partitioned(frame, [5000, 11000]), m=0.5, k=3, n_init=2, rng=4, calibrate="full"
        )
    assert_same_fit(got, ref)
    pd.testing.assert_frame_equal(got.restarts, ref.restarts, rtol=1e-12)


def test_calibrated_on_a_sample_reaches_k(frame):
    """The default calibration (on an in-memory sample) is the one allowed difference:
    it reaches k and its lambda is near the full calibration's."""
    ref = craft(frame, m=0.5, k=3, n_init=2, rng=4)
    with dask.config.set(scheduler="synchronous"):
        got = craft(partitioned(frame, [7000]), m=0.5, k=3, n_init=2, rng=4, sample_rows=5000)
    assert got.n_clusters == 3
    assert got.lam == pytest.approx(ref.lam, rel=0.25)  # any lambda in the K = 3 range
    assert (got.restarts["n_clusters"] == 3).all()
    assert got.calibration is not None or got.lam_method == "calibrated"


def test_automatic_k_on_a_sample():
    """Without k or lam the choice of K runs on the in-memory sample (stability after
    the gap test), then every restart on all rows at that K."""
    rng = np.random.default_rng(3)
    g = rng.integers(0, 3, 6000)
    df = pd.DataFrame({f"x{j}": rng.normal(size=g.size) + 4.0 * (g == j) for j in range(3)})
    for j in range(2):
        df[f"c{j}"] = np.where(rng.random(g.size) < 0.9, np.array(list("abc"))[g], "d")
    with dask.config.set(scheduler="synchronous"):
        got = craft(
            partitioned(df, [2500]),
            m=0.5,
            k_max=4,
            n_pairs=2,
            n_init=3,
            n_refs=2,
            sample_rows=1000,
            rng=0,
        )
    tab = got.k_selection
    assert got.lam_method == "stability" and got.k == 3 == got.n_clusters
    assert tab.loc[tab["chosen"], "k"].tolist() == [3]
    assert tab.set_index("k")["stability"].idxmax() == 3
    lab = got.labels.compute()
    assert len(lab) == g.size and purity(g, lab.to_numpy()) > 0.95


def test_farthest_first_lambda_equals_in_memory(frame):
    from sparseclust import craft_lambda

    ref = craft_lambda(frame, m=0.5, k=3, rng=2)
    with dask.config.set(scheduler="synchronous"):
        got = craft(
            partitioned(frame, [3, 9000]), m=0.5, k=3, lam="farthest_first", n_init=1, rng=2
        )
    assert got.lam_method == "farthest_first"
    assert got.lam == pytest.approx(ref, rel=1e-12)


def test_many_new_clusters_and_warnings_equal(frame):
    """A small lambda opens many clusters per pass across partitions: the sequential
    rule is still exact; the non-convergence warning is the same."""
    small = frame.iloc[:3000]
    with pytest.warns(ConvergenceWarning) as w_ref:
        ref = craft(small, m=0.5, lam=6.0, n_init=1, rng=3, max_iter=3)
    with dask.config.set(scheduler="synchronous"), pytest.warns(ConvergenceWarning) as w_got:
        got = craft(
            partitioned(small, [10, 10, 700, 2999]), m=0.5, lam=6.0, n_init=1, rng=3, max_iter=3
        )
    assert ref.n_clusters > 20
    assert_same_fit(got, ref, rtol=1e-11)
    assert [str(w.message) for w in w_got] == [str(w.message) for w in w_ref]


def test_unknown_categories_get_sorted_levels(frame):
    """Unknown categories are established over all partitions, sorted as in memory."""
    df = frame.copy()
    df["c1"] = pd.Categorical(df["c1"], categories=["d", "c", "b", "a"])
    ddf = partitioned(df, [8000])
    ddf["c1"] = ddf["c1"].cat.as_unknown()
    ref = craft(frame, m=0.5, lam=LAM, n_init=1, rng=5)  # c1 as strings: sorted levels
    with dask.config.set(scheduler="synchronous"):
        got = craft(ddf, m=0.5, lam=LAM, n_init=1, rng=5)
    assert list(got.variables.levels["c1"]) == ["a", "b", "c", "d"]
    assert_same_fit(got, ref)


def test_known_categories_keep_their_order(frame):
    df = frame.copy()
    df["c1"] = pd.Categorical(df["c1"], categories=["d", "c", "b", "a"])
    ref = craft(df, m=0.5, lam=LAM, n_init=1, rng=5)
    with dask.config.set(scheduler="synchronous"):
        got = craft(partitioned(df, [8000]), m=0.5, lam=LAM, n_init=1, rng=5)
    assert list(got.variables.levels["c1"]) == ["d", "c", "b", "a"]
    assert_same_fit(got, ref)


def test_formula_and_predict(frame):
    ref = craft("~ . - c2", data=frame, m=0.5, k=3, n_init=1, rng=6)
    with dask.config.set(scheduler="synchronous"):
        got = craft(
            "~ . - c2",
            data=partitioned(frame, [4000]),
            m=0.5,
            k=3,
            n_init=1,
            rng=6,
            calibrate="full",
        )
    assert_same_fit(got, ref)
    new = frame.iloc[:50]
    pd.testing.assert_series_equal(got.predict(new), ref.predict(new))


def test_backend_switches(frame):
    small = frame.iloc[:4000]
    ref = craft(small, m=0.5, lam=LAM, n_init=1, rng=7)
    with dask.config.set(scheduler="synchronous"):
        forced = craft(small, m=0.5, lam=LAM, n_init=1, rng=7, backend="dask")
        back = craft(partitioned(small, [1000]), m=0.5, lam=LAM, n_init=1, rng=7, backend="numpy")
    assert_same_fit(forced, ref)
    pd.testing.assert_series_equal(back.labels, ref.labels)
    with pytest.raises(ValueError, match="backend"):
        craft(small, m=0.5, lam=LAM, backend="spark")


def test_missing_raise_and_constant_column(frame):
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match="missing"):
            craft(partitioned(frame, [100]), m=0.5, lam=LAM, missing="raise")
        # a constant column is dropped as in memory, with the same fit as without it
        const = frame.assign(k=1.0, g="same")
        with pytest.warns(DataWarning, match=r"\['k', 'g'\] are constant"):
            got = craft(partitioned(const, [1234, 15000]), m=0.5, lam=LAM, n_init=1, rng=3)
        assert got.variables.dropped_constant == ("k", "g")
        with pytest.warns(DataWarning, match=r"\['k', 'g'\] are constant"):
            mem = craft(const, m=0.5, lam=LAM, n_init=1, rng=3)
        assert mem.variables.dropped_constant == ("k", "g")
        assert_same_fit(got, mem)
        assert "Constant columns dropped: k, g" in repr(got)


def test_unseen_level_in_a_later_partition_is_not_silently_recoded():
    """A level first seen in a later partition gets its sorted place, not a new code."""
    df = mixed_frame(4000, seed=3)
    df.loc[df.index[-5:], "c1"] = "zz"
    ref = craft(df, m=0.5, lam=LAM, n_init=1, rng=8)
    with dask.config.set(scheduler="synchronous"):
        got = craft(partitioned(df, [1000, 2000]), m=0.5, lam=LAM, n_init=1, rng=8)
    assert list(got.variables.levels["c1"]) == ["a", "b", "c", "d", "zz"]
    assert_same_fit(got, ref)


def test_blocked_fit_is_independent_of_the_blocking():
    """The in-memory path itself: any row blocks, the same fit."""
    df = mixed_frame(5000, seed=9)
    from sparseclust._craft.prepared import prepare_table
    from sparseclust._data.table import build_table

    t = build_table(df, missing="native", missing_choices=("native",))
    d = prepare_table(t, True, 0.01).data
    outs = [
        core.craft_fit(core.as_blocked(d, rows), LAM, m=0.5, rho=0.24, rng=np.random.default_rng(0))
        for rows in (5000, 999, 64)
    ]
    for o in outs[1:]:
        np.testing.assert_array_equal(o.labels, outs[0].labels)
        assert o.n_iter == outs[0].n_iter
        np.testing.assert_allclose(o.objective, outs[0].objective, rtol=1e-12)


# ------------------------------------------------------------------------ DP-means
@pytest.fixture(scope="module")
def complete():
    return mixed_frame().drop(columns=["x1", "c2"])  # DP-means has no native missing cells


def assert_same_dp(got, ref, *, rtol=1e-12):
    assert got.n_clusters == ref.n_clusters
    assert got.n_iter == ref.n_iter and got.converged == ref.converged
    pd.testing.assert_series_equal(got.labels.compute(), ref.labels)
    np.testing.assert_allclose(
        got.centers.to_numpy(), ref.centers.to_numpy(), rtol=rtol, atol=1e-12
    )
    np.testing.assert_allclose(got.objective_path, ref.objective_path, rtol=rtol)
    assert got.lam == pytest.approx(ref.lam, rel=rtol)
    pd.testing.assert_series_equal(got.sizes, ref.sizes, check_dtype=False)
    assert repr(got).splitlines()[2:] == repr(ref).splitlines()[2:]  # printed the same
    got.summary()


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_dpmeans_equals_in_memory(complete, layout):
    ref = dpmeans(complete, lam=12.0, scale=True)
    with dask.config.set(scheduler="synchronous"):
        got = dpmeans(partitioned(complete, LAYOUTS[layout]), lam=12.0, scale=True)
    assert ref.n_clusters >= 2
    assert_same_dp(got, ref)


def test_dpmeans_many_new_clusters_equal_the_sequential_pass(complete):
    """DP-means(R) at a small lambda opens hundreds of clusters per pass, across
    partitions (one empty): the same labels as the in-memory sequential rule."""
    small = complete.iloc[:5000]
    with pytest.warns(ConvergenceWarning) as w_ref:
        ref = dpmeans(small, lam=3.0, scale=True, init="random", rng=1, max_iter=4)
    with dask.config.set(scheduler="synchronous"), pytest.warns(ConvergenceWarning) as w_got:
        got = dpmeans(
            partitioned(small, [100, 2500, 2500, 4999]),
            lam=3.0,
            scale=True,
            init="random",
            rng=1,
            max_iter=4,
        )
    assert ref.n_clusters > 100
    assert_same_dp(got, ref, rtol=1e-11)
    assert [str(w.message) for w in w_got] == [str(w.message) for w in w_ref]


def test_dpmeans_calibration_and_farthest_first(complete):
    small = complete.iloc[:4000]
    ref = dpmeans(small, k=4, scale=True)
    ff = dpmeans(small, lam="farthest_first", k=4, scale=True)
    with dask.config.set(scheduler="synchronous"):
        ddf = partitioned(small, [1700])
        full = dpmeans(ddf, k=4, scale=True, calibrate="full")
        sampled = dpmeans(ddf, k=4, scale=True, sample_rows=1500)
        ff_d = dpmeans(ddf, lam="farthest_first", k=4, scale=True)
    assert_same_dp(full, ref)
    assert sampled.n_clusters == 4
    assert ff_d.lam == pytest.approx(ff.lam, rel=1e-12)


def test_dpmeans_missing_drop_and_predict():
    df = mixed_frame(6000, seed=4)
    ref = dpmeans(df, lam=20.0, scale=True, missing="drop")
    with dask.config.set(scheduler="synchronous"):
        got = dpmeans(partitioned(df, [2000]), lam=20.0, scale=True, missing="drop")
        with pytest.raises(ValueError, match="missing"):
            dpmeans(partitioned(df, [2000]), lam=20.0)
    assert got.n_dropped == ref.n_dropped > 0
    pd.testing.assert_series_equal(got.labels.compute(), ref.labels)
    new = df.dropna().iloc[:30]
    pd.testing.assert_series_equal(got.predict(new), ref.predict(new))


def test_methods_without_a_dask_backend_compute_with_a_warning():
    """sparse_kmeans_path has no Dask backend: the frame is computed into memory, names
    and index kept, and the caller is told; the fit equals the in-memory one."""
    from sparseclust import sparse_kmeans_path

    df = mixed_frame(300)[["x0", "x2", "x3"]]
    ref = sparse_kmeans_path(df, 3, wbounds=[1.2, 1.5], rng=0)
    with dask.config.set(scheduler="synchronous"), pytest.warns(DataWarning, match="no Dask"):
        got = sparse_kmeans_path(partitioned(df, [100]), 3, wbounds=[1.2, 1.5], rng=0)
    pd.testing.assert_series_equal(got[1].labels, ref[1].labels)
    pd.testing.assert_frame_equal(got.weights, ref.weights)


# ------------------------------------------------------------------- sparse k-means
def numeric_frame(n: int = N, seed: int = 2, p: int = 12) -> pd.DataFrame:
    """Three clusters on the first four of ``p`` features, on different scales."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    x = rng.normal(size=(n, p)) * np.linspace(1.0, 5.0, p)
    x[:, :4] += 2.5 * (g[:, None] == np.arange(4) % 3)
    df = pd.DataFrame(x, columns=[f"f{j}" for j in range(p)])
    df.index = pd.RangeIndex(500, 500 + n)
    return df


def assert_same_sk(got, ref, *, rtol=1e-12):
    assert got.n_iter == ref.n_iter and got.converged == ref.converged
    pd.testing.assert_series_equal(got.labels.compute(), ref.labels)
    pd.testing.assert_series_equal(got.sizes, ref.sizes, check_dtype=False)
    for a, b in ((got.weights, ref.weights), (got.bcss, ref.bcss), (got.tss, ref.tss)):
        np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=rtol, atol=1e-14)
    np.testing.assert_allclose(got.objective_path, ref.objective_path, rtol=rtol)
    np.testing.assert_allclose(
        got.centers.to_numpy(), ref.centers.to_numpy(), rtol=rtol, atol=1e-12
    )
    assert got.threshold == pytest.approx(ref.threshold, rel=1e-9, abs=1e-12)
    assert repr(got).splitlines()[2:] == repr(ref).splitlines()[2:]  # printed the same
    assert set(got.summary().tables) <= set(ref.summary().tables)


SK = {"wbound": 1.8, "nstart": 5, "max_iter": 20, "rng": 3}


@pytest.fixture(scope="module")
def numeric():
    return numeric_frame()


@pytest.fixture(scope="module")
def sk_reference(numeric):
    return sparse_kmeans(numeric, 3, scale=True, algorithm="lloyd", **SK)


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_sparse_kmeans_equals_in_memory(numeric, sk_reference, layout):
    with dask.config.set(scheduler="synchronous"):
        got = sparse_kmeans(partitioned(numeric, LAYOUTS[layout]), 3, scale=True, **SK)
    assert got.algorithm == "lloyd" and got.params["backend"] == "dask"
    assert 1 < sk_reference.n_nonzero < 12
    assert_same_sk(got, sk_reference)


def test_sparse_kmeans_missing_values_equal_in_memory(numeric):
    df = numeric.copy()
    rng = np.random.default_rng(7)
    df = df.mask(rng.random(df.shape) < 0.04)
    ref = sparse_kmeans(df, 3, algorithm="lloyd", **SK)
    with dask.config.set(scheduler="synchronous"):
        got = sparse_kmeans(partitioned(df, LAYOUTS["7 with an empty one"]), 3, **SK)
        dropped = sparse_kmeans(partitioned(df, [5000]), 3, missing="drop", **SK)
    assert_same_sk(got, ref)
    assert dropped.n_dropped == int(df.isna().any(axis=1).sum()) > 0
    lab = dropped.labels.compute()
    assert lab.isna().sum() == dropped.n_dropped and lab.index.equals(df.index)


def test_sparse_kmeans_repeated_rows_across_partitions():
    """Random starts are drawn among the distinct rows, as R does: rows repeated in
    other partitions are found exactly (hash, then full comparison)."""
    rng = np.random.default_rng(5)
    base = rng.integers(0, 3, size=(40, 4)).astype(float)
    df = pd.DataFrame(base[rng.integers(0, 40, 3000)], columns=list("abcd"))
    ref = sparse_kmeans(df, 6, wbound=1.5, nstart=8, max_iter=20, algorithm="lloyd", rng=2)
    with dask.config.set(scheduler="synchronous"):
        ddf = partitioned(df, [7, 1000, 1000, 2999])
        got = sparse_kmeans(ddf, 6, wbound=1.5, nstart=8, max_iter=20, rng=2)
    assert_same_sk(got, ref)


def test_blocked_lloyd_pieces_are_independent_of_the_blocking():
    """Distinct rows, the batched multi-start (with empty clusters re-seeded at the
    farthest rows) and exact Lloyd over arbitrary blocks, against one block."""
    from sparseclust._engine.blocks import LocalBlocks
    from sparseclust._sparse import lloyd as _lloyd

    rng = np.random.default_rng(11)
    x = np.round(rng.normal(size=(700, 3)), 1)
    x[::50] += 40.0  # far rows: the re-seeding candidates
    one = _lloyd.one_block(x)
    cuts = [0, 1, 2, 2, 60, 333, 650, 699, 700]
    many = LocalBlocks([x[a:b] for a, b in zip(cuts[:-1], cuts[1:])], np.diff(cuts))
    np.testing.assert_array_equal(_lloyd.unique_rows(many), _lloyd.unique_rows(one))
    mu = x.mean(axis=0)
    c0 = np.stack([x[[0, 1, 2, 3]], x[[5, 9, 13, 17]]]) - mu
    c0[0, 3] = 1e4  # a centre nobody is near: its cluster empties at once
    outs = [_lloyd._batched_lloyd(ex, None, mu, c0, 30) for ex in (one, many)]
    (s1, c1, w1, v1, i1), (s2, c2, w2, v2, i2) = outs
    lab1 = s1[0]["lab"]
    lab2 = np.concatenate([s["lab"] for s in s2], axis=1)
    np.testing.assert_array_equal(lab1, lab2)
    assert (np.bincount(lab1[0], minlength=4) > 0).all()  # re-seeded
    np.testing.assert_allclose(c1, c2, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(i1, i2)
    start = x[[0, 100, 200]]
    a = _lloyd.lloyd_blocks(one, start, 20)
    b = _lloyd.lloyd_blocks(many, start, 20)
    np.testing.assert_array_equal(a[0][0], np.concatenate(b[0]))
    np.testing.assert_allclose(a[1], b[1], rtol=1e-12)
    assert a[3:] == b[3:]


def test_kmeans_sparse_permute_on_dask(numeric):
    small = numeric.iloc[:3000]
    kw = {"nperms": 3, "wbounds": [1.3, 2.0, 3.0], "nstart": 3, "max_iter": 20, "rng": 4}
    ref = kmeans_sparse_permute(small, 3, algorithm="lloyd", **kw)
    with dask.config.set(scheduler="synchronous"):
        ddf = partitioned(small, [1000, 2000])
        full = kmeans_sparse_permute(ddf, 3, sample_rows=5000, **kw)
        sampled = kmeans_sparse_permute(ddf, 3, sample_rows=800, **kw)
    # with every row in the sample the gap is the in-memory one, and so is the fit
    pd.testing.assert_frame_equal(full.table, ref.table, rtol=1e-12)
    assert full.best_wbound == ref.best_wbound
    assert_same_sk(full.best, ref.best)
    assert sampled.params["gap_rows"] == 800 and full.params["gap_rows"] == 3000
    assert sampled.best.n_obs == 3000 and sampled.best.wbound == sampled.best_wbound


def test_sparse_kmeans_dask_refusals(numeric):
    ddf = partitioned(numeric.iloc[:200], [100])
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match="hartigan-wong.*needs the data in memory"):
            sparse_kmeans(ddf, 3, wbound=2, algorithm="hartigan-wong")
        mixed = partitioned(mixed_frame(200), [100])
        with pytest.raises(TypeError, match="craft"):
            sparse_kmeans(mixed, 3, wbound=2)
        empty_row = numeric.iloc[:200].copy()
        empty_row.iloc[150] = np.nan
        with pytest.raises(ValueError, match=r"rows \[650\] have no observed value"):
            sparse_kmeans(partitioned(empty_row, [100]), 3, wbound=2)
        in_memory = sparse_kmeans(ddf, 3, wbound=2, backend="numpy", rng=0)
    assert in_memory.algorithm == "hartigan-wong" and in_memory.params["backend"] == "numpy"
    forced = sparse_kmeans(numeric.iloc[:200], 3, wbound=2, backend="dask", rng=0)
    assert forced.params["backend"] == "dask"


# ------------------------------------------------ distributed cluster (keep last: an
# active Client is used by every later call)
@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_distributed_equals_in_memory(frame, reference, client):
    ddf = partitioned(frame, LAYOUTS["7 with an empty one"])
    got = craft(ddf, m=0.5, lam=LAM, n_init=2, rng=1)
    assert_same_fit(got, reference)
    # nothing but the chosen fit's per-row states is left on the workers
    import time

    for _ in range(100):  # the release tasks of the other restart run asynchronously
        left = sum(client.run(_store_size).values())
        if left == ddf.npartitions:
            break
        time.sleep(0.1)
    assert left == ddf.npartitions


def _store_size():
    from sparseclust._engine import dask as _dask

    return len(_dask._STORE)


def test_dpmeans_distributed(complete, client):
    ref = dpmeans(complete, lam=12.0, scale=True)
    got = dpmeans(partitioned(complete, LAYOUTS["7 with an empty one"]), lam=12.0, scale=True)
    assert_same_dp(got, ref)


def test_sparse_kmeans_distributed(numeric, sk_reference, client):
    before = sum(client.run(_store_size).values())
    ddf = partitioned(numeric, LAYOUTS["7 with an empty one"])
    got = sparse_kmeans(ddf, 3, scale=True, **SK)
    assert_same_sk(got, sk_reference)
    import time

    for _ in range(100):  # only the fit's labels stay, one array per partition
        left = sum(client.run(_store_size).values()) - before
        if left == ddf.npartitions:
            break
        time.sleep(0.1)
    assert left == ddf.npartitions


def test_calibrated_restarts_together_equal_in_memory(frame, client):
    """k= with calibrate="full": the first calibration on all rows, then the other
    restarts and the seeded runs at once, their passes batched; the in-memory fit."""
    small = frame.iloc[:4000]
    ref = craft(small, m=0.5, k=3, n_init=4, rng=2)
    got = craft(
        partitioned(small, [900, 2100, 3000]), m=0.5, k=3, n_init=4, calibrate="full", rng=2
    )
    assert_same_fit(got, ref)
    pd.testing.assert_frame_equal(got.restarts, ref.restarts)


def test_restarts_together_batch_their_passes(frame, client, monkeypatch):
    """Restarts run together cost one call per worker and pass, not one per restart:
    far fewer round trips than the restarts' passes, and the fit is unchanged."""
    from sparseclust._engine import dask as _dask

    made = []
    init = _dask.FutureBlocks.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(_dask.FutureBlocks, "__init__", spy)
    ddf = partitioned(frame, [5000, 10000, 15000])
    got = craft(ddf, m=0.5, lam=LAM, n_init=6, rng=3)
    passes = int(got.restarts["n_iter"].sum())
    assert made[0].round_trips < passes  # serial restarts would need >= 2 per pass
    ref = craft(frame, m=0.5, lam=LAM, n_init=6, rng=3)
    assert_same_fit(got, ref)


def test_small_data_on_a_cluster_draw_a_performance_note(frame, client):
    from sparseclust.exceptions import PerformanceWarning

    with pytest.warns(PerformanceWarning, match=r"20,000 rows x 7 columns.*backend='numpy'"):
        craft(partitioned(frame, [10000]), m=0.5, lam=LAM, n_init=1, rng=0)


def test_no_performance_note_without_a_cluster(frame):
    """Without a client the partitions are computed here and run in memory: no note."""
    import subprocess
    import sys

    code = (
        "import warnings, numpy as np, pandas as pd, dask.dataframe as dd\n"
        "warnings.simplefilter('error')\n"
        "from sparseclust import craft\n"
        "r = np.random.default_rng(0)\n"
        "df = pd.DataFrame({'a': r.normal(size=300), 'b': r.normal(size=300)})\n"
        "craft(dd.from_pandas(df, npartitions=3), m=0.5, lam=8.0, n_init=1, rng=0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
