"""Results on a non-unique row index (issue 22): every result type, every method that
touches rows (summary, profiles, to_frame, predict, cut, the plots, the HTML repr),
gives the numbers it gives on the same data with a unique index. Rows are aligned by
position (the table's ``dropped`` mask), never by index label; the ``<NA>`` of rows
dropped for missing values land on those rows, not on every row sharing their label."""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import sparseclust as sc
from sparseclust import plotting

N = 24
#: rows given a missing cell: row 3 shares its label with row 2, row 10 with row 11
#: (under the "pairs" index)
MISSING_ROWS = [3, 10]
INDEXES = {
    "unique": np.arange(100, 100 + N),
    "pairs": np.arange(N) // 2,
    "reversed_strings": np.repeat(list("lkjihgfedcba"), 2),
    "constant": np.zeros(N, dtype=np.int64),
}
DUPLICATED = [k for k in INDEXES if k != "unique"]


def _mixed() -> pd.DataFrame:
    r = np.random.default_rng(0)
    X = pd.DataFrame(r.normal(size=(N, 3)), columns=list("abc"))
    X.iloc[:12, 0] += 3.0
    X.iloc[:12, 1] -= 2.0
    X["g"] = pd.Categorical(np.where(np.arange(N) < 12, "u", "v"))
    X.loc[[0, 13], "g"] = ["v", "u"]
    return X


def _binary() -> pd.DataFrame:
    r = np.random.default_rng(1)
    first = np.arange(N) < 12
    flip = r.random((N, 3)) < 0.15
    return pd.DataFrame(
        {
            "g": pd.Categorical(np.where(first ^ flip[:, 0], "u", "v")),
            "h": (first ^ flip[:, 1]).astype(float),
            "i": (~first ^ flip[:, 2]).astype(float),
        }
    )


def _frame(kind: str, index: str, missing: bool) -> pd.DataFrame:
    X = _binary() if kind == "binary" else _mixed()
    if kind == "numeric":
        X = X[list("abc")]
    if missing:
        X.iloc[MISSING_ROWS, 1] = np.nan
    X.index = INDEXES[index]
    return X


