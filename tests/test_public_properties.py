"""Hypothesis properties of every public clustering function on odd mixed frames.

Frames of 0-12 rows and 1-5 columns mix float (also at 1e300 and 1e-300), nullable
Float64 / Int64, bool, string, category with unused levels, datetime, object columns
mixing numbers and strings, constant and duplicated columns, missing cells and
infinities, odd and non-string column names, and RangeIndex / shuffled / non-unique /
string / MultiIndex row indexes. Every public clustering function gets them with small
settings. For every call:

* it returns, or raises ValueError / TypeError (or the package's subclasses) whose
  message names a column of the frame or a parameter of the call;
* the caller's frame is unchanged (values, dtypes, names, index);
* no RuntimeWarning (numpy overflow, invalid values, empty slices); the package's own
  warnings (DataWarning, ConvergenceWarning, ...) are allowed;
* a result has its labels on the input's index, pickles and unpickles to the same
  labels, and the same call with the same ``rng`` gives the same labels;
* with ``weights="exact"``: w >= 0, ||w||_1 <= wbound, ||w||_2 = 1 (see
  :func:`_weights_ok` for the two cases without a unit-norm answer).

The number of examples is bounded by the ``sparseclust-fuzz`` profile (the suite runs
in minutes on 2 cores); ``SPARSECLUST_FUZZ_PROFILE=sparseclust-fuzz-long`` runs more.
"""

from __future__ import annotations

import copy
import os
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import sparseclust as sc
from sparseclust.exceptions import SparseclustWarning

