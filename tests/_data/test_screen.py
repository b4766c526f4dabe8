"""Column screening (issue 32): identifiers, free text, numbers stored as text, many-level
categoricals and integer codes are recognised, reported and handled the same way by
every method, in memory and on Dask; a column the user names is read as named."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sparseclust
import sparseclust.datasets
from sparseclust import (
    DataWarning,
    build_table,
    craft,
    dpmeans,
    kmeans_sparse_permute,
    preview_columns,
    sparse_hclust,
    sparse_kmeans,
)
from sparseclust._data.screen import (
    OTHER,
    ColumnStats,
    ScreenOptions,
    auto_lump_min,
    column_stats,
    decide,
    many_levels,
    parse_numbers,
    screen_options,
)
from sparseclust.metrics import ari as adjusted_rand_index


def customers(n=600, rng=0, extra=()):
    """Three segments in two numeric and two categorical columns, eight noise columns,
    and the messy columns ``extra`` (the issue's table)."""
    g = np.random.default_rng(rng)
    seg = g.integers(0, 3, n)
    levels = np.array(["web", "store", "phone"])
    plans = np.array(["basic", "plus", "pro"])
    df = pd.DataFrame(
        {
            "spend": np.round(np.array([800.0, 2500.0, 6000.0])[seg] * g.lognormal(0, 0.25, n), 2),
            "visits": np.array([2.0, 6.0, 11.0])[seg] + g.normal(0, 1.5, n),
            "channel": pd.array(
                np.where(g.random(n) < 0.8, levels[seg], g.choice(levels, n)), dtype="str"
            ),
            "plan": pd.array(np.where(g.random(n) < 0.75, plans[seg], g.choice(plans, n)), "str"),
        }
    )
    for j in range(4):
        df[f"n{j}"] = g.normal(size=n)
    for j in range(4):
        df[f"c{j}"] = pd.array(g.choice(list("abcde")[: 2 + j], n), dtype="str")
    if "customer_id" in extra:
        df["customer_id"] = pd.array([f"C{i:05d}" for i in g.permutation(n)], dtype="str")
    if "comment" in extra:
        words = np.array("great service slow delivery price too high friendly staff".split())
        df["comment"] = pd.array(
            [" ".join(g.choice(words, 6)) + f" (ticket {i})" for i in range(n)], dtype="str"
        )
    if "spend_text" in extra:
        df["spend"] = pd.array([f"{v:,.2f}" for v in df["spend"]], dtype="str")
    if "city400" in extra:
        df["city"] = pd.array([f"city{c:03d}" for c in g.integers(0, 400, n)], dtype="str")
    if "city60" in extra:
        df["city"] = pd.array([f"town{c:02d}" for c in g.integers(0, 60, n)], dtype="str")
    if "code5" in extra:
        df["code"] = g.integers(1, 6, n)
    return df, seg


def _read(df, **kw):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        table = build_table(df, **kw)
    return table, [str(w.message) for w in seen if issubclass(w.category, DataWarning)]


# ------------------------------------------------------------------ numbers as text
@pytest.mark.parametrize(
    "text, value",
    [
        ("12,345.6", 12345.6),
        ("$1,200", 1200.0),
        ("-$1,200.50", -1200.5),
        ("(1,234)", -1234.0),
        ("12%", 12.0),
        (" 7 ", 7.0),
        ("1 234 567", 1234567.0),
        ("1e3", 1000.0),
        ("€ 99.90", 99.9),
        ("12,34,567", np.nan),  # not a grouping a decimal point convention knows
        ("abc", np.nan),
        ("n/a", np.nan),
    ],
)
def test_parse_numbers_decimal_point(text, value):
    x, dec = parse_numbers([text, "1.5"])
    assert dec == "."
    np.testing.assert_equal(x[0], value)


def test_parse_numbers_decimal_comma_only_when_it_reads_more():
    x, dec = parse_numbers(["12,5", "1.234,75", "3,0"])
    assert dec == "," and x.tolist() == [12.5, 1234.75, 3.0]
    # "1,234" reads under both conventions: the decimal point wins (readr's default)
    x, dec = parse_numbers(["1,234", "2,500"])
    assert dec == "." and x.tolist() == [1234.0, 2500.0]


def test_numbers_as_text_parsed_with_warning_and_missing_markers():
    g = np.random.default_rng(1)
    vals = g.gamma(2.0, 1000.0, 120)
    text = [f"${v:,.2f}" for v in vals]
    text[3], text[7] = "n/a", None
    df = pd.DataFrame({"spend": pd.array(text, dtype="str"), "x": g.normal(size=120)})
    before = df.copy()
    table, msgs = _read(df, missing="native", missing_choices=("native",))
    assert table.spec.kinds["spend"] == "numeric"
    col = table.numeric[:, table.numeric_names.index("spend")]
    expect = np.round(vals, 2)
    expect[[3, 7]] = np.nan
    np.testing.assert_allclose(col, expect, rtol=0, atol=1e-9)
    assert len(msgs) == 1 and "['spend']" in msgs[0] and "numbers stored as text" in msgs[0]
    assert "categorical=['spend']" in msgs[0]  # how to undo
    pd.testing.assert_frame_equal(df, before)  # the caller's data untouched


def test_mostly_numbers_kept_categorical_with_warning():
    vals = [str(i) for i in range(1, 6)] * 6 + ["unknown", "tbd"] * 6
    df = pd.DataFrame({"v": pd.array(vals, dtype="str"), "x": np.arange(42.0)})
    table, msgs = _read(df)
    assert table.spec.kinds["v"] == "categorical"
    assert any("too many values do not parse" in m and "['v']" in m for m in msgs)


def test_a_unit_after_the_numbers_is_removed_once_it_is_the_columns_only_unit():
    g = np.random.default_rng(2)
    mass = np.round(g.normal(4000, 600, 200))
    df = pd.DataFrame({"mass": [f"{v:,.0f} g" for v in mass], "x": g.normal(size=200)})
    table, msgs = _read(df)
    np.testing.assert_array_equal(table.numeric[:, table.numeric_names.index("mass")], mass)
    assert any("the unit 'g' removed" in m for m in msgs)
    assert table.spec.screening[0].unit == "g"
    # two units are not converted into one: the column is not parsed
    mixed = [f"{v / 1000:.1f} kg" if i % 2 else f"{v:.0f} g" for i, v in enumerate(mass)]
    d = decide("mass", column_stats(pd.Series(mixed)), ScreenOptions())
    assert d is None or d.action != "parsed"
    # an identifier's prefix is not a unit
    d = decide("id", column_stats(pd.Series([f"C{i}" for i in range(200)])), ScreenOptions())
    assert d.action == "dropped" and d.why == "identifier"


def test_leading_zeros_are_codes_not_numbers():
    zips = pd.array([f"{z:05d}" for z in np.random.default_rng(0).integers(0, 2000, 300)], "str")
    stats = column_stats(pd.Series(zips))
    d = decide("zip", stats, ScreenOptions())
    assert d is not None and d.action != "parsed"


def test_named_numeric_text_column_parses_silently():
    df = pd.DataFrame({"spend": pd.array(["1,200", "3,400.5", "n/a", "12"] * 10, dtype="str")})
    df["x"] = np.arange(40.0)
    table, msgs = _read(df, numeric=["spend"], missing="native", missing_choices=("native",))
    assert not msgs
    assert table.numeric[:4, 0].tolist()[:2] == [1200.0, 3400.5]
    assert np.isnan(table.numeric[2, 0])


# ------------------------------------------------------------------ identifiers, text
def test_identifier_and_free_text_dropped_and_named():
    df, _ = customers(200, extra=("customer_id", "comment"))
    table, msgs = _read(df)
    assert "customer_id" not in table.names and "comment" not in table.names
    ids = [m for m in msgs if "look like identifiers" in m]
    text = [m for m in msgs if "free text" in m]
    assert len(ids) == 1 and "['customer_id']" in ids[0] and "categorical=['customer_id']" in ids[0]
    assert len(text) == 1 and "['comment']" in text[0]
    shown = table.spec.screened
    assert shown.loc["customer_id", "why"] == "identifier"
    assert shown.loc["comment", "why"] == "free text"
    assert "screened, dropped: customer_id (identifier), comment (free text)" in repr(table)


def test_small_tables_are_not_screened():
    """Ten rows with ten distinct labels say nothing: read by dtype, as before."""
    df = pd.DataFrame({"name": list("abcdefghij"), "x": np.arange(10.0)})
    table, msgs = _read(df)
    assert table.names == ["name", "x"] and not msgs


# ------------------------------------------------------------------ many levels
def test_many_levels_threshold_and_lump_min():
    assert many_levels(60, 600) and many_levels(400, 600)
    assert not many_levels(20, 600) and not many_levels(10, 50)
    assert not many_levels(41, 32561)  # Adult's native-country
    assert auto_lump_min(600) == 25 and auto_lump_min(100) == 10


def test_rare_levels_lumped_into_other():
    g = np.random.default_rng(0)
    big = g.choice(["north", "south", "east"], 540)
    rare = [f"v{i}" for i in g.integers(0, 60, 60)]
    df = pd.DataFrame({"town": pd.array(list(big) + rare, dtype="str"), "x": g.normal(size=600)})
    table, msgs = _read(df)
    assert list(table.levels["town"]) == ["east", "north", "south", OTHER]
    codes = table.codes[:, 0]
    assert (codes[540:] == 3).all() and (codes[:540] < 3).all()
    assert any("lumped into '(other)'" in m and "['town']" in m for m in msgs)
    # predict: a level never seen reads as "(other)", a kept one as itself
    new = pd.DataFrame({"town": ["v999", "south"], "x": [0.0, 1.0]})
    t2 = sparseclust._data.table.transform_like(table.spec, new)
    assert t2.codes[:, 0].tolist() == [3, 2]


def test_many_levels_without_a_common_level_dropped_and_lump_min_option():
    df, _ = customers(600, extra=("city60",))
    table, msgs = _read(df)
    assert "city" not in table.names
    assert any("no common level" in m and "['city']" in m for m in msgs)
    table, _ = _read(df, screen={"lump_min": 5})  # levels of 5+ rows kept
    assert "city" in table.names and OTHER not in list(table.levels["city"])[:-1]
    table, msgs = _read(df, screen={"lump_min": None})
    assert "city" in table.names and len(table.levels["city"]) == 60
    assert not [m for m in msgs if "city" in m]


def test_category_dtype_with_many_levels_is_screened_too():
    df, _ = customers(600, extra=("city400",))
    df["city"] = df["city"].astype("category")
    table, _ = _read(df)
    assert "city" not in table.names


# ------------------------------------------------------------------ integer codes
def test_years_and_counts_with_gaps_are_not_codes():
    g = np.random.default_rng(0)
    df = pd.DataFrame({"year": g.integers(2007, 2010, 300), "legs": g.choice([0, 2, 4, 6, 8], 300)})
    df["x"] = g.normal(size=300)
    _, msgs = _read(df)
    assert not msgs
    small = pd.DataFrame({"z": np.arange(40) % 5, "x": np.arange(40.0)})  # 8 rows a value
    assert not _read(small)[1]


def test_integer_code_named_not_changed():
    df, _ = customers(300, extra=("code5",))
    table, msgs = _read(df)
    assert table.spec.kinds["code"] == "numeric"
    assert any("few distinct values" in m and "categorical=['code']" in m for m in msgs)
    _, msgs = _read(df, numeric=["code"])
    assert not msgs
    table, msgs = _read(df, categorical=["code"])
    assert table.spec.kinds["code"] == "categorical" and not msgs


# ------------------------------------------------------------------ overrides
@pytest.mark.parametrize(
    "extra, col", [("customer_id", "customer_id"), ("comment", "comment"), ("city400", "city")]
)
def test_a_named_column_is_read_as_named(extra, col):
    df, _ = customers(200, extra=(extra,))
    table, msgs = _read(df, categorical=[col])
    assert col in table.names and table.spec.kinds[col] == "categorical"
    assert not [m for m in msgs if col in m]


def test_formula_terms_are_read_as_written_dot_is_screened():
    df, _ = customers(200, extra=("customer_id",))
    table, msgs = _read("~ customer_id + spend", data=df)
    assert table.names == ["customer_id", "spend"] and not msgs
    table, msgs = _read("~ . - c0", data=df)
    assert "customer_id" not in table.names and msgs


def test_screen_false_reads_by_dtype():
    df, _ = customers(200, extra=("customer_id", "spend_text"))
    table, msgs = _read(df, screen=False)
    assert table.spec.kinds["customer_id"] == "categorical"
    assert table.spec.kinds["spend"] == "categorical" and not msgs


@pytest.mark.parametrize(
    "bad, err, match",
    [
        ("yes", TypeError, "screen must be True, False or a dict"),
        ({"lumpmin": 3}, ValueError, "screen= options are 'lump_min'"),
        ({"lump_min": 0}, ValueError, "lump_min=0"),
        ({"lump_min": 2.5}, ValueError, "lump_min=2.5"),
    ],
)
def test_bad_screen_values(bad, err, match):
    with pytest.raises(err, match=match):
        screen_options(bad)
    df, _ = customers(50)
    with pytest.raises(err, match=match):
        craft(df, k=2, m=0.5, screen=bad)


def test_every_column_screened_out_is_an_error_with_the_fix():
    df = pd.DataFrame({"id": [f"r{i}" for i in range(50)]})
    with pytest.raises(ValueError, match="every column was screened out.*screen=False"):
        build_table(df)


# ------------------------------------------------------------------ every method
def test_numeric_methods_read_the_messy_table():
    df, seg = customers(300, extra=("customer_id", "spend_text"))
    df = df[["customer_id", "spend", "visits", "n0", "n1"]]
    fits = {}
    for name, call in {
        "sparse_kmeans": lambda: sparse_kmeans(df, k=3, wbound=1.8, scale=True, rng=0),
        "sparse_hclust": lambda: sparse_hclust(df, wbound=1.8, scale=True),
        "kmeans_sparse_permute": lambda: kmeans_sparse_permute(
            df, k=3, wbounds=[1.5, 2.0], nperms=2, scale=True, rng=0
        ),
        "dpmeans": lambda: dpmeans(df, k=3, scale=True, rng=0),
    }.items():
        with pytest.warns(DataWarning) as rec:
            fits[name] = call()
        text = " ".join(str(w.message) for w in rec)
        assert "['customer_id'] look like identifiers" in text, name
        assert "['spend'] hold numbers stored as text" in text, name
    clean, _ = customers(300)
    same = sparse_kmeans(clean[["spend", "visits", "n0", "n1"]], k=3, wbound=1.8, scale=True, rng=0)
    pd.testing.assert_series_equal(fits["sparse_kmeans"].labels, same.labels)
    assert fits["sparse_kmeans"].variables.names == ["spend", "visits", "n0", "n1"]
    assert "Screened out: customer_id (identifier)" in repr(fits["sparse_kmeans"])
    notes = " ".join(fits["dpmeans"].summary().notes)
    assert "Column 'customer_id' dropped (identifier" in notes


@pytest.mark.parametrize("extra", ["customer_id", "comment", "city400", "city60"])
def test_craft_fit_unchanged_by_a_column_screened_out(extra):
    """The column is dropped before the fit: the same fit bit for bit."""
    clean, _ = customers(300, rng=2)
    messy, _ = customers(300, rng=2, extra=(extra,))
    a = craft(clean, k=3, m=0.5, rng=5)
    with pytest.warns(DataWarning):
        b = craft(messy, k=3, m=0.5, rng=5)
    pd.testing.assert_series_equal(a.labels, b.labels)
    assert a.lam == b.lam


def test_craft_numbers_as_text_as_good_as_numbers():
    clean, seg = customers(400, rng=3)
    messy, _ = customers(400, rng=3, extra=("spend_text",))
    a = craft(clean, k=3, m=0.5, rng=0)
    with pytest.warns(DataWarning, match="numbers stored as text"):
        b = craft(messy, k=3, m=0.5, rng=0)
    assert adjusted_rand_index(seg, b.labels) >= adjusted_rand_index(seg, a.labels) - 0.05
    # predict parses the text of new rows the same way
    pd.testing.assert_series_equal(b.predict(messy.head(20)), b.labels.head(20), check_names=False)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.integers(0, 2**16),
    prefix=st.sampled_from(["C", "ID-", "cust_", ""]),
    where=st.integers(0, 12),
)
def test_property_a_unique_string_column_changes_no_fit(seed, prefix, where):
    df, _ = customers(120, rng=seed % 7)
    messy = df.copy()
    ids = [f"{prefix}{i:06d}x" for i in np.random.default_rng(seed).permutation(120)]
    messy.insert(min(where, df.shape[1]), "key", pd.array(ids, dtype="str"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        a = craft(df, k=3, m=0.5, rng=seed, n_init=2)
        b = craft(messy, k=3, m=0.5, rng=seed, n_init=2)
        c = sparse_kmeans(df.select_dtypes("number"), k=3, wbound=2.0, rng=seed)
        d = sparse_kmeans(
            messy[["key", *df.select_dtypes("number").columns]], k=3, wbound=2.0, rng=seed
        )
    pd.testing.assert_series_equal(a.labels, b.labels)
    pd.testing.assert_series_equal(c.labels, d.labels)
    np.testing.assert_array_equal(c.weights.to_numpy(), d.weights.to_numpy())


# ------------------------------------------------------------------ Dask
def test_dask_frame_screened_as_in_memory():
    dd = pytest.importorskip("dask.dataframe")
    g = np.random.default_rng(0)
    df, _ = customers(900, rng=1, extra=("customer_id", "spend_text", "code5"))
    df["town"] = pd.array([f"t{c}" for c in np.minimum(g.geometric(0.08, 900), 60)], "str")
    ddf = dd.from_pandas(df, npartitions=3)
    with warnings.catch_warnings(record=True) as w1:
        warnings.simplefilter("always")
        a = craft(df, k=3, m=0.5, rng=0)
    with warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        b = craft(ddf, k=3, m=0.5, rng=0)

    def screen_msgs(ws):
        return sorted(str(w.message) for w in ws if "Columns [" in str(w.message))

    assert screen_msgs(w1) == screen_msgs(w2) and len(screen_msgs(w1)) == 4
    assert a.variables.screening == b.variables.screening
    assert list(a.variables.levels["town"]) == list(b.variables.levels["town"])
    labels_b = b.labels.compute() if hasattr(b.labels, "compute") else b.labels
    assert adjusted_rand_index(a.labels, labels_b.loc[a.labels.index]) == 1.0


# ------------------------------------------------------------------ preview, shipped data
def test_preview_columns_messy_table():
    df, _ = customers(300, extra=("customer_id", "comment", "spend_text", "city400", "code5"))
    df["when"] = pd.date_range("2024-01-01", periods=300, freq="D")
    df["one"] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a preview warns of nothing
        p = preview_columns(df)
    assert list(p.columns) == ["dtype", "kind", "n_distinct", "missing", "action", "reason"]
    assert list(p.index) == list(df.columns)
    expect = {
        "customer_id": "dropped",
        "comment": "dropped",
        "spend": "parsed",
        "city": "dropped",
        "code": "noted",
        "when": "error",
        "one": "constant",
        "visits": "used",
        "channel": "used",
    }
    assert {c: p.loc[c, "action"] for c in expect} == expect
    assert p.loc["spend", "kind"] == "numeric" and p.loc["customer_id", "kind"] == "not used"
    assert "categorical=['customer_id']" in p.loc["customer_id", "reason"]
    p2 = preview_columns(df.drop(columns="when"), categorical=["customer_id"])
    assert p2.loc["customer_id", "action"] == "used"
    assert p2.loc["customer_id", "reason"] == "set by categorical="


@pytest.mark.parametrize(
    "name",
    [n for n in sparseclust.datasets.list_datasets()["name"] if n != "banknote"],
)
def test_shipped_datasets_lose_no_column(name):
    """Every shipped data set reads as before: no column dropped, parsed or lumped."""
    df = sparseclust.datasets.load_dataset(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        spec = build_table(
            df, missing="native", missing_choices=("native",), allow_constant=True
        ).spec
    assert spec.screening == ()
    assert spec.names == [str(c) for c in df.columns]


def test_column_stats_add_over_pieces():
    s = pd.Series(["a", "b", "a", None, "c", "a"])
    whole = column_stats(s)
    parts = column_stats(s.iloc[:3]) + column_stats(s.iloc[3:])
    assert parts.n_rows == whole.n_rows and parts.counts.sort_index().equals(
        whole.counts.sort_index()
    )
    assert isinstance(parts, ColumnStats)
