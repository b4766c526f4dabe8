"""Extreme magnitudes (issue 22, items 4-7).

The rule (docs/decisions.md, "Data front"): a numeric column whose largest magnitude
exceeds :func:`~sparseclust._data.stages.magnitude_limit` (beyond it the sums of
squared differences the methods form overflow float64) is refused by the front with a
``ValueError`` naming the column, its largest magnitude and the fix -- in memory, on
Dask (over all partitions) and in the new data of ``predict``. Below the limit every
method runs without a numpy warning; tiny magnitudes (1e-300) just work, and a
standardised tiny column is standardised (its sd no longer underflows to 0).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import sparseclust as sc
from sparseclust._data.stages import (
    SMALL_SD,
    check_magnitudes,
    column_max_abs,
    magnitude_limit,
    repair_sd,
)

# an outlier row split off to reach k is about the partition, not the magnitudes
pytestmark = pytest.mark.filterwarnings("ignore:.*found tiny clusters")

R = np.random.default_rng(0)
X = pd.DataFrame(R.normal(size=(24, 3)), columns=list("abc"))
Z = R.normal(size=24)
UNIT = X.assign(big=Z)
BIG = X.assign(big=Z * 1e300)
BIG_NA = BIG.copy()
BIG_NA.iloc[3, 0] = np.nan
TINY = X.assign(big=Z * 1e-300)
LABELS = np.repeat([0, 1], 12)
#: the largest magnitude allowed for 24 rows x 4 variables (about 1.7e75)
LIMIT = magnitude_limit(24, 4)
NEAR = X.assign(big=Z / np.abs(Z).max() * 0.5 * LIMIT)  # below the limit: must run
OVER = X.assign(big=Z / np.abs(Z).max() * 2.0 * LIMIT)  # above: refused

#: every public function that reads numeric data, on one data set (kwargs: scale=, missing=)
FITS = {
    "sparse_kmeans": lambda d, **kw: sc.sparse_kmeans(d, 2, wbound=1.3, rng=0, **kw),
    "sparse_kmeans_lloyd": lambda d, **kw: sc.sparse_kmeans(
        d, 2, wbound=1.3, algorithm="lloyd", rng=0, **kw
    ),
    "sparse_kmeans_path": lambda d, **kw: sc.sparse_kmeans_path(
        d, 2, wbounds=[1.2, 1.5], rng=0, **kw
    ),
    "kmeans_sparse_permute": lambda d, **kw: sc.kmeans_sparse_permute(
        d, 2, wbounds=[1.2, 1.5], nperms=2, rng=0, **kw
    ),
    "sparse_weights": lambda d, **kw: sc.sparse_weights(d, LABELS, 1.3, **kw),
    "sparse_hclust": lambda d, **kw: sc.sparse_hclust(d, wbound=1.3, **kw),
    "hclust_sparse_permute": lambda d, **kw: sc.hclust_sparse_permute(
        d, wbounds=[1.2, 1.5], nperms=2, rng=0, **kw
    ),
    "craft": lambda d, **kw: sc.craft(d, m=0.5, k=2, rng=0, **kw),
    "craft_lambda": lambda d, **kw: sc.craft_lambda(d, k=2, rng=0, **kw),
    "dp_rf": lambda d, **kw: sc.dp_rf(d, k=2, rng=0, **kw),
    "dpmeans": lambda d, **kw: sc.dpmeans(d, k=2, rng=0, **kw),
    "farthest_first_lambda": lambda d, **kw: sc.farthest_first_lambda(d, k=2, rng=0, **kw),
}
#: methods whose default is missing="raise" (the missing cell is dropped to reach the check)
RAISE_ON_NA = {"dpmeans", "farthest_first_lambda"}
DASK_FITS = ("craft", "dpmeans", "sparse_kmeans_lloyd")


def _strict(call, *args, **kwargs):
    """``call`` with every warning an error (a numpy RuntimeWarning must never leak)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # (an outlier row split off to reach k is about the partition, not magnitudes)
        warnings.filterwarnings("ignore", message=".*found tiny clusters")
        return call(*args, **kwargs)


