"""Tests for the shipped data sets (``sparseclust.datasets``)."""

from __future__ import annotations

from importlib.resources import files

import numpy as np
import pandas as pd
import pytest
from pandas.api import types as pdt

import sparseclust.datasets as ds

# name -> (shape with label, label column, label position, class counts in level order,
#          missing cells); class counts are those of the data README / UCI.
EXPECTED = {
    "spambase": ((4601, 58), "type", -1, {"nonspam": 2788, "spam": 1813}, 0),
    "wine": ((178, 14), "class", -1, {1: 59, 2: 71, 3: 48}, 0),
    "splice": ((3190, 61), "class", -1, {"EI": 767, "IE": 768, "N": 1655}, 0),
    "monk3": ((432, 7), "class", -1, {0: 204, 1: 228}, 0),
    "adult": ((48842, 15), "income", -1, {"<=50K": 37155, ">50K": 11687}, 6465),
    "penguins": ((344, 8), "species", 0, {"Adelie": 152, "Chinstrap": 68, "Gentoo": 124}, 19),
    "heart_disease_cleveland": ((303, 14), "diameter narrowing", -1, {0: 164, 1: 139}, 6),
    "mushroom_complete": ((5644, 23), "class", -1, {"e": 3488, "p": 2156}, 0),
    "soybean_large": (
        (683, 36),
        "Class",
        0,
        {
            "2-4-d-injury": 16,
            "alternarialeaf-spot": 91,
            "anthracnose": 44,
            "bacterial-blight": 20,
            "bacterial-pustule": 20,
            "brown-spot": 92,
            "brown-stem-rot": 44,
            "charcoal-rot": 20,
            "cyst-nematode": 14,
            "diaporthe-pod-&-stem-blight": 15,
            "diaporthe-stem-canker": 20,
            "downy-mildew": 20,
            "frog-eye-leaf-spot": 91,
            "herbicide-injury": 8,
            "phyllosticta-leaf-spot": 20,
            "phytophthora-rot": 88,
            "powdery-mildew": 20,
            "purple-seed-stain": 20,
            "rhizoctonia-root-rot": 20,
        },
        2337,
    ),
    "zoo": (
        (101, 17),
        "type",
        -1,
        {
            "amphibian": 4,
            "bird": 20,
            "fish": 13,
            "insect": 8,
            "mammal": 41,
            "mollusc.et.al": 10,
            "reptile": 5,
        },
        0,
    ),
    "house_votes_84": ((435, 17), "Class", 0, {"democrat": 267, "republican": 168}, 392),
}

# (n_numeric, n_categorical) from the data README's table.
README_TYPES = {
    "spambase": (57, 0),
    "wine": (13, 0),
    "splice": (0, 60),
    "monk3": (0, 6),
    "adult": (6, 8),
    "penguins": (5, 2),
    "heart_disease_cleveland": (6, 7),
    "mushroom_complete": (0, 22),
    "soybean_large": (0, 35),
    "zoo": (1, 15),
    "house_votes_84": (0, 16),
}

NAMES = list(EXPECTED)


def _is_numeric(dtype) -> bool:
    return pdt.is_numeric_dtype(dtype) and not pdt.is_bool_dtype(dtype)


def _is_categorical(dtype) -> bool:
    return isinstance(dtype, pd.CategoricalDtype) or pdt.is_bool_dtype(dtype)


@pytest.fixture(scope="module")
def index() -> pd.DataFrame:
    return ds.list_datasets()


@pytest.fixture(scope="module", params=NAMES)
def loaded(request) -> tuple[str, pd.DataFrame]:
    name = request.param
    return name, getattr(ds, f"load_{name}")()


def test_public_api_lists_every_loader():
    for name in NAMES:
        assert f"load_{name}" in ds.__all__
        assert callable(getattr(ds, f"load_{name}"))
    assert {"list_datasets", "load_dataset"} <= set(ds.__all__)


def test_shape_and_label(loaded):
    name, df = loaded
    shape, label, position, counts, _ = EXPECTED[name]
    assert isinstance(df, pd.DataFrame)
    assert df.shape == shape
    assert df.columns[position] == label
    assert isinstance(df.index, pd.RangeIndex)
    assert df.columns.is_unique


def test_label_is_category_with_expected_counts(loaded):
    name, df = loaded
    _, label, _, counts, _ = EXPECTED[name]
    y = df[label]
    assert isinstance(y.dtype, pd.CategoricalDtype)
    assert not y.dtype.ordered
    assert y.notna().all()
    assert list(y.cat.categories) == list(counts)
    assert y.value_counts(sort=False).to_dict() == counts