def _y(index: str) -> pd.Series:
    return pd.Series(np.repeat(["p", "q"], N // 2), index=INDEXES[index], name="class")


#: name -> (data kind, fit(X, missing)); ``missing`` is None (complete data) or "drop"
FITS = {
    "craft": ("mixed", lambda X, m: sc.craft(X, k=2, n_init=4, rng=0, **m)),
    "dp_rf": ("mixed", lambda X, m: sc.dp_rf(X, k=2, n_init=4, rng=0, **m)),
    "entropy": ("binary", lambda X, m: sc.entropy_clustering(X, k=2, n_init=4, rng=0, **m)),
    "dpmeans": ("mixed", lambda X, m: sc.dpmeans(X, k=2, rng=0, **m)),
    "sparse_kmeans": ("numeric", lambda X, m: sc.sparse_kmeans(X, 2, wbound=1.3, rng=0, **m)),
    "sparse_hclust": ("numeric", lambda X, m: sc.sparse_hclust(X, k=2, wbound=1.3, **m)),
    "kmeans_permute": (
        "numeric",
        lambda X, m: sc.kmeans_sparse_permute(X, 2, wbounds=[1.2, 1.5], nperms=3, rng=0, **m),
    ),
    "hclust_permute": (
        "numeric",
        lambda X, m: sc.hclust_sparse_permute(X, k=2, wbounds=[1.2, 1.5], nperms=3, rng=0, **m),
    ),
    "covariate": (
        "numeric",
        lambda X, m: sc.covariate_clustering(X, y=_y_for(X), nu=[1.0, 0.1], sigma=1.0, rng=0, **m),
    ),
}
CLUSTERINGS = [k for k in FITS if k != "covariate"]


def _y_for(X: pd.DataFrame) -> pd.Series:
    return pd.Series(np.repeat(["p", "q"], N // 2), index=X.index, name="class")


@functools.cache
def _fit(name: str, index: str, missing: bool):
    kind, fit = FITS[name]
    return fit(_frame(kind, index, missing), {"missing": "drop"} if missing else {})


def _data(name: str, index: str, missing: bool) -> pd.DataFrame:
    return _frame(FITS[name][0], index, missing)


def _clustering(res):
    """The clustering result with rows (a permutation result's best fit)."""
    return res.best if isinstance(res, sc.PermuteResult) else res


def _assert_rows(got: pd.Series | pd.DataFrame, ref, index: str) -> None:
    """Same values in the same row order, on the caller's (duplicated) index."""
    np.testing.assert_array_equal(got.index.to_numpy(), INDEXES[index])
    pd.testing.assert_frame_equal(
        pd.DataFrame(got).reset_index(drop=True), pd.DataFrame(ref).reset_index(drop=True)
    )


def _drawn(obj) -> list[np.ndarray]:
    """Everything a figure draws as data: images, collections (offsets, values, colours,
    segments) and lines, axes by axes (tick labels, which name rows, left out)."""
    fig = obj if isinstance(obj, plt.Figure) else obj.figure
    out: list[np.ndarray] = []
    for ax in fig.axes:
        for im in ax.images:
            out.append(np.ma.filled(np.asarray(im.get_array(), dtype=float), np.nan))
        for c in ax.collections:
            out.append(np.asarray(c.get_offsets(), dtype=float))
            arr = c.get_array()
            if arr is not None:
                out.append(np.ma.filled(np.asarray(arr, dtype=float), np.nan))
            out.append(np.asarray(c.get_facecolors(), dtype=float))
            out.append(np.asarray(c.get_edgecolors(), dtype=float))
            if hasattr(c, "get_segments"):
                out += [np.asarray(s, dtype=float) for s in c.get_segments()]
        out += [np.asarray(line.get_xydata(), dtype=float) for line in ax.lines]
    plt.close(fig)
    return out


def _assert_same_drawing(a, b) -> None:
    da, db = _drawn(a), _drawn(b)
    assert len(da) == len(db)
    for x, y in zip(da, db):
        np.testing.assert_array_equal(x, y)


def _plots(res) -> dict:
    """Every plot of the result (name -> a zero-argument call)."""
    calls = {}
    for meth in (
        "plot",
        "plot_profiles",
        "plot_subspaces",
        "plot_objective",
        "plot_weights",
        "plot_clusters",
        "plot_dendrogram",
        "plot_path",
        "plot_hierarchy",
    ):
        if hasattr(res, meth):
            calls[meth] = getattr(res, meth)
    inner = _clustering(res)
    if hasattr(inner, "profiles"):
        calls["plotting.plot_profiles"] = functools.partial(plotting.plot_profiles, inner)
    if inner is not res:
        for meth in ("plot", "plot_weights", "plot_clusters", "plot_dendrogram"):
            if hasattr(inner, meth):
                calls[f"best.{meth}"] = getattr(inner, meth)
    return calls


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("missing", [False, True], ids=["complete", "drop"])
@pytest.mark.parametrize("index", DUPLICATED)
@pytest.mark.parametrize("name", list(FITS))
def test_summary_and_printing_as_on_a_unique_index(name, index, missing):
    res, ref = _fit(name, index, missing), _fit(name, "unique", missing)
    s, t = res.summary(), ref.summary()
    assert list(s.tables) == list(t.tables)
    for key in s.tables:
        pd.testing.assert_frame_equal(s.tables[key], t.tables[key])
    assert s.notes == t.notes
    assert str(s) == str(t) and s._repr_html_() == t._repr_html_()
    assert repr(res) == repr(ref) and res._repr_html_() == ref._repr_html_()
    inner, inner_ref = _clustering(res), _clustering(ref)
    if inner is not res:
        assert str(inner.summary()) == str(inner_ref.summary())
    if hasattr(inner, "profiles"):
        assert "profiles" in inner.summary().tables
        pd.testing.assert_frame_equal(inner.profiles(), inner_ref.profiles())
    if hasattr(inner, "selected_profiles"):
        pd.testing.assert_frame_equal(inner.selected_profiles(), inner_ref.selected_profiles())


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "drop"])
@pytest.mark.parametrize("index", DUPLICATED)
@pytest.mark.parametrize("name", CLUSTERINGS)
def test_labels_and_to_frame_by_position(name, index, missing):
    res, ref = _fit(name, index, missing), _fit(name, "unique", missing)
    _assert_rows(res.labels, ref.labels, index)
    inner, inner_ref = _clustering(res), _clustering(ref)
    _assert_rows(inner.to_frame(), inner_ref.to_frame(), index)
    if inner is not res:  # a permutation result's frame is its gap table
        pd.testing.assert_frame_equal(res.to_frame(), ref.to_frame())
    na = np.flatnonzero(res.labels.isna().to_numpy()).tolist()
    assert na == (MISSING_ROWS if missing else [])
    assert inner.n_dropped == len(na) and inner.n_obs == N - len(na)


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "drop"])
@pytest.mark.parametrize("index", DUPLICATED)
def test_hclust_cut_by_position(index, missing):
    for name in ("sparse_hclust", "hclust_permute"):
        res = _clustering(_fit(name, index, missing))
        ref = _clustering(_fit(name, "unique", missing))
        for k in (1, 3):
            _assert_rows(res.cut(k), ref.cut(k), index)
            na = np.flatnonzero(res.cut(k).isna().to_numpy()).tolist()
            assert na == (MISSING_ROWS if missing else [])
        pd.testing.assert_frame_equal(
            res.u_matrix().reset_index(drop=True).T.reset_index(drop=True),
            ref.u_matrix().reset_index(drop=True).T.reset_index(drop=True),
        )


