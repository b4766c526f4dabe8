"""Every error message of the ``_validation`` helpers and of ``build_table``.

Each message must name the parameter or column, show the value received and end
with a fix; the ``match=`` patterns below check all three where they apply.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from sparseclust import DataWarning, FormulaError, build_table
from sparseclust._data.params import (
    as_rng,
    check_bool,
    check_choice,
    check_int,
    check_names,
    check_number,
    is_package_module,
    user_stacklevel,
)
from sparseclust._data.table import transform_like


def esc(text: str) -> str:
    return re.escape(text)


# ------------------------------------------------------------------ check_int
class TestCheckInt:
    def test_accepts_ints_and_integral_floats(self):
        assert check_int("k", 3) == 3
        assert check_int("k", np.int64(4), min=1) == 4
        assert check_int("k", 5.0, min=1, max=5) == 5
        assert type(check_int("k", np.int32(2))) is int

    @pytest.mark.parametrize(
        ("kwargs", "value", "message"),
        [
            ({"min": 1}, 0, "k must be an integer >= 1; got k=0."),
            ({"max": 3}, 4, "k must be an integer <= 3; got k=4."),
            ({"min": 1, "max": 3}, 9, "k must be an integer in [1, 3]; got k=9."),
        ],
    )
    def test_out_of_range(self, kwargs, value, message):
        with pytest.raises(ValueError, match=esc(message)):
            check_int("k", value, **kwargs)

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            (2.5, "k=2.5 of type float"),
            ("3", "k='3' of type str"),
            (None, "k=None of type NoneType"),
            (np.float64(1.5), "k=1.5 of type float64"),
            (float("nan"), "k=nan of type float"),
            (float("inf"), "k=inf of type float"),
        ],
    )
    def test_not_an_integer(self, value, shown):
        with pytest.raises(TypeError, match=esc(f"k must be an integer >= 1; got {shown}.")):
            check_int("k", value, min=1)

    @pytest.mark.parametrize("value", [True, False, np.True_])
    def test_booleans_are_not_integers(self, value):
        # bug fixed: True used to pass as 1 (bool is a Real whose float is integral)
        with pytest.raises(TypeError, match=r"k must be an integer >= 1; got k=(True|False)"):
            check_int("k", value, min=1)


# --------------------------------------------------------------- check_number
class TestCheckNumber:
    def test_accepts(self):
        assert check_number("lam", 2) == 2.0
        assert check_number("lam", np.float32(0.5), min=0, max=1) == 0.5
        assert check_number("lam", 0, min=0) == 0.0

    @pytest.mark.parametrize(
        ("kwargs", "value", "message"),
        [
            ({"min": 0, "min_inclusive": False}, 0, "lam must be a finite number > 0; got lam=0."),
            ({"min": 0}, -1.5, "lam must be a finite number >= 0; got lam=-1.5."),
            ({"max": 1}, 2, "lam must be a finite number <= 1; got lam=2."),
            (
                {"min": 0, "max": 1, "max_inclusive": False},
                1,
                "lam must be a finite number >= 0 and < 1; got lam=1.",
            ),
            ({}, float("inf"), "lam must be a finite number; got lam=inf."),
            ({"min": 0}, float("nan"), "lam must be a finite number >= 0; got lam=nan."),
            # numpy scalars are shown as plain numbers, not np.float64(-1.0)
            ({"min": 0}, np.float64(-1.0), "lam must be a finite number >= 0; got lam=-1.0."),
        ],
    )
    def test_out_of_range(self, kwargs, value, message):
        with pytest.raises(ValueError, match=esc(message)):
            check_number("lam", value, **kwargs)

    @pytest.mark.parametrize(
        ("value", "shown"), [("1", "lam='1' of type str"), (True, "lam=True of type bool")]
    )
    def test_not_a_number(self, value, shown):
        with pytest.raises(TypeError, match=esc(f"lam must be a finite number > 0; got {shown}.")):
            check_number("lam", value, min=0, min_inclusive=False)


# -------------------------------------------------------- choice, bool, names
def test_check_choice():
    assert check_choice("init", "mean", ["mean", "random"]) == "mean"
    with pytest.raises(
        ValueError, match=esc("init must be one of 'mean', 'random'; got init='kmeans++'.")
    ):
        check_choice("init", "kmeans++", ["mean", "random"])
    with pytest.raises(ValueError, match=esc("got init=1.")):
        check_choice("init", 1, ["mean", "random"])


def test_check_bool():
    assert check_bool("scale", np.True_) is True
    with pytest.raises(TypeError, match=esc("scale must be True or False; got scale=1.")):
        check_bool("scale", 1)
    with pytest.raises(TypeError, match=esc("scale must be True or False; got scale='yes'.")):
        check_bool("scale", "yes")


class TestCheckNames:
    def test_normalises(self):
        assert check_names("numeric", None) is None
        assert check_names("numeric", "age") == ["age"]
        assert check_names("numeric", ("a", "b")) == ["a", "b"]
        assert check_names("numeric", pd.Index(["a"])) == ["a"]
        # integer column labels are names too (the front names columns by str(label))
        assert check_names("numeric", [0, np.int64(1)]) == ["0", "1"]

    @pytest.mark.parametrize("value", [3.5, True, {"a": 1}, b"ab"])
    def test_not_names(self, value):
        with pytest.raises(
            TypeError, match=r"numeric must be a column name or a list of column names; got"
        ) as info:
            check_names("numeric", value)
        assert "Use e.g. numeric=['age', 'income']." in str(info.value)

    def test_bad_entry(self):
        with pytest.raises(
            TypeError,
            match=esc(
                "categorical must be a list of column names (strings); got 1.5 in "
                "categorical=['a', 1.5]. Use the column names, not positions or masks."
            ),
        ):
            check_names("categorical", ["a", 1.5])
        with pytest.raises(TypeError, match=esc("got True in categorical=[True, False]")):
            check_names("categorical", [True, False])


class TestAsRng:
    def test_accepts(self):
        g = np.random.default_rng(1)
        assert as_rng(g) is g
        assert isinstance(as_rng(None), np.random.Generator)
        assert isinstance(as_rng(np.random.SeedSequence(3)), np.random.Generator)
        assert as_rng(7).integers(1000) == np.random.default_rng(7).integers(1000)

    def test_negative_seed(self):
        with pytest.raises(
            ValueError, match=esc("rng must be a non-negative integer seed; got rng=-1. Use e.g.")
        ):
            as_rng(-1)

    @pytest.mark.parametrize("value", [1.5, "0", True, np.random.RandomState(0)])
    def test_wrong_type(self, value):
        with pytest.raises(
            TypeError,
            match=r"rng must be None, an int seed or a numpy\.random\.Generator; got rng=.*"
            r"Use rng=0 for a reproducible run\.",
        ):
            as_rng(value)


def test_package_module_names():
    assert is_package_module("sparseclust")
    assert is_package_module("sparseclust._data.table")
    # bug fixed: a user module whose name merely starts with "sparseclust" is the user's
    assert not is_package_module("sparseclust_analysis")
    assert not is_package_module("tests.test_validation")


def test_user_stacklevel_outside_package():
    # frame 0 is user_stacklevel itself; its caller (this test) is the first user frame
    assert user_stacklevel() == 1


def test_drop_warning_points_at_the_caller():
    df = pd.DataFrame({"a": [np.nan, 1.0, 2.0, 3.0], "b": [1.0, 5.0, 2.0, 0.0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        build_table(df, missing="drop")
    assert len(caught) == 1
    assert caught[0].category is DataWarning
    assert caught[0].filename == __file__


# ================================================================ build_table
@pytest.fixture
def df() -> pd.DataFrame:
    return pd.DataFrame(
        {"a": [1.0, 2.0, 4.0, 8.0], "g": ["u", "v", "u", "w"], "n": [3, 1, 2, 2]},
        index=[10, 11, 12, 13],
    )


class TestMissing:
    def test_raise_names_columns_counts_and_fix(self, df):
        df.loc[11, "a"] = np.nan
        df.loc[12, "g"] = None
        df.loc[11, "g"] = None
        with pytest.raises(
            ValueError,
            match=esc(
                "missing='raise': 2 of 4 rows have missing values (per column: {'a': 1, "
                "'g': 2}); pass missing='drop', or impute them first."
            ),
        ):
            build_table(df)

    def test_raise_lists_every_allowed_alternative(self, df):
        df.loc[11, "a"] = np.nan
        with pytest.raises(ValueError, match=esc("pass missing='drop' or missing='native'")):
            build_table(df, missing_choices=("raise", "drop", "native"))
        with pytest.raises(ValueError, match=esc("{'a': 1}); impute them first.")):
            build_table(df, missing_choices=("raise",))

    @pytest.mark.parametrize(
        "column",
        [
            pd.array([1, None, 3, 4], dtype="Int64"),
            pd.array([True, None, False, True], dtype="boolean"),
            pd.Categorical(["x", None, "y", "x"]),
            pd.Series(["x", pd.NA, "y", "x"], dtype="str").to_numpy(),
            np.array([1.0, np.nan, 2.0, 3.0]),
        ],
        ids=["Int64", "boolean", "category", "str", "float"],
    )
    def test_every_missing_marker_counts(self, column):
        with pytest.raises(ValueError, match=esc("(per column: {'c': 1})")):
            build_table(pd.DataFrame({"c": column, "z": [1.0, 2.0, 3.0, 4.0]}))

    def test_unknown_policy(self, df):
        with pytest.raises(
            ValueError, match=esc("missing must be one of 'raise', 'drop'; got missing='native'.")
        ):
            build_table(df, missing="native")
        with pytest.raises(ValueError, match=esc("got missing='omit'.")):
            build_table(df, missing="omit")

    def test_drop_warns_over_threshold(self, df):
        df.loc[11, "a"] = np.nan
        with pytest.warns(
            DataWarning,
            match=esc(
                "missing='drop' dropped 1 of 4 rows (25%) with missing values "
                "(per column: {'a': 1})."
            ),
        ):
            t = build_table(df, missing="drop")
        assert t.n_dropped == 1

    def test_drop_quiet_under_threshold(self):
        a = np.arange(20.0)
        a[3] = np.nan
        t = build_table(pd.DataFrame({"a": a}), missing="drop")  # 5%: no warning
        assert t.n_dropped == 1

    def test_drop_everything(self):
        df = pd.DataFrame({"a": [np.nan, 1.0, 2.0], "b": [1.0, np.nan, np.nan]})
        with pytest.raises(
            ValueError,
            match=esc(
                "missing='drop' leaves no data: every one of the 3 rows has a missing value "
                "(per column: {'a': 1, 'b': 2}); drop the sparsest columns or impute first."
            ),
        ):
            build_table(df, missing="drop")

    def test_entirely_missing_column(self, df):
        df["e"] = np.nan
        with pytest.raises(
            ValueError,
            match=esc(
                "Columns ['e'] are entirely missing (all 4 values); drop them "
                "(e.g. df.drop(columns=['e']), or the formula '~ . - e' with data=df)."
            ),
        ):
            build_table(df, missing="drop")

    def test_response_missing_under_native(self, df):
        y = pd.Series([1.0, np.nan, 2.0, 3.0], index=df.index, name="resp")
        with pytest.raises(
            ValueError,
            match=esc("the response 'resp' has 1 missing values; drop those rows first"),
        ):
            build_table(df, y=y, response=True, missing="native", missing_choices=("native",))


class TestValues:
    @pytest.mark.parametrize("bad", [np.inf, -np.inf])
    def test_infinite(self, df, bad):
        df.loc[12, "a"] = bad
        with pytest.raises(
            ValueError,
            match=esc(
                "Columns ['a'] contain infinite values (per column: {'a': 1}); replace them "
                "with finite values or NaN (missing), e.g. df.replace([np.inf, -np.inf], np.nan)."
            ),
        ):
            build_table(df)

    def test_infinite_in_array(self):
        with pytest.raises(ValueError, match=esc("Columns ['x1'] contain infinite values")):
            build_table(np.array([[1.0, np.inf], [2.0, 3.0]]))

    def test_no_rows(self, df):
        with pytest.raises(
            ValueError,
            match=esc(
                "data has no rows (shape (0, 3)); clustering needs at least one observation."
            ),
        ):
            build_table(df.iloc[:0])
        with pytest.raises(ValueError, match=esc("data has no rows (shape (0, 2))")):
            build_table(np.empty((0, 2)))

    def test_no_columns(self, df):
        with pytest.raises(
            ValueError,
            match=esc("data has no columns (shape (4, 0)); pass at least one variable"),
        ):
            build_table(df.iloc[:, :0])

    def test_constant_columns(self, df):
        df["k"] = 7.0
        df["h"] = "same"
        with pytest.raises(
            ValueError,
            match=esc(
                "Columns ['k', 'h'] are constant (one distinct value) and carry no clustering "
                "information; drop them (e.g. df.drop(columns=['k', 'h']), or the formula "
                "'~ . - k - h' with data=df)."
            ),
        ):
            build_table(df)
        t = build_table(df, allow_constant=True)
        assert t.names == ["a", "g", "n", "k", "h"]

    def test_constant_after_dropping(self):
        df = pd.DataFrame({"a": [1.0, 1.0, 5.0], "b": [1.0, 2.0, np.nan], "c": [0.0, 1.0, 2.0]})
        with pytest.warns(DataWarning):
            with pytest.raises(
                ValueError,
                match=esc("Columns ['a'] are constant (one distinct value among the rows kept)"),
            ):
                build_table(df, missing="drop")

    def test_constant_formula_hint(self, df):
        df["k"] = 7.0
        with pytest.raises(
            ValueError, match=esc("drop them (e.g. remove them from the formula, or '~ . - k').")
        ):
            build_table("~ a + k", data=df)

    def test_one_row_is_never_constant(self):
        t = build_table(pd.DataFrame({"a": [1.0], "g": ["x"]}))
        assert t.n_obs == 1

    def test_duplicated_names(self):
        df = pd.DataFrame([[1.0, 2.0, 3.0], [4.0, 5.0, 7.0]], columns=["a", "a", "b"])
        with pytest.raises(
            ValueError,
            match=esc("Duplicated column names ['a'] in data; rename them so each is unique"),
        ):
            build_table(df)
        with pytest.raises(ValueError, match=esc("Duplicated column names ['a'] in data")):
            build_table("~ b", data=df)

    def test_duplicated_after_str(self):
        df = pd.DataFrame([[1.0, 2.0], [4.0, 5.0]], columns=[1, "1"])
        with pytest.raises(ValueError, match=esc("so 1 and '1' collide")):
            build_table(df)


class TestUnsupportedDtypes:
    @pytest.mark.parametrize(
        ("column", "dtype_text"),
        [
            # {unit}: the column's own resolution (pandas 3: us, pandas 2: ns)
            (pd.date_range("2024-01-01", periods=4), "datetime64[{unit}]"),
            (pd.date_range("2024-01-01", periods=4, tz="UTC"), "datetime64[{unit}, UTC]"),
            (pd.to_timedelta([1, 2, 3, 4], unit="D"), "timedelta64[{unit}]"),
            (np.array([1 + 1j, 2, 3, 4]), "complex128"),
            (pd.period_range("2024-01", periods=4, freq="M"), "period[M]"),
            (pd.interval_range(0, 4), "interval[int64, right]"),
            ([[1], [2], [3], [4]], "object holding list values"),
            ([{"a": 1}, {"b": 2}, {"a": 1}, None], "object holding dict values"),
            ([np.zeros(2)] * 4, "object holding ndarray values"),
            ([(1, 2)] * 4, "object holding tuple values"),
        ],
        ids=[
            "datetime",
            "datetime-tz",
            "timedelta",
            "complex",
            "period",
            "interval",
            "lists",
            "dicts",
            "arrays",
            "tuples",
        ],
    )
    def test_message(self, df, column, dtype_text):
        df["bad"] = column
        if "{unit}" in dtype_text:
            dtype_text = dtype_text.format(unit=df["bad"].dt.unit)
            assert dtype_text == str(df["bad"].dtype)
        with pytest.raises(
            TypeError,
            match=esc(
                f"Columns ['bad'] have unsupported dtypes (bad: {dtype_text}); convert them to "
                "numeric or categorical, or drop them (e.g. df.drop(columns=['bad']), or the "
                "formula '~ . - bad' with data=df)."
            ),
        ):
            build_table(df)

    def test_all_columns_named_at_once(self, df):
        df["when"] = pd.date_range("2024-01-01", periods=4)
        df["odd name"] = pd.to_timedelta([1, 2, 3, 4], unit="h")
        df["z"] = np.array([1j, 2, 3, 4])
        with pytest.raises(TypeError) as info:
            build_table(df)
        msg = str(info.value)
        assert msg.startswith("Columns ['when', 'odd name', 'z'] have unsupported dtypes")
        when, odd = df["when"].dt.unit, df["odd name"].dt.unit
        assert f"when: datetime64[{when}], odd name: timedelta64[{odd}], z: complex128" in msg
        assert """'~ . - when - Q('odd name') - z'""" in msg

    def test_formula_hint(self, df):
        df["when"] = pd.date_range("2024-01-01", periods=4)
        with pytest.raises(
            TypeError, match=esc("e.g. remove them from the formula, or '~ . - when'")
        ):
            build_table("~ .", data=df)

    def test_not_rejected_when_left_out(self, df):
        df["when"] = pd.date_range("2024-01-01", periods=4)
        assert build_table("~ . - when", data=df).names == ["a", "g", "n"]

    def test_numeric_override_does_not_rescue(self, df):
        df["when"] = pd.date_range("2024-01-01", periods=4)
        with pytest.raises(TypeError, match=esc("Columns ['when'] have unsupported dtypes")):
            build_table(df, numeric=["when"])

    def test_datetime_declared_categorical_is_allowed(self, df):
        df["day"] = pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-01", "2024-01-02"])
        t = build_table(df, categorical=["day"])
        assert t.spec.kinds["day"] == "categorical"
        assert len(t.levels["day"]) == 2


class TestOverrides:
    def test_unknown_categorical(self, df):
        with pytest.raises(
            ValueError,
            match=esc(
                "categorical= names not in data: ['gg']. Available columns: ['a', 'g', 'n']."
            ),
        ):
            build_table(df, categorical=["gg"])

    def test_unknown_numeric(self, df):
        with pytest.raises(
            ValueError,
            match=esc(
                "numeric= names not in data: ['x', 'y']. Available columns: ['a', 'g', 'n']."
            ),
        ):
            build_table(df, numeric=["x", "g", "y"])

    def test_unknown_in_formula_refers_to_variables(self, df):
        with pytest.raises(
            ValueError,
            match=esc("numeric= names not in data: ['g']. Available columns: ['a', 'n']."),
        ):
            build_table("~ a + n", data=df, numeric="g")

    def test_in_both(self, df):
        with pytest.raises(
            ValueError,
            match=esc(
                "Columns ['n'] are in both categorical= and numeric=; keep each in one list."
            ),
        ):
            build_table(df, categorical=["n", "g"], numeric=["a", "n"])

    def test_not_names(self, df):
        with pytest.raises(TypeError, match=esc("categorical must be a list of column names")):
            build_table(df, categorical=[1.5])

    def test_integer_labels(self):
        df = pd.DataFrame({0: [1, 2, 1], 1: [1.0, 2.0, 3.0]})
        t = build_table(df, categorical=[0])
        assert t.spec.kinds == {"0": "categorical", "1": "numeric"}

    def test_not_numeric(self, df):
        with pytest.raises(
            TypeError,
            match=esc(
                f"Column 'g' (dtype {df['g'].dtype}) cannot be read as numeric: Unable to parse "
                "string 'u' at position 0. Remove 'g' from numeric= (it is then categorical), or convert it "
                "first, e.g. df['g'] = pd.to_numeric(df['g'], errors='coerce')."
            ),
        ):
            build_table(df, numeric=["g"])


class TestKindsAllowed:
    def test_numeric_only_method(self, df):
        with pytest.raises(
            TypeError,
            match=esc(
                "this method clusters numeric data only; columns ['g'] are categorical. Drop "
                "them (e.g. df.drop(columns=['g']), or the formula '~ . - g' with data=df), use "
                "craft() for mixed numeric and categorical data, or pass numeric=['g'] if they "
                "hold numbers."
            ),
        ):
            build_table(df, allow_categorical=False)

    def test_categorical_only_method(self, df):
        with pytest.raises(
            TypeError,
            match=esc(
                "this method clusters categorical data only; columns ['a', 'n'] are numeric. "
                "Pass categorical=['a', 'n'] to treat them as categories"
            ),
        ):
            build_table(df, allow_numeric=False)


class TestInputs:
    def test_one_dimensional_array(self):
        with pytest.raises(
            ValueError,
            match=esc(
                "data is 1-D (shape (3,)); pass a 2-D array, e.g. x.reshape(-1, 1) for one "
                "variable, or a DataFrame."
            ),
        ):
            build_table(np.array([1.0, 2.0, 3.0]))
        with pytest.raises(ValueError, match=esc("data is 1-D (shape (2,))")):
            build_table(np.array(["a", "b"], dtype=object))
        with pytest.raises(ValueError, match=esc("data is 1-D (shape (3,))")):
            build_table([1, 2, 3])

    def test_three_dimensional_array(self):
        with pytest.raises(
            ValueError, match=esc("data must be 2-D (rows x variables); got shape (2, 2, 2).")
        ):
            build_table(np.zeros((2, 2, 2)))

    def test_scalar(self):
        with pytest.raises(
            ValueError, match=esc("data must be 2-D (rows x variables); got shape ().")
        ):
            build_table(5)

    def test_ragged(self):
        with pytest.raises(TypeError, match=esc("data of type list is not a table")):
            build_table([[1, 2], [3]])

    def test_none(self):
        with pytest.raises(
            TypeError,
            match=esc(
                "no data given (got None); pass a DataFrame, a 2-D array, or a formula with "
                "data=, e.g. f(df) or f('~ .', data=df)."
            ),
        ):
            build_table(None)

    def test_formula_without_data(self):
        with pytest.raises(
            TypeError,
            match=esc(
                "the formula '~ a + b' needs its data: pass data=, e.g. f('~ a + b', data=df)."
            ),
        ):
            build_table("~ a + b")

    def test_table_and_data(self, df):
        with pytest.raises(TypeError, match=esc("got both a DataFrame and data=")):
            build_table(df, data=df)

    def test_formula_data_must_be_a_table(self):
        with pytest.raises(ValueError, match=esc("data is 1-D (shape (3,))")):
            build_table("~ x0", data=[1.0, 2.0, 3.0])

    def test_data_keyword_alone(self, df):
        assert build_table(None, data=df).names == ["a", "g", "n"]


class TestMinRows:
    def test_after_dropping(self):
        df = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0], "b": [0.0, 1.0, 5.0, 2.0]})
        with pytest.warns(DataWarning):
            with pytest.raises(
                ValueError,
                match=esc(
                    "n_obs=3 must be >= 4 after dropping 1 of 4 rows with missing values; pass "
                    "more rows, or impute the missing values instead of dropping them."
                ),
            ):
                build_table(df, missing="drop", min_rows=4)

    def test_without_dropping(self):
        with pytest.raises(ValueError, match=esc("n_obs=2 must be >= 3; pass more rows.")):
            build_table(pd.DataFrame({"a": [1.0, 2.0]}), min_rows=3)


class TestResponse:
    def test_y_without_response(self, df):
        with pytest.raises(
            ValueError, match=esc("y= was given, but this method takes no response; remove y=")
        ):
            build_table(df, y=[1, 2, 3, 4])

    def test_y_twice(self, df):
        with pytest.raises(
            ValueError,
            match=esc("the response is given twice (the formula's left-hand side and y=)"),
        ):
            build_table("n ~ a", data=df, response=True, y=[1, 2, 3, 4])

    def test_y_name(self, df):
        with pytest.raises(
            ValueError,
            match=esc(
                "y= takes the response values, not a column name; got y='n'. To name a column"
            ),
        ):
            build_table(df, y="n", response=True)

    def test_y_length(self, df):
        with pytest.raises(
            ValueError, match=esc("y must be 1-D with one value per row (4); got shape (3,).")
        ):
            build_table(df, y=[1, 2, 3], response=True)
        with pytest.raises(ValueError, match=esc("y has 2 values but data has 4 rows")):
            build_table(df, y=pd.Series([1, 2]), response=True)

    def test_y_aligned_by_index(self, df):
        y = pd.Series([4, 3, 2, 1], index=[13, 12, 11, 10], name="resp")
        t = build_table(df, y=y, response=True)
        assert t.response.tolist() == [1, 2, 3, 4]
        assert t.response.index.tolist() == [10, 11, 12, 13]
        y2 = pd.Series([9, 8, 7, 6])  # other labels: positional
        assert build_table(df, y=y2, response=True).response.tolist() == [9, 8, 7, 6]


class TestTransformLikeErrors:
    def test_messages(self, df):
        spec = build_table(df).spec
        new = df.iloc[:2].copy()
        with pytest.raises(
            ValueError,
            match=esc(
                "newdata lacks columns ['g'] used in the fit; it has ['a', 'n']. Pass data with "
                "the columns used in the fit."
            ),
        ):
            transform_like(spec, new[["a", "n"]])
        with pytest.raises(
            ValueError,
            match=esc(
                "Column 'g' has values not among its levels: ['q'] (levels: ['u', 'v', 'w']). "
                "The fit saw only these levels; recode or drop those rows of newdata first, or pass unseen='na' (their labels are <NA>)."
            ),
        ):
            transform_like(spec, new.assign(g=["q", "u"]))
        with pytest.raises(
            ValueError,
            match=esc(
                "missing='raise': 1 of 2 rows of newdata have missing values (rows [10]; per "
                "column: {'a': 1}); pass missing='drop' (their labels are <NA>) or impute them."
            ),
        ):
            transform_like(spec, new.assign(a=[np.nan, 1.0]))
        with pytest.raises(ValueError, match=esc("newdata columns ['a'] contain infinite values")):
            transform_like(spec, new.assign(a=[np.inf, 1.0]))
        with pytest.raises(
            TypeError,
            match=esc("newdata columns ['g'] have unsupported dtypes (g: object holding list"),
        ):
            transform_like(spec, new.assign(g=[["u"], ["v"]]))
        words = new.assign(a=["x", "y"])
        with pytest.raises(
            TypeError,
            match=esc(
                f"Column 'a' (dtype {words['a'].dtype}) cannot be read as numeric: Unable to "
                "parse string 'x' at position 0. The fit read 'a' as numeric; give newdata the "
                "same kind of column, or convert it first, e.g. df['a'] = "
                "pd.to_numeric(df['a'], errors='coerce')."
            ),
        ):
            transform_like(spec, words)
        with pytest.raises(
            ValueError, match=esc("missing must be one of 'raise', 'drop', 'native'")
        ):
            transform_like(spec, new, missing="zero")
        with pytest.raises(TypeError, match=esc("newdata is None; pass a DataFrame")):
            transform_like(spec, None)


def test_formula_error_is_a_value_error():
    assert issubclass(FormulaError, ValueError)
