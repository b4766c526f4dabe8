"""Hypothesis invariants of the data front (``build_table``) on mixed-type frames."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.extra.pandas import column, data_frames, range_indexes

from sparseclust import DataWarning, build_table
from sparseclust._data.table import DROP_WARN_FRACTION

SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
POLICIES = ("raise", "drop", "native")
KIND = {
    "f": "numeric",
    "f2": "numeric",
    "i": "numeric",
    "b": "categorical",
    "s": "categorical",
    "c": "categorical",
}
#: The documented errors a frame of these dtypes may raise (all ValueError).
DOCUMENTED = (
    "data has no rows",
    "data has no columns",
    "are entirely missing",
    "are constant (one distinct value",
    "contain infinite values",
    "missing='raise': ",
    "missing='drop' leaves no data",
)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, width=64)


@st.composite
def mixed_frames(draw, min_rows: int = 2) -> pd.DataFrame:
    """Up to 40 rows x 6 columns: float, float, Int64, bool, str, category.

    Values come from ``data_frames``; then a few cells are blanked (NaN / <NA> /
    None) and, rarely, one float is made infinite, so that most frames load and
    the documented errors still appear.
    """
    base = draw(
        data_frames(
            columns=[
                column("f", dtype=float, elements=finite),
                column("f2", dtype=float, elements=finite),
                column("i", dtype=float, elements=st.integers(-3, 3).map(float)),
                column("b", dtype=bool),
                column("s", dtype=object, elements=st.sampled_from(["a", "b", "c"])),
                column("c", dtype=object, elements=st.sampled_from(["x", "y"])),
            ],
            index=range_indexes(min_size=min_rows, max_size=40),
        )
    )
    n = len(base)
    names = draw(st.lists(st.sampled_from(list(KIND)), unique=True, min_size=1, max_size=6))
    nullable = [c for c in names if c in ("f", "i", "s", "c")]
    if n and nullable:
        holes = draw(
            st.lists(st.tuples(st.integers(0, n - 1), st.sampled_from(nullable)), max_size=6)
        )
        for row, col in holes:
            base.iloc[row, base.columns.get_loc(col)] = None if col in "sc" else np.nan
        if draw(st.sampled_from(range(12))) == 5:  # rarely: an infinite value
            base.iloc[draw(st.integers(0, n - 1)), 0] = draw(st.sampled_from([np.inf, -np.inf]))
    df = pd.DataFrame(
        {
            "f": base["f"].to_numpy(),
            "f2": base["f2"].to_numpy(),
            "i": pd.array(base["i"].to_numpy(), dtype="Float64").astype("Int64"),
            "b": base["b"].to_numpy(dtype=bool),
            "s": pd.Series(base["s"].to_numpy(), dtype="str").to_numpy(),
            # declared categories in a non-sorted order, with an unused one
            "c": pd.Categorical(base["c"].to_numpy(), categories=["z", "y", "x"]),
        }
    )
    df["s"] = df["s"].astype("str")
    labels = draw(st.permutations(range(n))) if n else []
    return df[names].set_axis(pd.Index([100 + k for k in labels], name="key"), axis=0)


def load(df: pd.DataFrame, missing: str, allow_constant: bool = False):
    """(table or None, error or None, warnings caught)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            table = build_table(
                df, missing=missing, missing_choices=POLICIES, allow_constant=allow_constant
            )
            return table, None, caught
        except (ValueError, TypeError) as err:
            return None, err, caught


def assert_documented(err: Exception) -> None:
    assert type(err) is ValueError, repr(err)
    assert any(fragment in str(err) for fragment in DOCUMENTED), str(err)


def missing_cells(df: pd.DataFrame) -> np.ndarray:
    return df.isna().to_numpy().any(axis=1) if df.shape[1] else np.zeros(len(df), bool)