@pytest.mark.parametrize("index", DUPLICATED)
@pytest.mark.parametrize("name", [n for n in FITS if "hclust" not in n])
def test_predict_on_a_duplicated_index(name, index):
    res, ref = _fit(name, index, False), _fit(name, "unique", False)
    inner, inner_ref = _clustering(res), _clustering(ref)
    new, new_ref = _data(name, index, False), _data(name, "unique", False)
    _assert_rows(inner.predict(new), inner_ref.predict(new_ref), index)
    if name == "covariate":
        _assert_rows(res.predict_proba(new), ref.predict_proba(new_ref), index)
        return
    _assert_rows(inner.predict(new), inner.labels, index)  # the fit's rows, refound
    # rows of new data dropped for missing values: <NA> on those rows only
    new, new_ref = _data(name, index, True), _data(name, "unique", True)
    got = inner.predict(new, missing="drop")
    _assert_rows(got, inner_ref.predict(new_ref, missing="drop"), index)
    assert np.flatnonzero(got.isna().to_numpy()).tolist() == MISSING_ROWS


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "drop"])
@pytest.mark.parametrize("index", DUPLICATED)
@pytest.mark.parametrize("name", list(FITS))
def test_plots_as_on_a_unique_index(name, index, missing):
    res, ref = _fit(name, index, missing), _fit(name, "unique", missing)
    calls, calls_ref = _plots(res), _plots(ref)
    assert calls.keys() == calls_ref.keys() and calls
    for key in calls:
        _assert_same_drawing(calls[key](), calls_ref[key]())


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "drop"])
@pytest.mark.parametrize("index", DUPLICATED)
def test_dendrogram_colours_by_position(index, missing):
    """``y`` in data order (all rows or the kept ones), or a Series on the data's
    (duplicated) index, colours the leaves as on a unique index; a Series on another
    index is read in data order, not aligned on labels that repeat."""
    res, ref = _fit("sparse_hclust", index, missing), _fit("sparse_hclust", "unique", missing)
    y = np.tile(["p", "q", "r"], N // 3)
    kept = np.ones(N, dtype=bool)
    if missing:
        kept[MISSING_ROWS] = False
    for yy, yy_ref in (
        (y, y),
        (y[kept], y[kept]),
        (pd.Series(y, index=INDEXES[index]), pd.Series(y, index=INDEXES["unique"])),
        (pd.Series(y), pd.Series(y)),
    ):
        _assert_same_drawing(res.plot_dendrogram(y=yy), ref.plot_dendrogram(y=yy_ref))
        _assert_same_drawing(
            sc.color_dendrogram(res, yy, labels=False),
            sc.color_dendrogram(ref, yy_ref, labels=False),
        )
        _assert_same_drawing(res.plot(y=yy), ref.plot(y=yy_ref))


def test_issue_reproducer():
    """The issue's reproducer: summary() and plot_profiles() on a duplicated index."""
    r = np.random.default_rng(0)
    X = pd.DataFrame(r.normal(size=(24, 3)), columns=list("abc"))
    X.index = np.arange(24) // 2
    res = sc.sparse_kmeans(X, 2, wbound=1.3, rng=0)
    prof = res.summary().tables["profiles"]
    lab = res.labels.to_numpy(dtype=float)
    for k in (0, 1):
        rows = X.to_numpy()[lab == k]
        for j, v in enumerate(X.columns):
            if (v, "mean") in prof.index:
                assert prof.loc[(v, "mean"), k] == pytest.approx(rows[:, j].mean())
    plotting.plot_profiles(res)
    res.plot_clusters()


def test_kept_labels_by_position_and_length_checked():
    """Profiles take the kept rows' labels by position; a Series of another length is
    an error naming both lengths (it cannot be lined up by position)."""
    from sparseclust._results.base import kept_labels

    res = _fit("dpmeans", "pairs", True)
    lab = kept_labels(res.table, res.labels)
    np.testing.assert_array_equal(lab, np.delete(res.labels.to_numpy(dtype=float), MISSING_ROWS))
    with pytest.raises(ValueError, match="labels has 22 entries but the data has 24 rows"):
        kept_labels(res.table, res.labels.dropna())
