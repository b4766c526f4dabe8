"""Tests of sparseclust.metrics against numbers the code under test did not produce.

References used: contingency tables worked by hand, brute force over all matchings
(itertools.permutations), pair counting over all item pairs, textbook formulas for
ARI and NMI, and scikit-learn called directly on the raw labels.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from sparseclust.metrics import (
    adjusted_nmi,
    ami,
    ari,
    cluster_report,
    contingency_table,
    macro_f1,
    match_labels,
    nmi,
    purity,
    rand_index,
)

SCALAR_METRICS = [purity, nmi, adjusted_nmi, ari, rand_index, macro_f1]
ALL_FUNCTIONS = [*SCALAR_METRICS, match_labels, contingency_table, cluster_report]
REPORT_ROWS = ["purity", "nmi", "adjusted_nmi", "ari", "rand_index", "macro_f1"]


def labels_from_table(table, classes, clusters):
    """Label vectors whose contingency table is `table` (rows classes, cols clusters)."""
    true, pred = [], []
    for i, cls in enumerate(classes):
        for j, clu in enumerate(clusters):
            true += [cls] * table[i][j]
            pred += [clu] * table[i][j]
    return true, pred


def random_labels(rng, n, k):
    return rng.integers(0, k, size=n)


# --------------------------------------------------------------------------------------
# Hand-worked examples
# --------------------------------------------------------------------------------------

# 3 classes x 3 clusters, n = 11
#            c1  c2  c3 | rows
#   A         3   1   0 |  4
#   B         0   3   1 |  4
#   C         1   0   2 |  3
#   cols      4   4   3
# purity = (3 + 3 + 2) / 11 = 8/11
# best matching A-c1, B-c2, C-c3 (8 items); F1: A 2*3/(4+4)=3/4, B 3/4, C 2*2/(3+3)=2/3
# macro-F1 = (3/4 + 3/4 + 2/3) / 3 = 13/18
TABLE_3X3 = [[3, 1, 0], [0, 3, 1], [1, 0, 2]]


def test_hand_worked_3x3_purity_and_macro_f1():
    true, pred = labels_from_table(TABLE_3X3, ["A", "B", "C"], ["c1", "c2", "c3"])
    assert purity(true, pred) == pytest.approx(8 / 11)
    assert macro_f1(true, pred) == pytest.approx(13 / 18)


def test_hand_worked_3x3_contingency_and_matching():
    true, pred = labels_from_table(TABLE_3X3, ["A", "B", "C"], ["c1", "c2", "c3"])
    tab = contingency_table(true, pred)
    assert tab.index.tolist() == ["A", "B", "C"]
    assert tab.columns.tolist() == ["c1", "c2", "c3"]
    np.testing.assert_array_equal(tab.to_numpy(), np.array(TABLE_3X3))
    mapped = match_labels(true, pred)
    expected = [{"c1": "A", "c2": "B", "c3": "C"}[p] for p in pred]
    assert list(mapped) == expected


def test_hand_worked_more_clusters_than_classes():
    # A: [4, 0, 1], B: [1, 3, 1]; match A-c1, B-c2, c3 unmatched.
    # purity = (4 + 3 + 1) / 10; F1 A = 8/(5+5) = 0.8, B = 6/(5+3) = 0.75
    true, pred = labels_from_table([[4, 0, 1], [1, 3, 1]], ["A", "B"], [1, 2, 3])
    assert purity(true, pred) == pytest.approx(0.8)
    assert macro_f1(true, pred) == pytest.approx((0.8 + 0.75) / 2)
    mapped = match_labels(true, pred)
    for p, m in zip(pred, mapped, strict=True):
        if p == 3:
            assert pd.isna(m)
        else:
            assert m == {1: "A", 2: "B"}[p]
    # unmatched items are wrong predictions that belong to no class
    as_sentinel = ["<none>" if pd.isna(m) else m for m in mapped]
    ref = skm.f1_score(true, as_sentinel, labels=["A", "B"], average="macro")
    assert macro_f1(true, pred) == pytest.approx(ref)


def test_hand_worked_more_classes_than_clusters():
    # A: [3, 0], B: [0, 2], C: [1, 1]; match A-c1, B-c2 (5 items), C unmatched -> F1 0
    # F1 A = 6/(3+4) = 6/7, B = 4/(2+3) = 4/5; macro = (6/7 + 4/5) / 3 = 58/105
    true, pred = labels_from_table([[3, 0], [0, 2], [1, 1]], ["A", "B", "C"], [1, 2])
    assert macro_f1(true, pred) == pytest.approx(58 / 105)
    assert purity(true, pred) == pytest.approx((3 + 2) / 7)  # n = 7
    assert set(match_labels(true, pred)) == {"A", "B"}


def test_matching_ties_broken_by_macro_f1():
    # A: [2, 1], B: [1, 0]. Matchings A-c1/B-c2 and A-c2/B-c1 both match 2 items.
    # A-c1/B-c2: F1 A = 4/6, B = 0/2 -> macro 1/3
    # A-c2/B-c1: F1 A = 2/4, B = 2/4 -> macro 1/2  (documented choice: the larger)
    for clusters in (["c1", "c2"], ["c2", "c1"]):
        true, pred = labels_from_table([[2, 1], [1, 0]], ["A", "B"], clusters)
        assert macro_f1(true, pred) == pytest.approx(0.5)


def test_hand_worked_rand_and_ari():
    # true a a a b, pred 1 1 2 2: of the 6 pairs, (0,1), (0,3), (1,3) agree -> RI 1/2
    # ARI: sum C(n_ij,2) = 1, rows 3 + 0, cols 1 + 1; expected 3*2/6 = 1 -> ARI 0
    true, pred = ["a", "a", "a", "b"], [1, 1, 2, 2]
    assert rand_index(true, pred) == pytest.approx(0.5)
    assert ari(true, pred) == pytest.approx(0.0, abs=1e-12)
    assert purity(true, pred) == pytest.approx(0.75)
    # matched a-1 (F1 4/5), b-2 (F1 2/3)
    assert macro_f1(true, pred) == pytest.approx((4 / 5 + 2 / 3) / 2)


def test_independent_labels_give_zero_information():
    true = ["a", "a", "b", "b"]
    pred = [0, 1, 0, 1]
    assert nmi(true, pred) == pytest.approx(0.0, abs=1e-12)
    assert ari(true, pred) == pytest.approx(-0.5)


# --------------------------------------------------------------------------------------
# Independent reference implementations
# --------------------------------------------------------------------------------------


def brute_force_macro_f1(true, pred):
    """Max matched count over all injective matchings; ties -> largest macro-F1."""
    classes = sorted(set(true))
    clusters = sorted(set(pred))
    counts = Counter(zip(true, pred, strict=True))
    size_t = Counter(true)
    size_p = Counter(pred)
    best = (-1, -1.0)
    k, m = len(classes), len(clusters)
    if k <= m:
        matchings = (
            list(zip(classes, perm, strict=True)) for perm in itertools.permutations(clusters, k)
        )
    else:
        matchings = (
            list(zip(perm, clusters, strict=True)) for perm in itertools.permutations(classes, m)
        )
    for matching in matchings:
        matched = sum(counts[(c, q)] for c, q in matching)
        f1 = sum(2 * counts[(c, q)] / (size_t[c] + size_p[q]) for c, q in matching) / k
        if matched > best[0] or (matched == best[0] and f1 > best[1] + 1e-12):
            best = (matched, f1)
    return best


def pair_counting_rand(true, pred):
    agree = total = 0
    for i, j in itertools.combinations(range(len(true)), 2):
        total += 1
        agree += (true[i] == true[j]) == (pred[i] == pred[j])
    return agree / total


def formula_ari(true, pred):
    n = len(true)
    index = sum(math.comb(v, 2) for v in Counter(zip(true, pred, strict=True)).values())
    a = sum(math.comb(v, 2) for v in Counter(true).values())
    b = sum(math.comb(v, 2) for v in Counter(pred).values())
    expected = a * b / math.comb(n, 2)
    maximum = (a + b) / 2
    if maximum == expected:
        return 1.0
    return (index - expected) / (maximum - expected)


def entropy(labels):
    n = len(labels)
    return -sum(v / n * math.log(v / n) for v in Counter(labels).values())


def formula_nmi(true, pred, method):
    n = len(true)
    mi = 0.0
    pt, pp = Counter(true), Counter(pred)
    for (t, p), v in Counter(zip(true, pred, strict=True)).items():
        mi += v / n * math.log(v * n / (pt[t] * pp[p]))
    h1, h2 = entropy(true), entropy(pred)
    norm = {
        "arithmetic": (h1 + h2) / 2,
        "geometric": math.sqrt(h1 * h2),
        "min": min(h1, h2),
        "max": max(h1, h2),
    }[method]
    return mi / norm


def random_cases(n_cases, seed, max_k=4, max_n=14):
    rng = np.random.default_rng(seed)
    for _ in range(n_cases):
        n = int(rng.integers(1, max_n + 1))
        true = random_labels(rng, n, int(rng.integers(1, max_k + 1))).tolist()
        pred = random_labels(rng, n, int(rng.integers(1, max_k + 1))).tolist()
        yield true, pred


@pytest.mark.parametrize("seed", range(4))
def test_macro_f1_matches_brute_force_over_permutations(seed):
    for true, pred in random_cases(60, seed, max_k=5):
        best_matched, best_f1 = brute_force_macro_f1(true, pred)
        assert macro_f1(true, pred) == pytest.approx(best_f1, abs=1e-12)
        # match_labels realises a matching with the maximum matched count
        mapped = match_labels(true, pred)
        hits = sum(m == t for m, t in zip(mapped, true, strict=True) if not pd.isna(m))
        assert hits == best_matched


@pytest.mark.parametrize("seed", range(3))
def test_macro_f1_equals_sklearn_f1_of_matched_labels(seed):
    for true, pred in random_cases(40, seed):
        mapped = match_labels(true, pred)
        as_sentinel = [-1 if pd.isna(m) else int(m) for m in mapped]
        ref = skm.f1_score(true, as_sentinel, labels=sorted(set(true)), average="macro")
        assert macro_f1(true, pred) == pytest.approx(ref)


def test_purity_brute_force():
    for true, pred in random_cases(80, 11):
        expected = sum(
            max(Counter(t for t, p in zip(true, pred, strict=True) if p == q).values())
            for q in set(pred)
        ) / len(true)
        assert purity(true, pred) == pytest.approx(expected)


def test_rand_and_ari_against_pair_counting():
    for true, pred in random_cases(80, 12):
        if len(true) < 2:
            continue
        assert rand_index(true, pred) == pytest.approx(pair_counting_rand(true, pred))
        assert ari(true, pred) == pytest.approx(formula_ari(true, pred), abs=1e-12)


@pytest.mark.parametrize("method", ["arithmetic", "geometric", "min", "max"])
def test_nmi_against_entropy_formula(method):
    for true, pred in random_cases(80, 13):
        if len(set(true)) < 2 or len(set(pred)) < 2:
            continue  # degenerate normaliser; sklearn's conventions apply
        expected = formula_nmi(true, pred, method)
        assert nmi(true, pred, average_method=method) == pytest.approx(expected)


@pytest.mark.parametrize("method", ["arithmetic", "geometric", "min", "max"])
def test_adjusted_nmi_agrees_with_sklearn_on_raw_string_labels(method):
    for true, pred in random_cases(40, 14):
        t = [f"class {v}" for v in true]
        p = [f"cl-{v}" for v in pred]
        ref = skm.adjusted_mutual_info_score(t, p, average_method=method)
        assert adjusted_nmi(t, p, average_method=method) == pytest.approx(ref, abs=1e-12)
        assert ami(t, p, average_method=method) == pytest.approx(ref, abs=1e-12)


def test_ami_is_adjusted_nmi():
    assert ami is adjusted_nmi


# --------------------------------------------------------------------------------------
# Invariances and special cases
# --------------------------------------------------------------------------------------


def relabel(labels, rng, prefix):
    uniq = sorted(set(labels))
    new = rng.permutation(len(uniq))
    mapping = {u: f"{prefix}{new[i]}" for i, u in enumerate(uniq)}
    return [mapping[v] for v in labels]


@pytest.mark.parametrize("seed", range(3))
def test_invariant_to_relabelling(seed):
    rng = np.random.default_rng(100 + seed)
    for true, pred in random_cases(40, 200 + seed, max_k=5):
        before = cluster_report(true, pred)
        after_pred = cluster_report(true, relabel(pred, rng, "z"))
        after_both = cluster_report(relabel(true, rng, "t"), relabel(pred, rng, "p"))
        pd.testing.assert_series_equal(before, after_pred, atol=1e-12, rtol=0)
        pd.testing.assert_series_equal(before, after_both, atol=1e-12, rtol=0)


@pytest.mark.parametrize(
    ("true", "pred"),
    [
        (["a", "a", "b", "c", "c"], [7, 7, 3, 1, 1]),
        ([0, 0, 1, 1], [1, 1, 0, 0]),
        (pd.Series(["x", "y", "x"]), pd.Series([2.5, -1.0, 2.5])),
        ([5, 5, 5], ["only", "only", "only"]),
        ([1], [2]),
    ],
)
def test_perfect_clustering_scores_one(true, pred):
    for f in SCALAR_METRICS:
        value = f(true, pred)
        assert value == pytest.approx(1.0), f.__name__
    report = cluster_report(true, pred)
    assert report.index.tolist() == REPORT_ROWS
    np.testing.assert_allclose(report.to_numpy(), 1.0)
    assert list(match_labels(true, pred)) == list(true)


def test_return_types_are_python_floats():
    true, pred = labels_from_table(TABLE_3X3, ["A", "B", "C"], [1, 2, 3])
    for f in SCALAR_METRICS:
        assert type(f(true, pred)) is float, f.__name__


def test_cluster_report_matches_individual_functions():
    true, pred = labels_from_table([[4, 0, 1], [1, 3, 1]], ["A", "B"], [1, 2, 3])
    report = cluster_report(true, pred, average_method="geometric")
    assert report.name == "score"
    assert report.index.name == "metric"
    assert report.dtype == np.float64
    expected = {
        "purity": purity(true, pred),
        "nmi": nmi(true, pred, average_method="geometric"),
        "adjusted_nmi": adjusted_nmi(true, pred, average_method="geometric"),
        "ari": ari(true, pred),
        "rand_index": rand_index(true, pred),
        "macro_f1": macro_f1(true, pred),
    }
    assert report.to_dict() == pytest.approx(expected)


# --------------------------------------------------------------------------------------
# Label types
# --------------------------------------------------------------------------------------


def test_string_and_categorical_labels_give_same_scores_as_integers():
    true_int, pred_int = labels_from_table(TABLE_3X3, [0, 1, 2], [0, 1, 2])
    true_str = [["A", "B", "C"][v] for v in true_int]
    pred_str = [["c1", "c2", "c3"][v] for v in pred_int]
    true_cat = pd.Series(pd.Categorical(true_str, categories=["C", "B", "A", "unused"]))
    pred_cat = pd.Series(pd.Categorical(pred_str))
    ref = cluster_report(true_int, pred_int)
    pd.testing.assert_series_equal(cluster_report(true_str, pred_str), ref)
    pd.testing.assert_series_equal(cluster_report(true_cat, pred_cat), ref)
    pd.testing.assert_series_equal(
        cluster_report(np.array(true_str), np.array(pred_str, dtype=object)), ref
    )


def test_categorical_contingency_follows_category_order_and_drops_unused():
    true = pd.Series(pd.Categorical(["b", "a", "b"], categories=["c", "b", "a"]), name="cls")
    tab = contingency_table(true, [1, 2, 1])
    assert tab.index.tolist() == ["b", "a"]
    assert tab.index.name == "cls"
    assert tab.columns.name == "pred"
    np.testing.assert_array_equal(tab.to_numpy(), [[2, 0], [0, 1]])


def test_contingency_table_agrees_with_crosstab():
    rng = np.random.default_rng(5)
    true = pd.Series(rng.choice(["u", "v", "w"], size=50), name="truth")
    pred = pd.Series(rng.integers(0, 4, size=50), name="cluster")
    ref = pd.crosstab(true, pred)
    tab = contingency_table(true, pred)
    pd.testing.assert_frame_equal(tab, ref, check_dtype=False, check_index_type=False)


def test_mixed_type_labels():
    true = [1, "1", 1, "1"]  # 1 and "1" are different labels
    pred = ["p", "q", "p", "q"]
    assert purity(true, pred) == 1.0
    assert macro_f1(true, pred) == 1.0


def test_match_labels_output_types():
    true = pd.Series(["a", "a", "b", "b"], index=[10, 11, 12, 13], name="truth")
    pred = pd.Series([1, 1, 0, 0], index=[10, 11, 12, 13], name="km")
    out = match_labels(true, pred)
    assert isinstance(out, pd.Series)
    assert out.index.tolist() == [10, 11, 12, 13]
    assert out.name == "km"
    assert out.tolist() == ["a", "a", "b", "b"]

    arr = match_labels(np.array([3, 3, 4]), np.array([0, 0, 1]))
    assert isinstance(arr, np.ndarray)
    assert arr.tolist() == [3, 3, 4]

    # only labels_true is a Series: its index is used
    out2 = match_labels(true, [1, 1, 0, 0])
    assert isinstance(out2, pd.Series)
    assert out2.index.tolist() == [10, 11, 12, 13]


def test_match_labels_keeps_categorical_and_nullable_dtypes():
    true = pd.Series(pd.Categorical(["x", "x", "y", "y"]))
    out = match_labels(true, [0, 0, 1, 2])
    assert isinstance(out.dtype, pd.CategoricalDtype)
    assert out.iloc[:3].tolist() == ["x", "x", "y"]
    assert pd.isna(out.iloc[3])

    true_int = pd.Series([1, 1, 2, 2], dtype="Int64")
    out_int = match_labels(true_int, [0, 0, 1, 2])
    assert out_int.dtype == "Int64"
    assert out_int.isna().tolist() == [False, False, False, True]


# --------------------------------------------------------------------------------------
# Missing values
# --------------------------------------------------------------------------------------


def nullable_pair():
    true = pd.Series([1, 1, pd.NA, 2, 2, 2, 1], dtype="Int64", index=list("abcdefg"))
    pred = pd.Series(["x", "x", "y", None, "y", "y", "y"], index=list("abcdefg"))
    return true, pred


@pytest.mark.parametrize("func", ALL_FUNCTIONS, ids=lambda f: f.__name__)
def test_missing_values_raise_by_default(func):
    true, pred = nullable_pair()
    with pytest.raises(ValueError, match=r"labels_true has 1 .*labels_pred has 1 .*dropna=True"):
        func(true, pred)


def test_missing_message_counts_pairs():
    with pytest.raises(ValueError, match=r"has 2 and labels_pred has 1 missing values \(2 pairs"):
        purity([None, np.nan, 1, 2], [0, np.nan, 1, 1])


@pytest.mark.parametrize("missing", [None, np.nan, pd.NA, pd.NaT])
def test_every_missing_marker_is_detected(missing):
    with pytest.raises(ValueError, match="missing"):
        ari(["a", missing, "b"], [1, 2, 3])
    assert ari(["a", missing, "b"], [1, 2, 3], dropna=True) == 1.0


def test_dropna_equals_manual_filtering():
    true, pred = nullable_pair()
    keep = true.notna() & pred.notna()
    t_ref = [int(v) for v in true[keep]]
    p_ref = list(pred[keep])
    assert t_ref == [1, 1, 2, 2, 1] and p_ref == ["x", "x", "y", "y", "y"]
    pd.testing.assert_series_equal(
        cluster_report(true, pred, dropna=True), cluster_report(t_ref, p_ref)
    )
    # by hand: x -> {1, 1}, y -> {2, 2, 1}; purity (2 + 2)/5
    # match 1-x (F1 4/(3+2)), 2-y (F1 4/(2+3)) -> macro 0.8
    assert purity(true, pred, dropna=True) == pytest.approx(0.8)
    assert macro_f1(true, pred, dropna=True) == pytest.approx(0.8)


def test_match_labels_dropna_keeps_positions():
    true, pred = nullable_pair()
    out = match_labels(true, pred, dropna=True)
    assert out.index.tolist() == list("abcdefg")
    assert out.dtype == "Int64"
    assert out.isna().tolist() == [False, False, True, True, False, False, False]
    assert out.dropna().tolist() == [1, 1, 2, 2, 2]


def test_contingency_dropna():
    true, pred = nullable_pair()
    tab = contingency_table(true, pred, dropna=True)
    np.testing.assert_array_equal(tab.to_numpy(), [[2, 1], [0, 2]])


def test_all_missing_after_dropna():
    with pytest.raises(ValueError, match="no pairs left"):
        purity([None, 1], [0, None], dropna=True)


# --------------------------------------------------------------------------------------
# Errors and input handling
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("func", ALL_FUNCTIONS, ids=lambda f: f.__name__)
def test_length_mismatch_names_both_lengths(func):
    with pytest.raises(
        ValueError, match=r"same length.*got 3 \(labels_true\) and 2 \(labels_pred\)"
    ):
        func([1, 2, 3], [1, 2])


@pytest.mark.parametrize("func", ALL_FUNCTIONS, ids=lambda f: f.__name__)
def test_empty_input(func):
    with pytest.raises(ValueError, match="empty"):
        func([], [])


@pytest.mark.parametrize(
    "bad",
    [np.zeros((3, 2)), [[1, 2], [3, 4], [5, 6]], pd.DataFrame({"a": [1, 2, 3]}), 5],
    ids=["2d-array", "nested-list", "dataframe", "scalar"],
)
def test_not_one_dimensional(bad):
    with pytest.raises(ValueError, match="labels_pred must be 1-D"):
        purity([1, 2, 3], bad)
    with pytest.raises(ValueError, match="labels_true must be 1-D"):
        purity(bad, [1, 2, 3])


def test_series_with_different_indexes_raise():
    true = pd.Series([0, 0, 1], index=[0, 1, 2])
    pred = pd.Series([0, 0, 1], index=[2, 1, 0])
    with pytest.raises(
        ValueError, match=r"different indexes.*align them first.*y\.loc\[labels\.index\]"
    ):
        ari(true, pred)
    # aligned as suggested, it works
    assert ari(true, pred.loc[true.index]) == pytest.approx(
        skm.adjusted_rand_score([0, 0, 1], [1, 0, 0])
    )


def test_series_and_array_compared_by_position():
    true = pd.Series(["a", "a", "b"], index=[30, 10, 20])
    assert purity(true, [0, 0, 1]) == 1.0
    assert purity([0, 0, 1], true) == 1.0
    same = pd.Series([5, 5, 6], index=[30, 10, 20])
    assert macro_f1(true, same) == 1.0


def test_invalid_average_method_raises():
    with pytest.raises(ValueError):
        nmi([0, 1], [0, 1], average_method="median")


def test_inputs_not_mutated():
    true, pred = nullable_pair()
    true_copy, pred_copy = true.copy(), pred.copy()
    arr_t = np.array([0, 0, 1, 1, 2])
    arr_p = np.array(["b", "a", "a", "c", "c"], dtype=object)
    arr_t_copy, arr_p_copy = arr_t.copy(), arr_p.copy()
    list_t = ["x", "y", None, "x"]
    list_p = [1, 2, 2, 1]
    list_t_copy, list_p_copy = list(list_t), list(list_p)
    cat = pd.Series(pd.Categorical(["u", "v", "u", "v", "w"]))
    cat_copy = cat.copy()

    for func in ALL_FUNCTIONS:
        func(true, pred, dropna=True)
        func(arr_t, arr_p)
        func(list_t, list_p, dropna=True)
        func(cat, arr_p)

    pd.testing.assert_series_equal(true, true_copy)
    pd.testing.assert_series_equal(pred, pred_copy)
    np.testing.assert_array_equal(arr_t, arr_t_copy)
    np.testing.assert_array_equal(arr_p, arr_p_copy)
    assert list_t == list_t_copy and list_p == list_p_copy
    pd.testing.assert_series_equal(cat, cat_copy)


def test_tuple_labels_and_nan_among_strings():
    true = [("a", 1), ("a", 1), ("b", 2)]
    assert purity(true, [0, 0, 1]) == 1.0
    assert match_labels(true, [0, 0, 1]).tolist() == true
    # a NaN among strings is missing, not the string "nan"
    with pytest.raises(ValueError, match="labels_true has 1"):
        purity(["a", float("nan"), "b"], [0, 0, 1])
