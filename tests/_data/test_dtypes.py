"""The detection table of ``sparseclust._data.dtypes`` (module docstring), through ``build_table``.

Expected values are written out by hand from the table: the kind, the reason, the
levels (in order) and the numeric values (float64, NaN for missing).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from sparseclust import DataWarning, build_table
from sparseclust._data.dtypes import (
    detect_kind,
    encode_categorical,
    to_float,
    unsupported_reason,
)

NATIVE = {"missing": "native", "missing_choices": ("raise", "drop", "native")}


def one(column, **kwargs):
    """build_table on a frame with the column ``c`` plus a numeric helper ``z``."""
    df = pd.DataFrame({"c": column})
    df["z"] = np.arange(len(df), dtype=float)
    return build_table(df, **kwargs)


def info(table, name="c"):
    return table.spec.to_frame().loc[name]


def num(table, name="c"):
    return table.numeric[:, table.numeric_names.index(name)]


def codes(table, name="c"):
    return table.codes[:, table.categorical_names.index(name)]


# ------------------------------------------------------------------- numeric
@pytest.mark.parametrize(
    "dtype",
    ["float16", "float32", "float64", "int8", "int16", "int32", "int64"]
    + ["uint8", "uint16", "uint32", "uint64"],
)
def test_numpy_numbers_are_numeric(dtype):
    t = one(np.array([3, 1, 2], dtype=dtype))
    row = info(t)
    assert (row["kind"], row["reason"], row["dtype"]) == ("numeric", "detected", dtype)
    assert t.numeric.dtype == np.float64
    np.testing.assert_array_equal(num(t), [3.0, 1.0, 2.0])
    assert t.codes.shape == (3, 0)


@pytest.mark.parametrize("dtype", ["Int8", "Int64", "UInt8", "UInt32", "Float32", "Float64"])
def test_nullable_numbers_are_numeric_with_na_missing(dtype):
    column = pd.array([4, None, 2, 7], dtype=dtype)
    t = one(column, **NATIVE)
    assert info(t)["kind"] == "numeric"
    assert info(t)["dtype"] == dtype
    np.testing.assert_array_equal(num(t), [4.0, np.nan, 2.0, 7.0])
    with pytest.raises(ValueError, match=r"\(per column: \{'c': 1\}\)"):
        one(column)
    with pytest.warns(DataWarning, match="dropped 1 of 4 rows"):
        dropped = one(column, missing="drop")
    np.testing.assert_array_equal(num(dropped), [4.0, 2.0, 7.0])
    np.testing.assert_array_equal(dropped.dropped, [False, True, False, False])


def test_integers_are_numeric_whatever_their_cardinality():
    t = one([0, 1, 0, 1, 1])  # no cardinality heuristic
    assert info(t)["kind"] == "numeric"


def test_sparse_columns_read_as_their_dense_subtype():
    t = one(pd.arrays.SparseArray([0.0, 1.5, 0.0, 2.0]))
    assert info(t)["kind"] == "numeric"
    np.testing.assert_array_equal(num(t), [0.0, 1.5, 0.0, 2.0])
    t = one(pd.arrays.SparseArray([True, False, False]))
    assert info(t)["kind"] == "categorical"
    assert list(t.levels["c"]) == [False, True]


# ---------------------------------------------------------------- categorical
def test_bool_is_categorical_false_true():
    t = one([True, False, True])
    row = info(t)
    assert (row["kind"], row["reason"], row["n_levels"]) == ("categorical", "detected", 2)
    assert list(t.levels["c"]) == [False, True]
    np.testing.assert_array_equal(codes(t), [1, 0, 1])


def test_bool_levels_even_when_only_one_value_seen():
    t = one([True, True, True], allow_constant=True)
    assert list(t.levels["c"]) == [False, True]
    np.testing.assert_array_equal(codes(t), [1, 1, 1])


def test_nullable_boolean_is_categorical_with_na_missing():
    t = one(pd.array([True, None, False], dtype="boolean"), **NATIVE)
    assert info(t)["kind"] == "categorical"
    assert info(t)["dtype"] == "boolean"
    assert list(t.levels["c"]) == [False, True]
    np.testing.assert_array_equal(codes(t), [1, -1, 0])


def test_unordered_category_keeps_declared_categories_including_unused():
    column = pd.Categorical(["lo", "hi", "lo", None], categories=["mid", "lo", "hi"])
    t = one(column, **NATIVE)
    row = info(t)
    assert (row["kind"], row["reason"], row["n_levels"], row["ordered"]) == (
        "categorical",
        "detected",
        3,
        False,
    )
    assert list(t.levels["c"]) == ["mid", "lo", "hi"]  # declared order, unused "mid" kept
    np.testing.assert_array_equal(codes(t), [1, 2, 1, -1])


def test_ordered_category():
    column = pd.Categorical(
        ["high", "low", "mid", "low"], categories=["low", "mid", "high"], ordered=True
    )
    t = one(column)
    row = info(t)
    assert row["kind"] == "categorical"
    assert bool(row["ordered"]) is True
    assert t.spec.columns[0].ordered is True
    assert list(t.levels["c"]) == ["low", "mid", "high"]
    np.testing.assert_array_equal(codes(t), [2, 0, 1, 0])
    # the flag describes the categorical reading only
    assert bool(info(one(column, numeric=["c"]))["ordered"]) is False


def test_numeric_category_is_categorical_by_default():
    t = one(pd.Categorical([10, 20, 10]))
    assert info(t)["kind"] == "categorical"
    assert list(t.levels["c"]) == [10, 20]


@pytest.mark.parametrize("dtype", ["str", "object", "string"])
def test_strings_are_categorical_with_sorted_levels(dtype):
    column = pd.Series(["pear", "apple", None, "fig", "apple"], dtype=dtype)
    t = one(column, **NATIVE)
    row = info(t)
    # "str" is the pandas 3 string dtype; pandas 2 makes it object
    assert str(column.dtype) in (("str", "object") if dtype == "str" else (dtype,))
    assert (row["kind"], row["reason"], row["dtype"]) == (
        "categorical",
        "detected",
        str(column.dtype),
    )
    assert list(t.levels["c"]) == ["apple", "fig", "pear"]
    np.testing.assert_array_equal(codes(t), [2, 0, -1, 1, 0])


def test_default_string_dtype():
    df = pd.DataFrame({"c": ["b", "a"], "z": [1.0, 2.0]})
    pandas3 = int(pd.__version__.split(".")[0]) >= 3
    assert str(df["c"].dtype) == ("str" if pandas3 else "object")  # the default per version
    t = build_table(df)
    assert t.spec.kinds["c"] == "categorical"
    assert t.spec.to_frame().loc["c", "dtype"] == str(df["c"].dtype)


def test_object_of_numbers_is_categorical():
    t = one(pd.Series([3, 1, 3], dtype=object))
    assert info(t)["kind"] == "categorical"
    assert list(t.levels["c"]) == [1, 3]


def test_mixed_type_object_column():
    t = one(pd.Series(["b", 2.5, 1, "a", b"x", None], dtype=object), **NATIVE)
    assert info(t)["kind"] == "categorical"
    # numbers first (by value), then strings, then the rest
    assert list(t.levels["c"]) == [1, 2.5, "a", "b", b"x"]
    np.testing.assert_array_equal(codes(t), [3, 1, 0, 2, 4, -1])


def test_mixed_object_levels_do_not_depend_on_row_order():
    values = ["b", 2.5, 1, "a"]
    a = one(pd.Series(values, dtype=object))
    b = one(pd.Series(values[::-1], dtype=object))
    assert list(a.levels["c"]) == list(b.levels["c"])
    np.testing.assert_array_equal(codes(a)[::-1], codes(b))


# ------------------------------------------------------------------ overrides
def test_numeric_override_on_digit_strings():
    t = one(pd.Series(["1.5", "2", None, "-3e1"], dtype="str"), numeric=["c"], **NATIVE)
    assert (info(t)["kind"], info(t)["reason"]) == ("numeric", "numeric=")
    np.testing.assert_array_equal(num(t), [1.5, 2.0, np.nan, -30.0])


def test_numeric_override_on_bool():
    t = one([True, False, True], numeric="c")
    assert (info(t)["kind"], info(t)["reason"]) == ("numeric", "numeric=")
    np.testing.assert_array_equal(num(t), [1.0, 0.0, 1.0])
    t = one(pd.array([True, None, False], dtype="boolean"), numeric="c", **NATIVE)
    np.testing.assert_array_equal(num(t), [1.0, np.nan, 0.0])
    t = one(pd.Series([True, None, False], dtype=object), numeric="c", **NATIVE)
    np.testing.assert_array_equal(num(t), [1.0, np.nan, 0.0])


@pytest.mark.parametrize(
    "categories", [[5, 10, 20], [5.0, 10.0, 20.0], ["5", "10", "20"]], ids=["int", "float", "str"]
)
def test_numeric_override_on_category_of_numbers(categories):
    column = pd.Categorical.from_codes([2, 0, -1, 1], categories=categories)
    t = one(column, numeric=["c"], **NATIVE)
    assert info(t)["kind"] == "numeric"
    # the category *values*, not the codes
    np.testing.assert_array_equal(num(t), [20.0, 5.0, np.nan, 10.0])


def test_numeric_override_on_ordered_labels_uses_rank():
    column = pd.Categorical(["mid", "low", "high"], categories=["low", "mid", "high"], ordered=True)
    t = one(column, numeric=["c"])
    np.testing.assert_array_equal(num(t), [1.0, 0.0, 2.0])


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(["1", "x", "2"], dtype="str"),
        pd.Series(["1", "x", "2"], dtype=object),
        pd.Categorical(["1", "x", "2"]),  # unordered labels that are not numbers
    ],
    ids=["str", "object", "category"],
)
def test_numeric_override_fails_on_words(column):
    dtype = str(pd.Series(column).dtype)
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"Column 'c' (dtype {dtype}) cannot be read as numeric: Unable to parse string 'x' "
            "at position 1. Remove 'c' from numeric= (it is then categorical), or convert it "
            "first, e.g. df['c'] = pd.to_numeric(df['c'], errors='coerce')."
        ),
    ):
        one(column, numeric=["c"])


def test_categorical_override_on_integers_levels_sorted():
    t = one([30, 10, 20, 10], categorical=["c"])
    assert (info(t)["kind"], info(t)["reason"]) == ("categorical", "categorical=")
    assert list(t.levels["c"]) == [10, 20, 30]
    np.testing.assert_array_equal(codes(t), [2, 0, 1, 0])


def test_categorical_override_on_floats_and_nullable_ints():
    t = one([2.5, -1.0, np.nan, 2.5], categorical="c", **NATIVE)
    assert list(t.levels["c"]) == [-1.0, 2.5]
    np.testing.assert_array_equal(codes(t), [1, 0, -1, 1])
    t = one(pd.array([3, None, 1], dtype="Int64"), categorical="c", **NATIVE)
    assert list(t.levels["c"]) == [1, 3]
    np.testing.assert_array_equal(codes(t), [1, -1, 0])


def test_override_on_one_column_leaves_others_detected():
    df = pd.DataFrame({"a": [1, 2, 1], "b": [1, 2, 3], "s": ["x", "y", "x"]})
    spec = build_table(df, categorical=["a"]).spec.to_frame()
    assert spec["kind"].tolist() == ["categorical", "numeric", "categorical"]
    assert spec["reason"].tolist() == ["categorical=", "detected", "detected"]


def test_spec_to_frame_layout():
    t = build_table(pd.DataFrame({"x": [1.0, 2.0], "g": ["a", "b"]}))
    frame = t.spec.to_frame()
    assert list(frame.columns) == ["dtype", "kind", "reason", "n_levels", "ordered"]
    assert frame.index.name == "variable"
    assert list(frame.index) == ["x", "g"]
    assert np.isnan(frame.loc["x", "n_levels"])
    assert t.spec.describe() == "2 variables (1 numeric, 1 categorical)"


# ------------------------------------------------------------ helpers directly
def test_detect_kind():
    assert detect_kind(pd.Series([1.5])) == "numeric"
    assert detect_kind(pd.Series([1], dtype="UInt16")) == "numeric"
    assert detect_kind(pd.Series([True])) == "categorical"
    assert detect_kind(pd.Series(pd.array([True], dtype="boolean"))) == "categorical"
    assert detect_kind(pd.Series(pd.Categorical([1, 2]))) == "categorical"
    assert detect_kind(pd.Series(["a"], dtype="str")) == "categorical"


def test_unsupported_reason():
    assert unsupported_reason(pd.Series([1.0])) is None
    assert unsupported_reason(pd.Series([None, None], dtype=object)) is None
    assert unsupported_reason(pd.Series([[1]], dtype=object)) == "object holding list values"
    assert unsupported_reason(pd.Series([pd.Timestamp(0)], dtype=object)) == (
        "object holding Timestamp values"
    )
    assert unsupported_reason(pd.Series(pd.arrays.SparseArray([1.0]))) is None


def test_encode_categorical_given_levels():
    s = pd.Series(["b", None, "a"], name="g")
    c, levels, ordered = encode_categorical(s, ["b", "a", "z"])
    assert c.tolist() == [0, -1, 1]
    assert list(levels) == ["b", "a", "z"]
    assert ordered is False
    # categories of a category column are matched by value, not by code
    cat = pd.Series(pd.Categorical(["x", "y"], categories=["y", "x"]))
    assert encode_categorical(cat, ["x", "y"])[0].tolist() == [0, 1]


def test_encode_categorical_errors():
    s = pd.Series(["a", "c", "d", "c"], name="g")
    with pytest.raises(
        ValueError,
        match=r"Column 'g' has values not among its levels: \['c', 'd'\] \(levels: \['a', 'b'\]\)\. "
        r"Recode or drop those rows first\.",
    ):
        encode_categorical(s, ["a", "b"])
    with pytest.raises(
        ValueError, match=r"levels for column 'g' repeat \['a'\]; give each level once"
    ):
        encode_categorical(s, ["a", "b", "a"])
    with pytest.raises(
        TypeError, match=r"levels for column 'g' must be a list of values; got 'ab'"
    ):
        encode_categorical(s, "ab")


def test_encode_categorical_unseen_raises_no_pandas_warning():
    # bug fixed: pd.Categorical(values, categories=...) with unseen values emitted a
    # Pandas4Warning (an error under filterwarnings=error) before our ValueError
    s = pd.Series(pd.Categorical(["a", "q"]), name="g")
    with pytest.raises(ValueError, match="values not among its levels: \\['q'\\]"):
        encode_categorical(s, ["a", "b"])


def test_to_float_sources_give_matching_fixes():
    s = pd.Series(["x"], dtype="str")
    with pytest.raises(TypeError, match=r"Use C\(v\) or the plain column instead of N\(v\)"):
        to_float(s, "v", source="N()")
    with pytest.raises(TypeError, match=r"The fit read 'v' as numeric"):
        to_float(s, "v", source="newdata")