def test_column_order_and_names_match_file(loaded):
    name, df = loaded
    with (files("sparseclust.datasets") / "data" / f"{name}.csv.gz").open("rb") as fh:
        header = pd.read_csv(fh, compression="gzip", nrows=0)
    renamed = ds._SPECS[name].rename  # the loader's names for the file's (house votes)
    assert list(df.columns) == [renamed.get(c, c) for c in header.columns]


def test_every_column_has_a_supported_type(loaded):
    name, df = loaded
    for col in df.columns:
        dt = df[col].dtype
        assert (
            dt == np.float64
            or dt == np.int64
            or dt == np.bool_
            or isinstance(dt, pd.CategoricalDtype)
        ), (name, col, dt)
        if isinstance(dt, pd.CategoricalDtype):
            cats = list(dt.categories)
            assert cats == sorted(cats), (name, col)
            assert not dt.ordered, (name, col)
            # levels are the observed values: no unused level
            assert df[col].value_counts().min() > 0, (name, col)


def test_missing_values_stay_missing(loaded):
    name, df = loaded
    assert int(df.isna().sum().sum()) == EXPECTED[name][4]


def test_index_matches_loaders(index, loaded):
    name, df = loaded
    row = index.set_index("name").loc[name]
    label = row["label"]
    assert label == EXPECTED[name][1]
    X = df.drop(columns=label)
    n_num = sum(_is_numeric(t) for t in X.dtypes)
    n_cat = sum(_is_categorical(t) for t in X.dtypes)
    assert n_num + n_cat == X.shape[1]
    assert row["n_rows"] == len(df)
    assert row["n_features"] == X.shape[1]
    assert row["n_numeric"] == n_num
    assert row["n_categorical"] == n_cat
    assert (n_num, n_cat) == README_TYPES[name]


def test_index_columns_and_rows(index):
    assert list(index.columns) == [
        "name",
        "n_rows",
        "n_features",
        "n_numeric",
        "n_categorical",
        "label",
        "description",
        "source",
        "licence",
    ]
    assert list(index["name"]) == NAMES
    for col in ["n_rows", "n_features", "n_numeric", "n_categorical"]:
        assert pdt.is_integer_dtype(index[col].dtype)
    assert index[["description", "source", "licence"]].notna().all().all()
    uci = index["name"] != "penguins"
    assert index.loc[uci, "licence"].eq("CC BY 4.0").all()
    assert index.loc[uci, "source"].str.contains("UCI Machine Learning Repository").all()
    assert index.loc[~uci, "licence"].eq("CC0 1.0").all()


def test_list_datasets_is_fresh():
    a = ds.list_datasets()
    a.loc[0, "n_rows"] = -1
    a["extra"] = 1
    b = ds.list_datasets()
    assert b.loc[0, "n_rows"] == 4601
    assert "extra" not in b.columns


@pytest.mark.parametrize("name", NAMES)
def test_each_call_returns_a_fresh_frame(name):
    loader = getattr(ds, f"load_{name}")
    a = loader()
    label = EXPECTED[name][1]
    first = a.columns[0]
    original = a.copy()
    a.iloc[:, 0] = a.iloc[::-1, 0].to_numpy()
    del a[a.columns[1]]
    a["new"] = 0
    a[label] = a[label].cat.rename_categories(lambda v: f"x{v}")
    b = loader()
    assert b is not a
    pd.testing.assert_frame_equal(b, original)
    assert first in b.columns
    assert b.shape == EXPECTED[name][0]


@pytest.mark.parametrize("name", NAMES)
def test_as_frame_false_returns_x_y(name):
    loader = getattr(ds, f"load_{name}")
    df = loader()
    label = EXPECTED[name][1]
    result = loader(as_frame=False)
    assert isinstance(result, tuple) and len(result) == 2
    X, y = result
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert label not in X.columns
    assert y.name == label
    pd.testing.assert_frame_equal(X, df.drop(columns=label))
    pd.testing.assert_series_equal(y, df[label])


def test_load_dataset_dispatches():
    for name in ["wine", "monk3", "zoo"]:
        pd.testing.assert_frame_equal(ds.load_dataset(name), getattr(ds, f"load_{name}")())
    X, y = ds.load_dataset("wine", as_frame=False)
    assert X.shape == (178, 13) and y.name == "class"


@pytest.mark.parametrize("bad", ["iris", "Wine", "load_wine", "", None, 3])
def test_load_dataset_unknown_name(bad):
    with pytest.raises(ValueError, match="Available:") as err:
        ds.load_dataset(bad)
    for name in NAMES:
        assert name in str(err.value)


def test_loaders_are_keyword_only():
    with pytest.raises(TypeError):
        ds.load_wine(False)


def test_shipped_files():
    data = files("sparseclust.datasets") / "data"
    shipped = sorted(p.name for p in data.iterdir() if not p.name.startswith("__"))
    assert shipped == sorted([f"{n}.csv.gz" for n in NAMES] + ["datasets.csv"])
    assert not any("banknote" in p.name.lower() for p in data.iterdir())