settings.register_profile(
    "sparseclust-fuzz",
    max_examples=16,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
settings.register_profile(
    "sparseclust-fuzz-long",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile(os.environ.get("SPARSECLUST_FUZZ_PROFILE", "sparseclust-fuzz"))

NAMES = ["a", "b c", "ü", 0, 7, "x0", "weight", "col-1"]
KINDS = [
    "float",
    "huge",
    "tiny",
    "Float64",
    "Int64",
    "bool",
    "string",
    "category",
    "datetime",
    "mixed",
    "constant",
    "duplicate",
]


def _column(kind: str, n: int, draw, prev: pd.Series | None) -> pd.Series:
    values = np.asarray(draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), float)
    if kind == "float":
        return pd.Series(values + np.linspace(0, 1, n))
    if kind == "huge":
        return pd.Series((values + 0.5) * 1e300)
    if kind == "tiny":
        return pd.Series((values + 0.5) * 1e-300)
    if kind == "Float64":
        return pd.Series(pd.array(values / 2, dtype="Float64"))
    if kind == "Int64":
        return pd.Series(pd.array(values.astype(int), dtype="Int64"))
    if kind == "bool":
        return pd.Series(values > 0)
    if kind == "string":
        return pd.Series(np.where(values > 0, "hi", "lo"), dtype="string")
    if kind == "category":
        return pd.Series(pd.Categorical(np.where(values > 0, "p", "q"), categories=["z", "q", "p"]))
    if kind == "datetime":
        return pd.Series(pd.Timestamp("2020-01-01") + pd.to_timedelta(values, unit="D"))
    if kind == "mixed":
        return pd.Series([v if v > 0 else "lo" for v in values], dtype=object)
    if kind == "constant":
        return pd.Series(np.full(n, 2.5))
    return prev.copy() if prev is not None else pd.Series(values)  # duplicate


@st.composite
def frames(draw, kinds: list[str] = KINDS, tame: bool = False) -> pd.DataFrame:
    """Odd frames; ``tame``: 5-12 rows and no infinity, so that most calls fit."""
    n = draw(st.sampled_from([5, 8, 12] if tame else [0, 1, 2, 3, 5, 8, 12, 12]))
    p = draw(st.integers(1, 5))
    kinds = draw(st.lists(st.sampled_from(kinds), min_size=p, max_size=p))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=p, max_size=p, unique=True))
    if p > 1 and draw(st.integers(0, 9)) == 0:  # a duplicated column name
        names[-1] = names[0]
    cols, prev = [], None
    for kind in kinds:
        col = _column(kind, n, draw, prev)
        cols.append(col)
        prev = col
    df = (
        pd.concat([c.reset_index(drop=True) for c in cols], axis=1)
        if n
        else pd.DataFrame({j: c for j, c in enumerate(cols)})
    )
    df.columns = names
    for _ in range(draw(st.integers(0, 3)) if n else 0):  # missing cells
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, p - 1))
        col = df.iloc[:, j]
        if col.dtype == bool:
            col = col.astype("boolean")
            df.isetitem(j, col)
        df.iloc[i, j] = np.nan if col.dtype == float else None if col.dtype == object else pd.NA
    if n and not tame and draw(st.integers(0, 7)) == 0:  # an infinity in a float column
        floats = [j for j in range(p) if df.iloc[:, j].dtype == float]
        if floats:
            df.iloc[draw(st.integers(0, n - 1)), floats[0]] = np.inf
    index = draw(st.sampled_from(["range", "shuffled", "repeated", "string", "multi"]))
    if index == "shuffled":
        df.index = np.random.default_rng(n).permutation(n) + 100
    elif index == "repeated":
        df.index = [i // 2 for i in range(n)]
    elif index == "string":
        df.index = [f"r{i}" for i in range(n)]
    elif index == "multi":
        df.index = pd.MultiIndex.from_arrays([[i % 2 for i in range(n)], list(range(n))])
    return df


def _y(df: pd.DataFrame) -> np.ndarray:
    return np.arange(len(df)) % 2


#: name -> (call on a frame with a seed, whether it returns a clustering result)
CALLS = {
    "craft": (lambda df, r: sc.craft(df, m=0.5, k=2, n_init=2, rng=r), True),
    "craft_lambda": (lambda df, r: sc.craft_lambda(df, k=2, rng=r), False),
    "dpmeans": (lambda df, r: sc.dpmeans(df, lam=4.0, rng=r), True),
    "dp_rf": (lambda df, r: sc.dp_rf(df, lam=4.0, n_init=1, rng=r), True),
    "entropy_clustering": (lambda df, r: sc.entropy_clustering(df, lam=1.0, n_init=1, rng=r), True),
    "farthest_first_lambda": (lambda df, r: sc.farthest_first_lambda(df, k=2, rng=r), False),
    "sparse_kmeans": (lambda df, r: sc.sparse_kmeans(df, 2, wbound=1.5, nstart=2, rng=r), True),
    "sparse_hclust": (lambda df, r: sc.sparse_hclust(df, wbound=1.5, k=2), True),
    "sparse_kmeans_path": (
        lambda df, r: sc.sparse_kmeans_path(df, 2, wbounds=[1.2, 1.5], nstart=2, rng=r),
        False,
    ),
    "kmeans_sparse_permute": (
        lambda df, r: sc.kmeans_sparse_permute(
            df, 2, nperms=2, wbounds=[1.2, 1.5], nstart=2, rng=r
        ),
        False,
    ),
    "hclust_sparse_permute": (
        lambda df, r: sc.hclust_sparse_permute(df, nperms=2, wbounds=[1.2, 1.5], rng=r),
        False,
    ),
    "covariate_clustering": (
        lambda df, r: sc.covariate_clustering(df, y=_y(df), nu=[0.1], sigma=1.0, rng=r),
        False,
    ),
}

NUMERIC = ["float", "tiny", "Float64", "Int64", "constant", "duplicate", "float"]
MIXED = [*NUMERIC, "bool", "string", "category"]
CATEGORICAL = ["bool", "string", "category", "duplicate"]
#: The kinds of a tame frame each function accepts.
TAME = {name: NUMERIC for name in CALLS} | {
    "craft": MIXED,
    "craft_lambda": MIXED,
    "dp_rf": MIXED,
    "entropy_clustering": CATEGORICAL,
}

#: Words a message may use for the data as a whole (its rows and columns), besides
#: the column names and the call's parameters.
DATA_WORDS = ("row", "column", "data", "observation", "covariate", "feature", "variable")
PARAMS = ("k", "m", "lam", "wbound", "wbounds", "nperms", "rng", "y", "nu", "sigma", "missing")


def _call(name: str, df: pd.DataFrame, seed: int):
    """(result or None, error or None, RuntimeWarnings and other foreign warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out, err = CALLS[name][0](df, seed), None
        except (ValueError, TypeError) as e:
            out, err = None, e
    foreign = [
        w for w in caught if not issubclass(w.category, SparseclustWarning | DeprecationWarning)
    ]
    return out, err, foreign


def _labels(res):
    labels = getattr(res, "labels", None)
    if labels is None and hasattr(res, "best"):
        labels = res.best.labels
    return labels


def _weights_ok(res, wbound: float) -> None:
    """w >= 0, ||w||_1 <= wbound, ||w||_2 = 1; except where the exact projection has no
    unit-norm answer (``project_weights``): more than wbound^2 features tied at the top
    (duplicated columns) share ``||w||_1 = wbound`` equally, and no between-cluster
    spread at all gives w = 0."""
    w = res.weights.to_numpy(dtype=float)
    assert np.isfinite(w).all()
    assert (w >= 0).all()
    assert w.sum() <= wbound + 1e-8
    norm = np.linalg.norm(w)
    assert norm <= 1 + 1e-8
    assert norm == pytest.approx(1.0, abs=1e-8) or w.sum() == pytest.approx(wbound) or not w.any()


@pytest.mark.parametrize("name", sorted(CALLS))
@PROFILE
@given(data=st.data())
def test_public_function_on_odd_frames(name, data):
    df = data.draw(st.one_of(frames(), frames(TAME[name], tame=True)), label="df")
    before = copy.deepcopy(df)
    res, err, foreign = _call(name, df, 0)
    # the caller's frame is never changed
    pd.testing.assert_frame_equal(df, before)
    assert not foreign, [f"{w.category.__name__}: {w.message}" for w in foreign]
    event("error" if err is not None else "result")
    if err is not None:
        msg = str(err)
        names = [str(c) for c in df.columns]
        assert (
            any(c in msg for c in names)
            or any(f"{p}=" in msg or f"{p} " in msg for p in PARAMS)
            or any(word in msg for word in DATA_WORDS)
        ), f"{type(err).__name__} names nothing: {msg}"
        return
    again, err2, _ = _call(name, df, 0)
    assert err2 is None
    labels = _labels(res)
    if labels is not None:
        assert labels.index.equals(df.index)
        pd.testing.assert_series_equal(_labels(again), labels)
        pd.testing.assert_series_equal(_labels(pickle.loads(pickle.dumps(res))), labels)
    elif isinstance(res, float):
        assert res == again
    if name == "sparse_kmeans" or name == "sparse_hclust":
        _weights_ok(res, 1.5)