def _kw(name: str, data: pd.DataFrame, scale: bool) -> dict:
    kw = {"scale": scale}
    if name in RAISE_ON_NA and data.isna().any().any():
        kw["missing"] = "drop"
    return kw


def _floats(res) -> dict[str, np.ndarray]:
    """The float arrays a result holds (fields, Series and frames), by name."""
    if isinstance(res, float):
        return {"value": np.array([res])}
    if isinstance(res, pd.Series):
        return {"values": res.to_numpy(dtype=float)}
    out = {}
    for name, value in vars(res).items():
        if isinstance(value, pd.DataFrame | pd.Series):
            value = value.select_dtypes("number") if isinstance(value, pd.DataFrame) else value
            if isinstance(value, pd.Series) and value.dtype.kind not in "fiu":
                continue
            value = value.to_numpy(dtype=float, na_value=np.nan)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            out[name] = value
        elif isinstance(value, float):
            out[name] = np.array([value])
    return out


def _same_finiteness(got: dict, ordinary: dict) -> None:
    """No infinity anywhere, and what is finite on ordinary data is finite here (no
    overflow, no NaN from inf - inf); NaN where the ordinary fit has NaN too."""
    for key, value in got.items():
        assert not np.isinf(value).any(), key
        if key not in ordinary:  # e.g. no calibration history when none was needed
            continue
        if np.isfinite(ordinary[key]).all():
            assert np.isfinite(value).all(), key
        elif value.shape == ordinary[key].shape:
            assert np.array_equal(np.isnan(value), np.isnan(ordinary[key])), key


def _labels(res) -> np.ndarray:
    """What a fit decided: its labels, and its weights or penalty where it has them."""
    if isinstance(res, float | pd.Series):
        return np.asarray(res, dtype=float).ravel()
    if isinstance(res, sc.SparseKMeansPath):
        return np.asarray(res.weights, dtype=float).ravel()
    if isinstance(res, sc.PermuteResult):
        return np.concatenate([np.asarray(res.tots, dtype=float), [res.best_wbound]])
    labels = np.asarray(res.cut(2)) if isinstance(res, sc.SparseHClustResult) else res.labels
    if hasattr(labels, "compute"):
        labels = labels.compute()
    out = [np.asarray(labels, dtype=float)]
    for extra in ("weights", "lam"):
        if getattr(res, extra, None) is not None:
            out.append(np.asarray(getattr(res, extra), dtype=float).ravel())
    return np.concatenate(out)


def _dask(df: pd.DataFrame):
    dd = pytest.importorskip("dask.dataframe")
    return dd.from_pandas(df, npartitions=2)


# ------------------------------------------------------------- the limit itself
def test_limit_formula():
    top = np.finfo(np.float64).max
    assert magnitude_limit(24, 4) == pytest.approx(top**0.25 / (2 * 24 * 4**0.25))
    assert 1e75 < LIMIT < 1e76
    # at the limit the squared per-feature pair totals, 4 p n^4 M^4, are DBL_MAX / 4
    assert 4 * 4 * 24.0**4 * LIMIT**4 == pytest.approx(top / 4)
    # a million rows x 1,000 variables still allow magnitudes of 1e70
    assert magnitude_limit(10**6, 1000) > 1e69


def test_check_names_column_magnitude_and_fix():
    num = np.column_stack([np.ones(4), [1e300, -3e300, 0.0, np.nan]])
    with pytest.raises(ValueError) as err:
        check_magnitudes(column_max_abs(num), ["a", "big"], 4, 2)
    msg = str(err.value)
    assert "['big']" in msg and "3e+300" in msg and "'a'" not in msg
    assert "df['big'] / 1e300" in msg and "overflow" in msg
    check_magnitudes(column_max_abs(num[:, :1]), ["a"], 4, 1)  # fine
    with pytest.raises(ValueError, match=r"newdata columns \['big'\]"):
        check_magnitudes(column_max_abs(num), ["a", "big"], 4, 2, newdata=True)
    with pytest.raises(ValueError, match=r"I\(big / 1e300\)"):
        check_magnitudes(column_max_abs(num), ["a", "big"], 4, 2, formula=True)