# --- per data set type details -------------------------------------------------------


def test_numeric_only_data_sets_are_float():
    for name in ["spambase", "wine"]:
        df = getattr(ds, f"load_{name}")()
        X = df.drop(columns=EXPECTED[name][1])
        assert (X.dtypes == np.float64).all()


def test_monk3_attributes_are_categorical_integer_levels():
    df = ds.load_monk3()
    levels = {"a1": 3, "a2": 3, "a3": 2, "a4": 3, "a5": 4, "a6": 2}
    for col, k in levels.items():
        assert isinstance(df[col].dtype, pd.CategoricalDtype)
        assert list(df[col].cat.categories) == list(range(1, k + 1))
        assert pdt.is_integer_dtype(df[col].cat.categories.dtype)
    # the label follows the MONK-3 rule
    a2, a4, a5 = (df[c].astype(int) for c in ["a2", "a4", "a5"])
    rule = ((a5 == 3) & (a4 == 1)) | ((a5 != 4) & (a2 != 3))
    assert (df["class"].astype(int) == rule.astype(int)).all()


def test_soybean_coded_levels_are_integer_categories_with_missing():
    df = ds.load_soybean_large()
    X = df.drop(columns="Class")
    for col in X.columns:
        assert isinstance(X[col].dtype, pd.CategoricalDtype)
        assert pdt.is_integer_dtype(X[col].cat.categories.dtype), col
    assert list(X["date"].cat.categories) == list(range(7))
    assert list(X["fruit.spots"].cat.categories) == [0, 1, 2, 4]
    assert X["hail"].isna().sum() == 121
    assert X["leaves"].notna().all()


def test_heart_disease_types():
    df = ds.load_heart_disease_cleveland()
    numeric = ["age", "rest SBP", "cholesterol", "max HR", "ST by exercise"]
    numeric += ["major vessels colored"]
    for col in numeric:
        assert df[col].dtype == np.float64, col
    for col in ["fasting blood sugar > 120", "exerc ind ang"]:
        assert list(df[col].cat.categories) == [0, 1]
    for col in ["gender", "chest pain", "rest ECG", "slope peak exc ST", "thal"]:
        assert isinstance(df[col].dtype, pd.CategoricalDtype), col
    assert df["major vessels colored"].isna().sum() == 4
    assert df["thal"].isna().sum() == 2
    assert list(df["thal"].cat.categories) == ["fixed defect", "normal", "reversable defect"]


def test_zoo_types():
    df = ds.load_zoo()
    X = df.drop(columns="type")
    assert (X.drop(columns="legs").dtypes == np.bool_).all()
    assert X.shape[1] - 1 == 15
    assert df["legs"].dtype == np.int64
    assert sorted(df["legs"].unique()) == [0, 2, 4, 5, 6, 8]


def test_penguins_types():
    df = ds.load_penguins()
    for col in ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]:
        assert df[col].dtype == np.float64
        assert df[col].isna().sum() == 2
    assert df["year"].dtype == np.int64
    assert list(df["island"].cat.categories) == ["Biscoe", "Dream", "Torgersen"]
    assert list(df["sex"].cat.categories) == ["female", "male"]
    assert df["sex"].isna().sum() == 11


def test_adult_types_and_missing():
    df = ds.load_adult()
    numeric = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss"]
    numeric += ["hours-per-week"]
    assert [c for c in df.columns if df[c].dtype == np.float64] == numeric
    missing = df.isna().sum()
    assert missing[missing > 0].to_dict() == {
        "workclass": 2799,
        "occupation": 2809,
        "native-country": 857,
    }
    assert len(df["native-country"].cat.categories) == 41


def test_splice_and_votes_strings_are_categories():
    sp = ds.load_splice()
    assert all(isinstance(t, pd.CategoricalDtype) for t in sp.dtypes)
    assert list(sp["pos03"].cat.categories) == ["A", "C", "G", "T"]
    # ambiguity codes are kept as levels ("N" is not read as missing)
    assert "N" in sp["pos14"].cat.categories
    ambiguous = ~sp.drop(columns="class").isin(list("ACGT")).to_numpy()
    assert int(ambiguous.any(axis=1).sum()) == 15
    hv = ds.load_house_votes_84()
    for col in hv.columns[1:]:
        assert list(hv[col].cat.categories) == ["n", "y"]
    assert hv["export_administration_act_south_africa"].isna().sum() == 104


def test_mushroom_all_categorical():
    df = ds.load_mushroom_complete()
    assert all(isinstance(t, pd.CategoricalDtype) for t in df.dtypes)
    assert list(df["A16"].cat.categories) == ["p"]
