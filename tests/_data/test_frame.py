"""``ColumnTable`` / ``VariableSpec`` layout, ``transform_like`` and input immutability."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pandas as pd
import pytest

from sparseclust import ColumnTable, DataWarning, build_table
from sparseclust._data.stages import (
    ColumnTypes,
    Encoded,
    InputData,
    Overrides,
    Variables,
    apply_formula,
    apply_missing,
    check_kept_rows,
    detect_types,
    drop_columns,
    encode_columns,
    read_input,
    resolve_overrides,
)
from sparseclust._data.table import assemble_table, transform_like

NATIVE = {"missing": "native", "missing_choices": ("raise", "drop", "native")}


@pytest.fixture
def mixed() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "g": pd.Categorical(["b", "a", "b", "c"], categories=["a", "b", "c", "d"]),
            "x": [1.0, 2.0, 3.0, 5.0],
            "flag": [True, False, False, True],
            "n": pd.array([4, 2, 2, 1], dtype="Int64"),
            "s": ["p", "q", "q", "p"],
        },
        index=["r1", "r2", "r3", "r4"],
    )


# ---------------------------------------------------------------- table layout
def test_blocks_and_names(mixed):
    t = build_table(mixed)
    assert isinstance(t, ColumnTable)
    assert t.names == ["g", "x", "flag", "n", "s"]  # data order
    assert t.numeric_names == ["x", "n"]
    assert t.categorical_names == ["g", "flag", "s"]
    assert t.numeric.dtype == np.float64 and t.numeric.shape == (4, 2)
    assert t.codes.dtype == np.int64 and t.codes.shape == (4, 3)
    np.testing.assert_array_equal(t.numeric, [[1, 4], [2, 2], [3, 2], [5, 1]])
    np.testing.assert_array_equal(t.codes, [[1, 1, 0], [0, 0, 1], [1, 0, 1], [2, 1, 0]])
    assert t.n_obs == 4 and t.n_dropped == 0
    assert t.index.equals(mixed.index)
    assert t.numeric.flags.c_contiguous and t.codes.flags.c_contiguous


def test_to_numeric_one_hot_layout(mixed):
    t = build_table(mixed)
    X, names, groups = t.to_numeric(one_hot=True)
    assert names == [
        "x",
        "n",
        "g[a]",
        "g[b]",
        "g[c]",
        "g[d]",
        "flag[False]",
        "flag[True]",
        "s[p]",
        "s[q]",
    ]
    # groups index spec.names: g=0, x=1, flag=2, n=3, s=4
    assert groups.tolist() == [1, 3, 0, 0, 0, 0, 2, 2, 4, 4]
    assert groups.dtype == np.int64
    expected = np.array(
        [
            [1, 4, 0, 1, 0, 0, 0, 1, 1, 0],
            [2, 2, 1, 0, 0, 0, 1, 0, 0, 1],
            [3, 2, 0, 1, 0, 0, 1, 0, 0, 1],
            [5, 1, 0, 0, 1, 0, 0, 1, 1, 0],
        ],
        dtype=float,
    )
    np.testing.assert_array_equal(X, expected)
    assert X.dtype == np.float64 and X.flags.c_contiguous
    # full one-hot: every categorical block sums to one per row (no reference level)
    for var in (0, 2, 4):
        np.testing.assert_array_equal(X[:, groups == var].sum(axis=1), 1.0)


def test_to_numeric_returns_a_copy():
    # bug fixed: with numeric variables only, X *was* table.numeric, so scaling X in
    # place (as the dpmeans design step does) changed the table
    t = build_table(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [3.0, 1.0, 2.0]}))
    X, names, groups = t.to_numeric()
    assert not np.shares_memory(X, t.numeric)
    X[:] = 0.0
    np.testing.assert_array_equal(t.numeric[:, 0], [1.0, 2.0, 3.0])
    assert names == ["a", "b"] and groups.tolist() == [0, 1]


def test_to_numeric_without_one_hot():
    t = build_table(pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 1.0]}))
    X, _, _ = t.to_numeric(one_hot=False)
    np.testing.assert_array_equal(X, t.numeric)
    t = build_table(pd.DataFrame({"a": [1.0, 2.0], "g": ["x", "y"]}))
    with pytest.raises(
        ValueError,
        match=r"one_hot=False needs numeric variables only; \['g'\] are categorical\. Use "
        r"one_hot=True, or read them as numbers with numeric=\[\.\.\.\]\.",
    ):
        t.to_numeric(one_hot=False)


def test_to_numeric_categorical_only():
    t = build_table(pd.DataFrame({"g": ["x", "y", "x"]}))
    X, names, groups = t.to_numeric()
    assert names == ["g[x]", "g[y]"]
    np.testing.assert_array_equal(X, [[1, 0], [0, 1], [1, 0]])


def test_native_missing_categorical_gives_nan_row():
    df = pd.DataFrame({"a": [1.0, 2.0, np.nan, 4.0], "g": ["x", None, "y", "x"]})
    t = build_table(df, **NATIVE)
    assert t.n_dropped == 0 and t.n_obs == 4
    np.testing.assert_array_equal(t.codes[:, 0], [0, -1, 1, 0])
    X, names, _ = t.to_numeric()
    assert names == ["a", "g[x]", "g[y]"]
    np.testing.assert_array_equal(
        X, [[1.0, 1.0, 0.0], [2.0, np.nan, np.nan], [np.nan, 0.0, 1.0], [4.0, 1.0, 0.0]]
    )


# ---------------------------------------------------------- dropping, expand
@pytest.fixture
def holes() -> pd.DataFrame:
    return pd.DataFrame(
        {"a": [1.0, np.nan, 3.0, 4.0, 5.0], "g": ["x", "y", None, "y", "x"]},
        index=pd.Index(list("pqrst"), name="key"),
    )


def test_dropped_mask(holes):
    with pytest.warns(DataWarning, match=r"dropped 2 of 5 rows \(40%\)"):
        t = build_table(holes, missing="drop")
    assert t.dropped.dtype == bool
    assert t.dropped.tolist() == [False, True, True, False, False]
    assert t.n_dropped == 2 and t.n_obs == 3
    assert t.index.equals(holes.index)  # the full index
    assert t.kept_index.tolist() == ["p", "s", "t"]
    assert t.frame.index.tolist() == ["p", "s", "t"]
    np.testing.assert_array_equal(t.numeric[:, 0], [1.0, 4.0, 5.0])
    np.testing.assert_array_equal(t.codes[:, 0], [0, 1, 0])
    assert list(t.levels["g"]) == ["x", "y"]  # levels seen before dropping
    assert t.missing == "drop"


def test_expand_integers(holes):
    with pytest.warns(DataWarning):
        t = build_table(holes, missing="drop")
    out = t.expand(np.array([2, 0, 1]))
    assert str(out.dtype) == "Int64"
    assert out.index.equals(holes.index)
    assert out.tolist() == [2, pd.NA, pd.NA, 0, 1]


def test_expand_floats_bools_and_objects(holes):
    with pytest.warns(DataWarning):
        t = build_table(holes, missing="drop")
    f = t.expand([0.5, 1.5, 2.5])
    assert f.dtype == np.float64
    np.testing.assert_array_equal(f.to_numpy(), [0.5, np.nan, np.nan, 1.5, 2.5])
    b = t.expand(np.array([True, False, True]))
    assert str(b.dtype) == "boolean"
    assert b.tolist() == [True, pd.NA, pd.NA, False, True]
    # bug fixed: non-numeric values could not be expanded (TypeError from pandas)
    o = t.expand(["u", "v", "w"], fill=None)
    assert o.tolist() == ["u", None, None, "v", "w"]


def test_expand_length_checked(holes):
    with pytest.warns(DataWarning):
        t = build_table(holes, missing="drop")
    with pytest.raises(
        ValueError, match=r"values must be 1-D with one entry per kept row \(3\); got shape \(5,\)"
    ):
        t.expand(np.arange(5))


def test_nothing_dropped_without_missing(mixed):
    t = build_table(mixed, missing="drop")
    assert not t.dropped.any()
    assert t.expand(np.arange(4)).tolist() == [0, 1, 2, 3]


# ------------------------------------------------------------- transform_like
def test_transform_like_same_levels(mixed):
    fit = build_table(mixed)
    new = pd.DataFrame(
        {
            "s": ["q", "p"],
            "n": [7, 8],  # plain int64 where the fit had Int64
            "flag": [False, False],
            "x": [10.0, -1.0],
            "g": pd.Categorical(["d", "a"], categories=["d", "a"]),  # other category order
            "extra": ["ignored", "too"],
        },
        index=[100, 200],
    )
    t = transform_like(fit.spec, new)
    assert t.spec is fit.spec
    assert t.names == fit.names
    np.testing.assert_array_equal(t.numeric, [[10.0, 7.0], [-1.0, 8.0]])
    # codes refer to the fitted levels, whatever the new data's category order
    np.testing.assert_array_equal(t.codes, [[3, 0, 1], [0, 0, 0]])
    assert t.index.tolist() == [100, 200]
    X, names, _ = t.to_numeric()
    assert names == fit.to_numeric()[1]  # same layout as the fit


def test_transform_like_subset_of_levels_keeps_all_levels():
    fit = build_table(pd.DataFrame({"g": ["a", "b", "c"], "x": [1.0, 2.0, 3.0]}))
    t = transform_like(fit.spec, pd.DataFrame({"g": ["c"], "x": [0.0]}))
    X, names, _ = t.to_numeric()
    assert names == ["x", "g[a]", "g[b]", "g[c]"]
    np.testing.assert_array_equal(X, [[0.0, 0.0, 0.0, 1.0]])


def test_transform_like_unseen_level(mixed):
    fit = build_table(mixed)
    new = mixed.assign(s=["p", "zz", "q", "p"])
    with pytest.raises(
        ValueError,
        match=r"Column 's' has values not among its levels: \['zz'\] \(levels: \['p', 'q'\]\)\. "
        r"The fit saw only these levels",
    ):
        transform_like(fit.spec, new)


def test_transform_like_missing_columns(mixed):
    fit = build_table(mixed)
    with pytest.raises(
        ValueError,
        match=r"newdata lacks columns \['flag', 's'\] used in the fit; it has \['g', 'x', 'n'\]\.",
    ):
        transform_like(fit.spec, mixed[["g", "x", "n"]])


def test_transform_like_missing_values(mixed):
    fit = build_table(mixed)
    new = mixed.assign(x=[np.nan, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"missing='raise': 1 of 4 rows of newdata"):
        transform_like(fit.spec, new)
    t = transform_like(fit.spec, new, missing="drop")
    assert t.dropped.tolist() == [True, False, False, False]
    assert t.numeric.shape == (3, 2)
    assert t.expand(np.array([0, 1, 2])).tolist() == [pd.NA, 0, 1, 2]
    t = transform_like(fit.spec, new, missing="native")
    assert np.isnan(t.numeric[0, 0]) and t.n_obs == 4


def test_transform_like_array_spec():
    fit = build_table(np.array([[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]]))
    t = transform_like(fit.spec, np.array([[9.0, 8.0]]))
    assert t.names == ["x0", "x1"]
    np.testing.assert_array_equal(t.numeric, [[9.0, 8.0]])


def test_transform_like_formula_spec(mixed):
    def centred(v):
        return v - 2.0

    fit = build_table("~ centred(x) + C(n) + s", data=mixed)
    assert fit.names == ["centred(x)", "n", "s"]
    new = pd.DataFrame({"x": [4.0], "n": [2], "s": ["q"], "g": ["ignored"]})
    t = transform_like(fit.spec, new)
    np.testing.assert_array_equal(t.numeric, [[2.0]])
    np.testing.assert_array_equal(t.codes, [[list(fit.levels["n"]).index(2), 1]])
    with pytest.raises(ValueError, match=r"newdata lacks columns \['x'\] used by the formula"):
        transform_like(fit.spec, new.drop(columns="x"))


# ----------------------------------------------------------- immutability
def frame_snapshot(df: pd.DataFrame):
    return copy.deepcopy(df), list(df.columns), df.dtypes.copy(), df.index.copy()


def assert_unchanged(df: pd.DataFrame, snapshot) -> None:
    before, columns, dtypes, index = snapshot
    pd.testing.assert_frame_equal(df, before)
    assert list(df.columns) == columns
    pd.testing.assert_series_equal(df.dtypes, dtypes)
    pd.testing.assert_index_equal(df.index, index)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: build_table(d, missing="drop"),
        lambda d: build_table(d, numeric=["s"], categorical=["x"], missing="drop"),
        lambda d: build_table("~ . - s - n + np.log(x) + C(n)", data=d, missing="drop"),
        lambda d: build_table("x ~ .", data=d, response=True, missing="drop"),
        lambda d: build_table(d, **NATIVE),
    ],
    ids=["detect", "overrides", "formula", "response", "native"],
)
def test_input_frame_never_mutated(call):
    df = pd.DataFrame(
        {
            "x": [1.0, np.nan, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0],
            "s": ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"],
            "n": pd.array([1, 2, 3, None, 1, 2, 3, 1, 2, 3, 1], dtype="Int64"),
            "g": pd.Categorical(list("abcabcabcab"), categories=list("cba")),
            "f": [True, False] * 5 + [True],
        },
        index=pd.Index(range(100, 111), name="id"),
    )
    snapshot = frame_snapshot(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)  # 2 of 11 rows dropped
        t = call(df)
    # writing into the table's arrays and frame does not reach the input
    t.numeric[...] = -1.0
    t.codes[...] = 0
    t.frame.iloc[0, 0] = t.frame.iloc[1, 0]
    t.to_numeric()[0][...] = 3.0
    assert_unchanged(df, snapshot)


def test_transform_like_never_mutates(mixed):
    fit = build_table(mixed)
    new = mixed.assign(x=[np.nan, 1.0, 2.0, 3.0])
    snapshot = frame_snapshot(new)
    transform_like(fit.spec, new, missing="drop")
    assert_unchanged(new, snapshot)


def test_arrays_never_mutated():
    arr = np.array([[1.0, 2.0], [np.nan, 3.0], [4.0, 9.0], [5.0, 1.0]])
    before = arr.copy()
    with pytest.warns(DataWarning):
        t = build_table(arr, missing="drop")
    t.numeric[...] = 0.0
    t.frame.iloc[0, 0] = 42.0
    X, _, _ = t.to_numeric()
    X[...] = 7.0
    np.testing.assert_array_equal(arr, before)
    obj = np.array([["a", 1.0], ["b", 2.0], ["a", 3.0]], dtype=object)
    obj_before = obj.copy()
    build_table(obj)
    np.testing.assert_array_equal(obj, obj_before)


def test_series_and_dict_inputs():
    s = pd.Series([1.0, 2.0, 4.0], name="v", index=[3, 1, 2])
    t = build_table(s)
    assert t.names == ["v"] and t.index.tolist() == [3, 1, 2]
    t = build_table({"p": [1.0, 2.0], "q": ["x", "y"]})
    assert t.names == ["p", "q"]


def test_array_column_names_and_string_arrays():
    t = build_table(np.array([["a", "x"], ["b", "y"], ["a", "y"]]))
    assert t.names == ["x0", "x1"]
    assert t.spec.kinds == {"x0": "categorical", "x1": "categorical"}
    assert list(t.levels["x1"]) == ["x", "y"]


def test_spec_equality(mixed):
    # bug fixed: == compared the dicts of Index objects and raised "truth value ... ambiguous"
    a = build_table(mixed).spec
    b = build_table(mixed.iloc[::-1]).spec
    assert a == b
    assert a != build_table(mixed, categorical=["n"]).spec
    assert a != build_table(mixed.assign(s=["p", "q", "r", "p"])).spec
    assert a != "spec"
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)


# -------------------------------------------------------- the stages, one by one
def test_stage_read_input():
    inp = read_input(np.array([[1.0, 2.0], [3.0, 4.0]]), None)
    assert isinstance(inp, InputData) and inp.formula is None
    assert inp.frame.columns.tolist() == ["x0", "x1"]
    df = pd.DataFrame({"a": [1.0], 1: [2.0]})
    inp = read_input("~ a", df)
    assert inp.formula == "~ a" and inp.frame is df  # columns not renamed yet
    with pytest.raises(TypeError, match="needs its data"):
        read_input("~ a", None)
    with pytest.raises(TypeError, match="data= is for formulas"):
        read_input(df, df)
    with pytest.raises(ValueError, match="Duplicated column names"):
        read_input(pd.DataFrame([[1, 2]], columns=[1, "1"]), None)


def test_stage_apply_formula():
    df = pd.DataFrame({"a": [1.0, 2.0, 4.0], "g": ["u", "v", "u"], 3: [0, 1, 0]})
    var = apply_formula(read_input(df, None))
    assert isinstance(var, Variables) and not var.from_formula
    assert list(var.frame.columns) == ["a", "g", "3"] and var.response is None
    var = apply_formula(read_input("g ~ np.log(a)", df), response=True)
    assert var.from_formula and var.inputs == ("a",)
    assert var.response.tolist() == ["u", "v", "u"]
    assert var.parsed.codes == {"np.log(a)": "np.log(a)"}
    var = apply_formula(read_input(df, None), response=True, y=[0, 1, 1])
    assert var.response.name == "y" and var.response.index.equals(df.index)
    with pytest.raises(ValueError, match="takes no response"):
        apply_formula(read_input(df, None), y=[0, 1, 1])
    with pytest.raises(ValueError, match="data has no rows"):
        apply_formula(read_input(df.iloc[:0], None))


def test_stage_resolve_overrides():
    ov = resolve_overrides(["a", "b", "c"], ["a"], ["b"], {"c": "categorical"})
    assert isinstance(ov, Overrides)
    assert ov.kinds == {"c": "categorical", "a": "categorical", "b": "numeric"}
    assert ov.reasons == {"c": "C()", "a": "categorical=", "b": "numeric="}
    with pytest.raises(ValueError, match=r"in both categorical= and numeric="):
        resolve_overrides(["a"], ["a"], ["a"])
    with pytest.raises(ValueError, match=r"'c' is C\(c\) in the formula but listed in numeric="):
        resolve_overrides(["c"], None, ["c"], {"c": "categorical"})


def test_stage_detect_types(mixed):
    types = detect_types(mixed, resolve_overrides(list(mixed.columns), numeric=["flag"]))
    assert isinstance(types, ColumnTypes)
    assert types.numeric_names == ["x", "flag", "n"]
    assert types.categorical_names == ["g", "s"]
    assert types.plain == frozenset({"x"})  # float64: one float block, no Series work
    assert [i.reason for i in types.infos] == [
        "detected",
        "detected",
        "numeric=",
        "detected",
        "detected",
    ]
    with pytest.raises(TypeError, match="clusters numeric data only"):
        detect_types(mixed, Overrides(), allow_categorical=False)
    stamps = pd.DataFrame({"t": pd.to_datetime(["2020-01-01", "2020-01-02"])})
    with pytest.raises(TypeError, match="unsupported dtypes"):
        detect_types(stamps, Overrides())
    ok = detect_types(stamps, resolve_overrides(["t"], categorical=["t"]))
    assert ok.categorical_names == ["t"]


def test_stage_encode_columns(mixed):
    types = detect_types(mixed, Overrides())
    enc = encode_columns(mixed, types, given_levels={"s": ["q", "p", "r"]})
    assert isinstance(enc, Encoded)
    assert enc.numeric_names == ("x", "n") and enc.categorical_names == ("g", "flag", "s")
    np.testing.assert_array_equal(enc.numeric, [[1, 4], [2, 2], [3, 2], [5, 1]])
    assert list(enc.levels["s"]) == ["q", "p", "r"]  # given levels, in their order
    np.testing.assert_array_equal(enc.codes[:, 2], [1, 0, 0, 1])
    assert not enc.dropped.any() and enc.dropped.size == 4
    inf = pd.DataFrame({"v": [1.0, np.inf]})
    with pytest.raises(ValueError, match="contain infinite values"):
        encode_columns(inf, detect_types(inf, Overrides()))


def test_stage_apply_missing():
    df = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0], "g": ["u", "v", None, "v"]})
    enc = encode_columns(df, detect_types(df, Overrides()))
    kept = apply_missing(enc, missing="native")
    assert kept is enc
    with pytest.warns(DataWarning, match="dropped 2 of 4 rows"):
        kept = apply_missing(enc, missing="drop")
    assert kept.dropped.tolist() == [False, True, True, False]
    np.testing.assert_array_equal(kept.numeric.ravel(), [1.0, 4.0])
    with pytest.raises(ValueError, match="pass missing='drop' or missing='native'"):
        apply_missing(enc, missing="raise", missing_choices=("raise", "drop", "native"))
    y = pd.Series([1, None, 2, 3], name="cls")
    with pytest.raises(ValueError, match="the response 'cls' has 1 missing values"):
        apply_missing(enc, missing="native", response=y)


def test_stage_check_kept_rows():
    df = pd.DataFrame({"a": [1.0, 1.0, 2.0], "g": ["u", "u", "u"]})
    enc = encode_columns(df, detect_types(df, Overrides()))
    assert check_kept_rows(enc, ["a", "g"], constant="keep") == []
    assert check_kept_rows(enc, ["a", "g"], constant="drop") == ["g"]
    with pytest.raises(ValueError, match=r"Columns \['g'\] are constant"):
        check_kept_rows(enc, ["a", "g"])
    # named in a formula (not brought in by '.'): asked for, so an error even under "drop"
    with pytest.raises(ValueError, match=r"Columns \['g'\] are constant"):
        check_kept_rows(enc, ["a", "g"], constant="drop", formula=True, dotted=("a",))
    assert check_kept_rows(enc, ["a", "g"], constant="drop", formula=True, dotted=("a", "g"))
    with pytest.raises(ValueError, match="n_obs=3 must be >= 4; pass more rows."):
        check_kept_rows(enc, ["a", "g"], min_rows=4, constant="keep")


def test_stage_drop_columns():
    df = pd.DataFrame({"a": [1.0, 1.0, 2.0], "k": [3.0, 3.0, 3.0], "g": ["u", "u", "u"]})
    var = apply_formula(read_input("~ .", df))
    types = detect_types(var.frame, Overrides())
    enc = encode_columns(var.frame, types)
    with pytest.warns(DataWarning, match=r"Columns \['k', 'g'\] are constant"):
        var2, types2, enc2 = drop_columns(var, types, enc, ["k", "g"])
    assert types2.names == ["a"] and enc2.numeric.shape == (3, 1) and enc2.codes.shape == (3, 0)
    assert list(var2.frame.columns) == ["a"] and set(var2.parsed.codes) == {"a"}
    assert list(var.frame.columns) == ["a", "k", "g"]  # the stage's input is not changed
    with pytest.raises(ValueError, match="every column is constant"):
        drop_columns(var, types, enc, ["a", "k", "g"])


def test_stage_assemble_table(mixed):
    var = apply_formula(read_input(mixed, None))
    types = detect_types(var.frame, Overrides())
    enc = encode_columns(var.frame, types)
    t = assemble_table(var, types, enc, missing="raise")
    ref = build_table(mixed)
    assert t.spec == ref.spec and t.index.equals(ref.index)
    np.testing.assert_array_equal(t.numeric, ref.numeric)
    np.testing.assert_array_equal(t.codes, ref.codes)
    pd.testing.assert_frame_equal(t.frame, ref.frame)