def test_column_max_abs_ignores_missing_cells():
    num = np.array([[np.nan, 1.0], [np.nan, -2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert column_max_abs(num).tolist() == [0.0, 2.0]
        assert column_max_abs(np.zeros((0, 2))).tolist() == [0.0, 0.0]


def test_build_table_refuses_and_can_leave_it_to_the_caller():
    with pytest.raises(ValueError, match=r"\['big'\]"):
        _strict(sc.build_table, BIG)
    with pytest.raises(ValueError, match=r"\['big'\]"):
        _strict(sc.build_table, "~ a + big", data=BIG)
    t = sc.build_table(BIG, check_magnitude=False)  # the Dask reader checks all partitions
    assert t.numeric_names == ["a", "b", "c", "big"]
    # a constant huge column is dropped (with its warning), not refused
    with pytest.warns(sc.DataWarning, match="constant"):
        t = sc.build_table(X.assign(k=1e300), constant="drop")
    assert t.numeric_names == ["a", "b", "c"]
    # the rows kept count: the limit is read after missing="drop"
    assert sc.build_table(NEAR).n_obs == 24


# -------------------------------------------------------- every method, in memory
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("data", [BIG, BIG_NA, OVER], ids=["1e300", "1e300+NaN", "2x-limit"])
@pytest.mark.parametrize("name", list(FITS))
def test_large_column_refused_naming_it(name, data, scale):
    with pytest.raises(ValueError, match=r"\['big'\].*overflow") as err:
        _strict(FITS[name], data, **_kw(name, data, scale))
    assert "df['big'] /" in str(err.value)


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("name", list(FITS))
def test_below_the_limit_runs_finite_and_warning_free(name, scale):
    unit = _floats(FITS[name](UNIT, scale=scale))
    near = _floats(_strict(FITS[name], NEAR, scale=scale))
    _same_finiteness(near, unit)


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("name", list(FITS))
def test_tiny_magnitudes_just_work(name, scale):
    unit = _floats(FITS[name](UNIT, scale=scale))
    tiny = _floats(_strict(FITS[name], TINY, scale=scale))
    _same_finiteness(tiny, unit)


@pytest.mark.parametrize("name", list(FITS))
def test_tiny_column_is_standardised(name):
    # standardising makes z * 1e-300 the same column as z (up to rounding): its sd
    # no longer underflows to 0 (which left the column unscaled, i.e. ignored)
    unit = _labels(FITS[name](UNIT, scale=True))
    tiny = _labels(_strict(FITS[name], TINY, scale=True))
    np.testing.assert_allclose(tiny, unit, rtol=1e-9)


# ------------------------------------------------------------------------ on Dask
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("data", [BIG, BIG_NA, OVER], ids=["1e300", "1e300+NaN", "2x-limit"])
@pytest.mark.parametrize("name", DASK_FITS)
def test_large_column_refused_on_dask(name, data, scale):
    ddf = _dask(data)
    with pytest.raises(ValueError, match=r"\['big'\].*overflow") as err:
        _strict(FITS[name], ddf, **_kw(name, data, scale))
    msg = str(err.value)
    n = 23 if data is BIG_NA and name == "dpmeans" else 24  # missing="drop": 23 rows kept
    assert "newdata" not in msg and f"{n} rows" in msg  # the limit of all partitions


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("name", DASK_FITS)
def test_dask_below_the_limit_and_tiny_just_work(name, scale):
    for data in (NEAR, TINY):
        res = _strict(FITS[name], _dask(data), scale=scale)
        for key, value in _floats(res).items():
            assert not np.isinf(value).any(), key
        labels = _labels(res)
        assert np.isfinite(labels).all()


@pytest.mark.parametrize("name", DASK_FITS)
def test_dask_tiny_column_is_standardised(name):
    unit = _labels(FITS[name](_dask(UNIT), scale=True))
    tiny = _labels(_strict(FITS[name], _dask(TINY), scale=True))
    np.testing.assert_allclose(tiny, unit, rtol=1e-9)


def test_dask_checks_over_all_partitions():
    # each half alone is within its own limit (12 rows); over 24 rows it is not
    over = magnitude_limit(24, 4) * 1.5
    assert over < magnitude_limit(12, 4)
    df = X.assign(big=np.where(np.arange(24) % 2 == 0, over, -over))
    with pytest.raises(ValueError, match=r"\['big'\]"):
        _strict(sc.dpmeans, _dask(df), k=2, rng=0)
    with pytest.raises(ValueError, match=r"\['big'\]"):
        _strict(sc.dpmeans, df, k=2, rng=0)


# ------------------------------------------------------------------ predict
@pytest.mark.parametrize("name", ["craft", "dp_rf", "dpmeans", "sparse_kmeans"])
def test_predict_applies_the_same_rule(name):
    fit = FITS[name](UNIT, scale=False)
    new = UNIT.copy()
    new.iloc[2, 0] = 1e300
    with pytest.raises(ValueError, match=r"newdata columns \['a'\].*overflow"):
        _strict(fit.predict, new)
    near = UNIT.copy()
    near.iloc[2, 0] = 0.5 * LIMIT
    labels = _strict(fit.predict, near)
    assert labels.notna().all()


def test_transform_like_rule_and_switch():
    from sparseclust._data.table import transform_like

    spec = sc.build_table(UNIT).spec
    with pytest.raises(ValueError, match=r"newdata columns \['big'\]"):
        _strict(transform_like, spec, BIG)
    assert transform_like(spec, BIG, check_magnitude=False).numeric.shape == (24, 4)


# ---------------------------------------------------------------- the sd repair
def test_repair_sd_recomputes_only_underflowed_sds():
    x = np.column_stack([Z, Z * 1e-300, np.full(24, 1e-300), Z * 1e-160])
    x[5, 0] = np.nan
    center = np.nanmean(x, axis=0)
    sd = np.nanstd(x, axis=0, ddof=1)
    assert sd[1] == 0.0  # the squares underflowed
    fixed = _strict(repair_sd, x, center, sd)
    assert fixed[0] == sd[0]  # ordinary sds are kept bit for bit
    assert fixed[1] == pytest.approx(np.std(Z, ddof=1) * 1e-300, rel=1e-12)
    assert fixed[2] == 0.0  # a constant column stays constant
    assert fixed[3] == pytest.approx(np.std(Z, ddof=1) * 1e-160, rel=1e-12)
    assert SMALL_SD > fixed[3]
    assert repair_sd(x[:, :1], center[:1], sd[:1]) is not None


# ------------------------------------------------- the array-level k-means checks
def test_hartigan_wong_names_the_column_that_overflows():
    from sparseclust._sparse.hartigan_wong import hartigan_wong
    from sparseclust._sparse.lloyd import kmeans_multi_start, lloyd

    x = np.column_stack([np.arange(6.0), np.arange(6.0) * 1e300])
    with pytest.raises(ValueError, match=r"column\(s\) \[1\] .*overflow"):
        _strict(hartigan_wong, x, x[:2])
    with pytest.raises(ValueError, match=r"column\(s\) \[1\] .*overflow"):
        _strict(kmeans_multi_start, x, 2, n_init=2, rng=0)
    y = x.copy()
    y[3, 0] = np.nan
    with pytest.raises(ValueError, match=r"column\(s\) \[0\] .*NaN"):
        _strict(lloyd, y, x[:2])


def test_nan_multi_start_always_returns_a_partition():
    # before: with no finite within sum of squares no run was kept and the block copy
    # failed with "'NoneType' object is not iterable" (item 4)
    from sparseclust._engine.blocks import LocalBlocks
    from sparseclust._sparse.lloyd import nan_multi_start

    with np.errstate(all="ignore"):
        x = BIG_NA.to_numpy() * 1e8  # overflows to inf
        states = nan_multi_start(LocalBlocks([x], [x.shape[0]]), 2, 3, np.random.default_rng(0))
    assert states is not None and len(states) == 1