@SETTINGS
@given(
    df=st.one_of(mixed_frames(min_rows=0), mixed_frames(min_rows=4)),
    missing=st.sampled_from(POLICIES),
    allow_constant=st.booleans(),
)
def test_loads_or_raises_a_documented_error(df, missing, allow_constant):
    before = copy.deepcopy(df)
    dtypes = df.dtypes.copy()
    table, err, caught = load(df, missing, allow_constant)

    # the input is never changed, whatever happened
    pd.testing.assert_frame_equal(df, before)
    pd.testing.assert_series_equal(df.dtypes, dtypes)

    if err is not None:
        assert_documented(err)
        event(f"error: {next(f for f in DOCUMENTED if f in str(err))}")
        if "are constant" in str(err):
            assert not allow_constant
        if missing == "raise" and "missing='raise'" in str(err):
            assert missing_cells(df).any()
        return

    event(f"loaded ({missing}, {'with' if table.n_dropped else 'no'} dropped rows)")
    names = list(df.columns)
    num_names = [c for c in names if KIND[c] == "numeric"]
    cat_names = [c for c in names if KIND[c] == "categorical"]
    holes = missing_cells(df)

    # names and kinds, in data order
    assert table.names == names
    assert table.spec.kinds == {c: KIND[c] for c in names}
    assert table.numeric_names == num_names and table.categorical_names == cat_names

    # the dropped mask is exactly the rows with a missing cell under "drop"
    if missing == "drop":
        np.testing.assert_array_equal(table.dropped, holes)
    else:
        assert not table.dropped.any()
        assert missing == "native" or not holes.any()
    kept = ~table.dropped
    n_kept = int(kept.sum())
    assert table.n_obs == n_kept >= 1
    assert table.index.equals(df.index)
    assert table.kept_index.equals(df.index[kept])

    # warning only when more than the threshold was dropped
    data_warnings = [w for w in caught if issubclass(w.category, DataWarning)]
    assert len(caught) == len(data_warnings)
    assert bool(data_warnings) == (missing == "drop" and holes.mean() > DROP_WARN_FRACTION)

    # numeric block: float64, (n_kept, n_num), the input's values (NaN for missing)
    assert table.numeric.dtype == np.float64
    assert table.numeric.shape == (n_kept, len(num_names))
    for j, c in enumerate(num_names):
        expected = df[c].astype("Float64").to_numpy(dtype=np.float64, na_value=np.nan)[kept]
        np.testing.assert_array_equal(table.numeric[:, j], expected)
    assert not np.isinf(table.numeric).any()

    # codes: int64, within [-1, n_levels), decoding to the input's values
    assert table.codes.dtype == np.int64
    assert table.codes.shape == (n_kept, len(cat_names))
    for j, c in enumerate(cat_names):
        levels = table.levels[c]
        codes = table.codes[:, j]
        assert codes.min(initial=0) >= -1 and codes.max(initial=-1) < len(levels)
        if c == "b":
            assert list(levels) == [False, True]
        elif c == "c":
            assert list(levels) == ["z", "y", "x"]
        else:
            assert list(levels) == sorted(df[c].dropna().unique())
        values = df[c].to_numpy(dtype=object)[kept]
        present = codes >= 0
        assert list(np.asarray(levels, dtype=object)[codes[present]]) == list(values[present])
        assert pd.isna(values[~present]).all()
        if missing != "native":
            assert present.all()

    # the frame holds the kept rows of the input
    pd.testing.assert_frame_equal(table.frame, df.loc[kept], check_names=False)


@SETTINGS
@given(df=mixed_frames(), missing=st.sampled_from(POLICIES), data=st.data())
def test_row_order_equivariance(df, missing, data):
    order = data.draw(st.permutations(range(len(df))))
    shuffled = df.iloc[list(order)]
    first, err1, _ = load(df, missing, allow_constant=True)
    second, err2, _ = load(shuffled, missing, allow_constant=True)
    if err1 is not None or err2 is not None:
        # the same rows give the same verdict (messages only count, never list rows)
        assert err1 is not None and err2 is not None
        assert type(err1) is type(err2)
        assert str(err1) == str(err2)
        return
    # the same variables and levels
    assert first.names == second.names
    for c in first.categorical_names:
        assert list(first.levels[c]) == list(second.levels[c])
    # permuting the rows permutes the table rows (matched through the index labels)
    np.testing.assert_array_equal(first.dropped[list(order)], second.dropped)
    pos = pd.Index(first.kept_index).get_indexer(second.kept_index)
    assert (pos >= 0).all() and len(pos) == first.n_obs
    np.testing.assert_array_equal(first.numeric[pos], second.numeric)
    np.testing.assert_array_equal(first.codes[pos], second.codes)
    X1, names1, groups1 = first.to_numeric()
    X2, names2, groups2 = second.to_numeric()
    assert names1 == names2
    np.testing.assert_array_equal(groups1, groups2)
    np.testing.assert_array_equal(X1[pos], X2)


@SETTINGS
@given(df=mixed_frames())
def test_formula_dot_matches_plain_frame(df):
    plain, err1, _ = load(df, "native", allow_constant=True)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            via_formula = build_table(
                "~ .", data=df, missing="native", missing_choices=POLICIES, allow_constant=True
            )
            err2 = None
        except (ValueError, TypeError) as err:
            via_formula, err2 = None, err
    if err1 is not None:
        assert err2 is not None
        if df.shape[1]:
            assert type(err1) is type(err2)
        return
    assert err2 is None, err2
    assert via_formula.names == plain.names
    np.testing.assert_array_equal(via_formula.numeric, plain.numeric)
    np.testing.assert_array_equal(via_formula.codes, plain.codes)


@pytest.mark.parametrize("missing", POLICIES)
def test_strategy_smoke(missing):
    """A fixed frame of the strategy's shape loads under every policy."""
    df = pd.DataFrame(
        {
            "f": [1.0, 2.0, 3.0, 4.0],
            "i": pd.array([1, 2, 1, 3], dtype="Int64"),
            "b": [True, False, True, False],
            "s": pd.Series(["a", "b", "a", "c"], dtype="str"),
            "c": pd.Categorical(["x", "y", "x", "y"], categories=["z", "y", "x"]),
        }
    )
    t, err, _ = load(df, missing)
    assert err is None
    assert t.names == ["f", "i", "b", "s", "c"]
