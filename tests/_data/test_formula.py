"""Clustering formulas: ``sparseclust._data.formula`` through ``build_table``."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pandas as pd
import pytest

from sparseclust import DataWarning, FormulaError, build_table
from sparseclust._data.formula import _term_name, evaluate_formula
from sparseclust._data.table import transform_like


@pytest.fixture
def df() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "a": [1.0, 2.0, 4.0, 8.0, 16.0],
            "g": ["u", "v", "u", "w", "v"],
            "class": [1, 2, 1, 2, 2],
            "odd name": [0.5, 1.5, 2.5, 0.0, 1.0],
            "id": [101, 102, 103, 104, 105],
        },
        index=pd.Index([50, 40, 30, 20, 10], name="row"),
    )


ALL = ["a", "g", "class", "odd name", "id"]


# ----------------------------------------------------------------------- dot
def test_dot_is_every_column_in_order(df):
    t = build_table("~ .", data=df)
    assert t.names == ALL
    assert t.spec.kinds == {
        "a": "numeric",
        "g": "categorical",
        "class": "numeric",
        "odd name": "numeric",
        "id": "numeric",
    }
    np.testing.assert_array_equal(t.numeric[:, 0], df["a"].to_numpy())
    assert t.spec.formula == "~ ."


def test_dot_minus_column(df):
    assert build_table("~ . - id", data=df).names == ["a", "g", "class", "odd name"]
    assert build_table("~.-id-a", data=df).names == ["g", "class", "odd name"]


def test_dot_minus_keyword_column(df):
    t = build_table("~ . - class", data=df)
    assert t.names == ["a", "g", "odd name", "id"]


def test_dot_minus_quoted_column(df):
    assert build_table('~ . - Q("odd name") - id', data=df).names == ["a", "g", "class"]
    assert build_table("~ . - Q('odd name')", data=df).names == ["a", "g", "class", "id"]


def test_dot_plus_transform_of_removed_column(df):
    t = build_table("~ . - a - id + np.log(a)", data=df)
    assert t.names == ["g", "class", "odd name", "np.log(a)"]


def test_minus_inside_a_call_is_arithmetic(df):
    # bug fixed: "- id" inside a function call was cut out of the call by the '.' rewrite
    t = build_table("~ . - id - a + I(a - id)", data=df)
    assert t.names == ["g", "class", "odd name", "I(a - id)"]
    np.testing.assert_array_equal(t.numeric[:, -1], (df["a"] - df["id"]).to_numpy())


def test_dot_minus_unknown_column(df):
    with pytest.raises(
        FormulaError,
        match=re.escape(
            "cannot remove 'ids' in '~ . - ids': there is no such column. Available columns: "
            "['a', 'g', 'class', 'odd name', 'id']."
        ),
    ):
        build_table("~ . - ids", data=df)
    with pytest.raises(FormulaError, match="cannot remove 'zz'"):
        build_table("~ a + g - zz", data=df)


def test_dot_minus_everything(df):
    with pytest.raises(
        FormulaError, match=r"expands to no columns after removing the '- name' terms"
    ):
        build_table('~ . - a - g - class - Q("odd name") - id', data=df)


def test_dot_with_awkward_names():
    data = pd.DataFrame(
        {
            "a.b": [1.0, 2.0, 3.0],
            "C": [3.0, 1.0, 2.0],
            "Q": [0.0, 1.0, 5.0],
            "lambda": [1.0, 0.0, 2.0],
        }
    )
    assert build_table("~ .", data=data).names == ["a.b", "C", "Q", "lambda"]
    assert build_table("~ . - lambda - Q('C')", data=data).names == ["a.b", "Q"]


def test_dot_with_integer_labels():
    data = pd.DataFrame({0: [1.0, 2.0, 3.0], 1: ["x", "y", "x"]})
    t = build_table("~ . - Q('0')", data=data)
    assert t.names == ["1"]


# ------------------------------------------------------------- Q, C, N, expr
def test_q_odd_name(df):
    t = build_table('~ Q("odd name") + a', data=df)
    assert t.names == ["odd name", "a"]
    np.testing.assert_array_equal(t.numeric[:, 0], df["odd name"].to_numpy())


def test_keyword_column_written_bare(df):
    # bug fixed: "class" evaluated as Python code was a SyntaxError
    t = build_table("~ class + N(class + 1)", data=df)
    assert t.names == ["class", "class + 1"]


def test_c_forces_categorical(df):
    t = build_table("~ C(class) + a", data=df)
    assert t.names == ["class", "a"]
    row = t.spec.to_frame().loc["class"]
    assert (row["kind"], row["reason"]) == ("categorical", "C()")
    assert list(t.levels["class"]) == [1, 2]
    np.testing.assert_array_equal(t.codes[:, 0], [0, 1, 0, 1, 1])


def test_c_with_levels(df):
    t = build_table('~ C(g, levels=["w", "v", "u", "unused"])', data=df)
    assert list(t.levels["g"]) == ["w", "v", "u", "unused"]
    np.testing.assert_array_equal(t.codes[:, 0], [2, 1, 2, 0, 1])


def test_c_with_levels_missing_a_value(df):
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Column 'g' has values not among its levels: ['w'] (levels: ['u', 'v']). Add them "
            "to C(g, levels=[...]), or recode or drop those rows first."
        ),
    ):
        build_table('~ C(g, levels=["u", "v"])', data=df)


def test_c_with_bad_levels(df):
    with pytest.raises(
        FormulaError, match=r"C\(\.\.\., levels=\) takes a list of levels; got levels='uvw'"
    ):
        build_table('~ C(g, levels="uvw")', data=df)
    with pytest.raises(ValueError, match=r"levels for column 'g' repeat \['u'\]"):
        build_table('~ C(g, levels=["u", "v", "w", "u"])', data=df)


def test_n_forces_numeric(df):
    data = df.assign(s=["1", "2", "3", "4", "5"])
    t = build_table("~ N(s) + g", data=data)
    row = t.spec.to_frame().loc["s"]
    assert (row["kind"], row["reason"]) == ("numeric", "N()")
    np.testing.assert_array_equal(t.numeric[:, 0], [1.0, 2.0, 3.0, 4.0, 5.0])
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"Column 'g' (dtype {df['g'].dtype}) cannot be read as numeric: Unable to parse "
            "string 'u' at position 0. Use C(g) or the plain column instead of N(g), or "
            "convert it first, e.g. df['g'] = pd.to_numeric(df['g'], errors='coerce')."
        ),
    ):
        build_table("~ N(g)", data=df)


def test_numpy_transform(df):
    t = build_table("~ np.log(a) + g", data=df)
    assert t.names == ["np.log(a)", "g"]
    np.testing.assert_allclose(t.numeric[:, 0], np.log(df["a"].to_numpy()))
    assert t.spec.kinds["np.log(a)"] == "numeric"


def test_identity_i(df):
    t = build_table("~ I(a * 2) + I(a + .5)", data=df)
    assert t.names == ["I(a * 2)", "I(a + .5)"]
    np.testing.assert_array_equal(t.numeric[:, 1], df["a"].to_numpy() + 0.5)


def test_function_from_callers_namespace(df):
    def double(v):
        return 2 * v

    offset = 3.0  # noqa: F841 - read by the formula through the caller's namespace
    t = build_table("~ double(a) + I(a + offset)", data=df)
    assert t.names == ["double(a)", "I(a + offset)"]
    np.testing.assert_array_equal(t.numeric[:, 0], 2 * df["a"].to_numpy())
    np.testing.assert_array_equal(t.numeric[:, 1], df["a"].to_numpy() + 3.0)


def test_columns_shadow_callers_names(df):
    a = "not the column"  # noqa: F841 - the data column wins, as in patsy
    t = build_table("~ a", data=df)
    np.testing.assert_array_equal(t.numeric[:, 0], df["a"].to_numpy())


def test_explicit_eval_env(df):
    t = build_table("~ f(a)", data=df, eval_env={"f": lambda v: v + 1})
    np.testing.assert_array_equal(t.numeric[:, 0], df["a"].to_numpy() + 1)


@pytest.mark.parametrize(
    ("code", "name"),
    [
        ("x", "x"),
        ("C(x)", "x"),
        ("N(x)", "x"),
        ('C(x, levels=["a", "b"])', "x"),
        ('Q("odd name")', "odd name"),
        ('C(Q("a, b"))', "a, b"),
        ("np.log(x)", "np.log(x)"),
        ("C(np.log(x))", "np.log(x)"),
    ],
)
def test_variable_names(code, name):
    assert _term_name(code) == name


def test_variable_name_of_c_is_the_column(df):
    t = build_table("~ C(g) + N(class)", data=df)
    assert t.names == ["g", "class"]
    assert t.spec.codes == {"g": "C(g)", "class": "N(class)"}


# ------------------------------------------------------------- rejected forms
def test_lhs_rejected_for_one_sided_methods(df):
    with pytest.raises(
        FormulaError,
        match=re.escape(
            "clustering formulas are one-sided; got a left-hand side in 'g ~ a + id'. "
            "Use '~ a + id'."
        ),
    ):
        build_table("g ~ a + id", data=df)


def test_response_formula(df):
    t = build_table("g ~ .", data=df, response=True)
    assert t.names == ["a", "class", "odd name", "id"]  # g left out of '.'
    assert t.response.name == "g"
    assert t.response.tolist() == df["g"].tolist()
    assert t.spec.response == "g"


def test_response_transform_excludes_its_column(df):
    # bug fixed: '.' only left out a response written as a bare name
    t = build_table("np.log(a) ~ . - id", data=df, response=True)
    assert t.names == ["g", "class", "odd name"]
    np.testing.assert_allclose(t.response.to_numpy(), np.log(df["a"].to_numpy()))


def test_response_keyword_name(df):
    t = build_table("class ~ . - id", data=df, response=True)
    assert t.names == ["a", "g", "odd name"]
    assert t.response.tolist() == [1, 2, 1, 2, 2]


def test_response_also_on_right(df):
    with pytest.raises(FormulaError, match="'a' is both the response and a variable"):
        build_table("a ~ a + g", data=df, response=True)


def test_response_two_variables(df):
    with pytest.raises(FormulaError, match="must be one variable \\(the response\\)"):
        build_table("a + id ~ g", data=df, response=True)


def test_response_missing_rows_dropped(df):
    df.loc[30, "g"] = None
    with pytest.warns(DataWarning, match=re.escape("(per column: {'g (response)': 1})")):
        t = build_table("g ~ a", data=df, response=True, missing="drop")
    assert t.response.index.tolist() == [50, 40, 20, 10]


@pytest.mark.parametrize("formula", ["~ a:g", "~ a*g", "~ (a + g)**2", "~ a/g"])
def test_interactions_rejected(df, formula):
    with pytest.raises(
        FormulaError,
        match=re.escape(f"interaction term 'a:g' in {formula!r} is not supported: clustering "),
    ):
        build_table(formula, data=df)


@pytest.mark.parametrize("formula", ["~ 0 + a", "~ a - 1", "~ a + 0", "~ -1 + a"])
def test_no_intercept_rejected(df, formula):
    with pytest.raises(
        FormulaError,
        match=re.escape(
            f"'0 +' / '- 1' mean nothing for clustering (there is no intercept); remove them "
            f"from {formula!r}."
        ),
    ):
        build_table(formula, data=df)


def test_term_twice(df):
    with pytest.raises(
        FormulaError,
        match=re.escape(
            "variable 'a' appears twice in '~ a + C(a)' (as 'a' and 'C(a)'); keep one term per "
            "variable."
        ),
    ):
        build_table("~ a + C(a)", data=df)
    with pytest.raises(FormulaError, match="variable 'g' appears twice"):
        build_table("~ . + C(g)", data=df)


def test_unknown_column(df):
    with pytest.raises(
        FormulaError,
        match=re.escape(
            "unknown name 'b' in term 'b' in '~ a + b': it is neither a column of data nor "
            "defined in the caller's namespace. Available columns: ['a', 'g', 'class', "
            "'odd name', 'id']."
        ),
    ):
        build_table("~ a + b", data=df)
    with pytest.raises(
        FormulaError,
        match=re.escape(
            "Q('odd nam'): no such column in data. Available columns: ['a', 'g', 'class', "
            "'odd name', 'id']."
        ),
    ):
        build_table('~ Q("odd nam")', data=df)


@pytest.mark.parametrize(
    ("formula", "message"),
    [
        ("a + g", "formula 'a + g' has no '~'. Write a one-sided formula such as"),
        ("~ ", "formula '~ ' has no right-hand side; use e.g. '~ .'."),
        ("~ a - a", "formula '~ a - a' selects no variables; name at least one"),
        ("~ np.log(a", "cannot parse formula '~ np.log(a'"),
        ("~ np.mean(a)", "term 'np.mean(a)' evaluates to a single value, not a column"),
        ("~ np.column_stack([a, a])", "evaluates to an array of shape (5, 2); use one term"),
        ("~ a[:2]", "term 'a[:2]' has length 2, but the data has 5 rows."),
        (
            "~ np.nosuch(a)",
            "cannot evaluate term 'np.nosuch(a)' in '~ np.nosuch(a)': AttributeError",
        ),
    ],
)
def test_other_formula_errors(df, formula, message):
    with pytest.raises(FormulaError, match=re.escape(message)):
        build_table(formula, data=df)


def test_series_with_foreign_index(df):
    def positional(v):
        return pd.Series(v.to_numpy())  # RangeIndex, not the data's index

    with pytest.raises(FormulaError, match="returned a Series whose index does not match"):
        build_table("~ positional(a)", data=df)

    def shuffled(v):
        return v.iloc[::-1]  # same labels, other order: aligned by label

    t = build_table("~ shuffled(a)", data=df)
    np.testing.assert_array_equal(t.numeric[:, 0], df["a"].to_numpy())


def test_formula_type_errors(df):
    with pytest.raises(TypeError, match="formula must be a string"):
        evaluate_formula(1, df)
    with pytest.raises(
        TypeError, match="A formula needs data= as a pandas DataFrame; got data of type ndarray"
    ):
        evaluate_formula("~ a", np.zeros((2, 2)))


# --------------------------------------------------------- missing and index
def test_missing_in_formula_variables_raise(df):
    df.loc[40, "a"] = np.nan
    df.loc[20, "g"] = None
    with pytest.raises(
        ValueError,
        match=re.escape(
            "missing='raise': 2 of 5 rows have missing values (per column: {'a': 1, 'g': 1})"
        ),
    ):
        build_table("~ a + g", data=df)


def test_missing_only_in_unused_columns_is_ignored(df):
    df.loc[40, "id"] = np.nan
    t = build_table("~ a + g", data=df)
    assert t.n_dropped == 0


def test_missing_in_formula_variables_drop(df):
    df.loc[40, "a"] = np.nan
    with pytest.warns(DataWarning, match="dropped 1 of 5 rows"):
        t = build_table("~ np.log(a) + g", data=df, missing="drop")
    assert t.dropped.tolist() == [False, True, False, False, False]
    assert t.index.equals(df.index)
    assert t.kept_index.tolist() == [50, 30, 20, 10]
    assert t.frame.index.tolist() == [50, 30, 20, 10]


def test_transform_creating_missing_values(df):
    with pytest.warns(RuntimeWarning, match="invalid value encountered in log"):
        with pytest.raises(ValueError, match=re.escape("(per column: {'np.log(a - 3)': 2})")):
            build_table("~ np.log(a - 3)", data=df)


def test_index_preserved(df):
    t = build_table("~ a + C(g)", data=df)
    assert t.index.equals(df.index)
    assert t.index.name == "row"
    assert t.frame.index.equals(df.index)
    assert t.expand(np.arange(5)).index.equals(df.index)


def test_non_unique_index(df):
    data = df.set_axis([1, 1, 2, 2, 3])
    t = build_table("~ a + g", data=data)
    assert t.index.tolist() == [1, 1, 2, 2, 3]
    np.testing.assert_array_equal(t.numeric[:, 0], df["a"].to_numpy())


def test_formula_on_array_and_dict():
    arr = np.array([[1.0, 5.0], [2.0, 3.0], [4.0, 1.0]])
    assert build_table("~ x1", data=arr).names == ["x1"]
    assert build_table("~ .", data={"p": [1.0, 2.0], "q": ["a", "b"]}).names == ["p", "q"]


def test_multiline_formula(df):
    assert build_table("~ a +\n  g", data=df).names == ["a", "g"]


# -------------------------------------------------------------- new data
def test_formula_spec_reevaluated_on_new_data(df):
    def triple(v):
        return 3 * v

    fit = build_table("~ triple(a) + C(g) + Q('odd name') + class", data=df)
    new = pd.DataFrame(
        {"g": ["w", "u"], "class": [2, 1], "a": [10.0, 0.5], "odd name": [1.0, 2.0]},
        index=["p", "q"],
    )
    del triple  # the function the fit used is kept in the spec
    t = transform_like(fit.spec, new)
    assert t.names == ["triple(a)", "g", "odd name", "class"]
    np.testing.assert_array_equal(t.numeric, [[30.0, 1.0, 2.0], [1.5, 2.0, 1.0]])
    np.testing.assert_array_equal(t.codes[:, 0], [2, 0])
    assert t.index.tolist() == ["p", "q"]


def test_formula_spec_is_picklable(df):
    fit = build_table("~ np.log(a) + g", data=df)
    spec = pickle.loads(pickle.dumps(fit.spec))
    t = transform_like(spec, df)
    np.testing.assert_allclose(t.numeric[:, 0], np.log(df["a"].to_numpy()))


def test_formula_spec_new_data_missing_column(df):
    fit = build_table('~ np.log(a) + Q("odd name")', data=df)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "newdata lacks columns ['odd name'] used by the formula "
            "'~ np.log(a) + Q(\"odd name\")'; it has ['a', 'g']."
        ),
    ):
        transform_like(fit.spec, df[["a", "g"]])


def test_formula_spec_new_data_unseen_level(df):
    fit = build_table("~ C(g) + a", data=df)
    with pytest.raises(ValueError, match=r"Column 'g' has values not among its levels: \['z'\]"):
        transform_like(fit.spec, df.assign(g=["z", "u", "u", "v", "w"]))


def test_dot_inside_a_call(df):
    with pytest.raises(
        FormulaError,
        match=re.escape(
            "'.' (every column) must be a term of its own in '~ np.log(.)', not inside a "
            "function call; write the columns out"
        ),
    ):
        build_table("~ np.log(.)", data=df)


def test_dot_on_data_without_columns(df):
    with pytest.raises(
        FormulaError, match=re.escape("expands to no columns (the data has no columns)")
    ):
        build_table("~ .", data=df.iloc[:, :0])


def test_dot_in_parentheses(df):
    assert build_table("~ (. - id - g)", data=df).names == ["a", "class", "odd name"]


def test_formula_and_override_disagree(df):
    with pytest.raises(
        ValueError,
        match=re.escape(
            "'g' is C(g) in the formula but listed in numeric=; keep one: remove it from "
            "numeric= or write it without C()."
        ),
    ):
        build_table("~ C(g) + a", data=df, numeric=["g"])
    with pytest.raises(
        ValueError, match=re.escape("'a' is N(a) in the formula but listed in categorical=")
    ):
        build_table("~ N(a) + g", data=df, categorical=["a"])


def test_override_on_formula_variable(df):
    t = build_table("~ np.log(a) + class", data=df, categorical=["class"])
    assert t.spec.kinds == {"np.log(a)": "numeric", "class": "categorical"}
    assert t.spec.to_frame().loc["class", "reason"] == "categorical="


def test_stored_namespace_keeps_only_used_names(df):
    import math  # noqa: F401 - used by the formula through the caller's namespace

    def used(v):
        return v

    unused = object()  # noqa: F841 - must not be kept in the spec
    t = build_table("~ used(a) + I(math.pi * id)", data=df)
    assert sorted(t.spec.eval_env) == ["math", "used"]
