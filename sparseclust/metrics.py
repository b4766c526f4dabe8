"""Compare a clustering with known classes.

Every metric takes ``(labels_true, labels_pred)``: two 1-D array-likes or pandas
Series of the same length holding any hashable labels (integers, strings, pandas
categoricals, nullable ``Int64``, ...). Labels are only compared for equality, so
renaming the clusters never changes a score. Every function returns a plain Python
:class:`float` (except :func:`match_labels`, :func:`contingency_table` and
:func:`cluster_report`).

Input rules, shared by every function:

* both inputs must be 1-D, non-empty and of the same length;
* they are compared **by position**; if both are pandas Series their indexes must be
  equal, otherwise a :class:`ValueError` asks you to align them first (for example
  ``y.loc[labels.index]``);
* missing labels (``None``, ``NaN``, ``pd.NA``, ``NaT``) raise a :class:`ValueError`
  unless ``dropna=True``, which drops every pair with a missing entry on either side;
* the inputs are never modified.

Metrics:

=====================  ==========================================================
:func:`purity`         share of items in the majority class of their cluster
:func:`nmi`            normalised mutual information (scikit-learn)
:func:`adjusted_nmi`   mutual information adjusted for chance (scikit-learn), alias
                       :func:`ami`
:func:`ari`            adjusted Rand index (scikit-learn)
:func:`rand_index`     Rand index (scikit-learn)
:func:`macro_f1`       macro-F1 after optimal one-to-one matching of clusters to
                       classes (Hungarian algorithm)
=====================  ==========================================================

Helpers: :func:`contingency_table`, :func:`match_labels` and :func:`cluster_report`.

Examples
--------
>>> from sparseclust.metrics import cluster_report
>>> cluster_report(["a", "a", "b", "b"], [1, 1, 2, 2])
metric
purity          1.0
nmi             1.0
adjusted_nmi    1.0
ari             1.0
rand_index      1.0
macro_f1        1.0
Name: score, dtype: float64
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from sparseclust._data.typing import ArrayLike

__all__ = [
    "adjusted_nmi",
    "ami",
    "ari",
    "cluster_report",
    "contingency_table",
    "macro_f1",
    "match_labels",
    "nmi",
    "purity",
    "rand_index",
]

AverageMethod = Literal["min", "geometric", "arithmetic", "max"]


# ---------------------------------------------------------------------------
# Input checking and encoding (the one place where inputs are looked at)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Labels:
    """Both label vectors encoded as integer codes, after checking.

    ``true_codes[k]`` indexes ``classes`` and ``pred_codes[k]`` indexes ``clusters``
    for the ``k``-th kept pair; ``keep`` marks the kept positions of the input.
    ``classes`` and ``clusters`` hold only labels that occur among the kept pairs.
    """

    true_codes: np.ndarray
    pred_codes: np.ndarray
    classes: pd.Index
    clusters: pd.Index
    keep: np.ndarray

    @property
    def n(self) -> int:
        return int(self.true_codes.size)

    def table(self) -> np.ndarray:
        """Contingency counts, shape (n_classes, n_clusters)."""
        k, m = len(self.classes), len(self.clusters)
        flat = np.bincount(self.true_codes * m + self.pred_codes, minlength=k * m)
        return flat.reshape(k, m)


def _sklearn_metrics():
    """scikit-learn's metrics module, imported when a score is first computed (it takes
    longer to import than the rest of sparseclust)."""
    from sklearn import metrics

    return metrics


def _as_series(x: Any, name: str) -> pd.Series:
    """A positional (RangeIndex) Series view of one label vector; never copies into ``x``."""
    if isinstance(x, pd.Series):
        return x.reset_index(drop=True)
    if isinstance(x, pd.DataFrame):
        raise ValueError(
            f"{name} must be 1-D, got a DataFrame of shape {x.shape}; select one column"
        )
    if isinstance(x, pd.Index | pd.api.extensions.ExtensionArray):
        return pd.Series(x)
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got an array of shape {x.shape}")
        return pd.Series(x)
    if isinstance(x, str | bytes) or not np.iterable(x):
        raise ValueError(f"{name} must be 1-D, got a scalar of type {type(x).__name__}")
    # A plain sequence: keep each element as it is (np.asarray would turn [1, "1"]
    # into two equal strings and a NaN among strings into the string "nan").
    values = list(x)
    for v in values:
        if isinstance(v, list | np.ndarray | pd.Series | pd.Index | dict | set):
            raise ValueError(f"{name} must be 1-D, got a sequence holding a {type(v).__name__}")
    return pd.Series(values)


def _factorize(s: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes and unique labels, sorted when the labels can be sorted."""
    try:
        codes, uniques = pd.factorize(s, sort=True)
    except TypeError:  # labels of mutually unorderable types
        codes, uniques = pd.factorize(s, sort=False)
    return np.asarray(codes, dtype=np.intp), uniques


def _prepare(labels_true: Any, labels_pred: Any, *, dropna: bool) -> _Labels:
    """Check both label vectors and encode them as integer codes.

    Raises ``ValueError`` for non-1-D input, different lengths, empty input, Series
    with different indexes, and missing labels when ``dropna`` is false.
    """
    true = _as_series(labels_true, "labels_true")
    pred = _as_series(labels_pred, "labels_pred")
    if len(true) != len(pred):
        raise ValueError(
            "labels_true and labels_pred must have the same length, "
            f"got {len(true)} (labels_true) and {len(pred)} (labels_pred)"
        )
    if len(true) == 0:
        raise ValueError("labels_true and labels_pred are empty; need at least one label")
    if (
        isinstance(labels_true, pd.Series)
        and isinstance(labels_pred, pd.Series)
        and not labels_true.index.equals(labels_pred.index)
    ):
        raise ValueError(
            "labels_true and labels_pred are pandas Series with different indexes; "
            "they are compared by position, so align them first, "
            "e.g. `y.loc[labels.index]`"
        )

    na_true = true.isna().to_numpy(dtype=bool)
    na_pred = pred.isna().to_numpy(dtype=bool)
    missing = na_true | na_pred
    n_missing = int(missing.sum())
    if n_missing and not dropna:
        raise ValueError(
            f"labels_true has {int(na_true.sum())} and labels_pred has "
            f"{int(na_pred.sum())} missing values ({n_missing} pairs affected); "
            "pass dropna=True to drop the pairs with a missing label"
        )
    keep = ~missing
    if n_missing:
        if n_missing == len(true):
            raise ValueError(
                "no pairs left after dropping missing values: every pair of "
                "labels_true and labels_pred has a missing label"
            )
        true = true[keep]
        pred = pred[keep]
    true_codes, classes = _factorize(true)
    pred_codes, clusters = _factorize(pred)
    return _Labels(true_codes, pred_codes, classes, clusters, keep)


# ---------------------------------------------------------------------------
# Computations on encoded labels
# ---------------------------------------------------------------------------


def _purity(lab: _Labels) -> float:
    return float(lab.table().max(axis=0).sum() / lab.n)


def _f1_matrix(table: np.ndarray) -> np.ndarray:
    """F1 of class i if cluster j were declared to be class i: 2 n_ij / (r_i + c_j)."""
    rows = table.sum(axis=1)
    cols = table.sum(axis=0)
    # every class and cluster is non-empty, so the denominator is positive
    return 2.0 * table / (rows[:, None] + cols[None, :])


def _hungarian(table: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Optimal one-to-one matching of classes (rows) to clusters (columns).

    Maximises the matched count sum(n_ij); among matchings tied on that count, the one
    with the largest sum of F1 is taken. The F1 sum of any matching is at most
    ``min(K, M)``, so scaling it by ``1 / (min(K, M) + 1)`` keeps it below one count.
    Returns matched row indices, matched column indices and the F1 matrix.
    """
    f1 = _f1_matrix(table)
    weight = table + f1 / (min(table.shape) + 1)
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(weight, maximize=True)
    return rows, cols, f1


def _macro_f1(lab: _Labels) -> float:
    rows, cols, f1 = _hungarian(lab.table())
    return float(f1[rows, cols].sum() / len(lab.classes))


def _nmi(lab: _Labels, average_method: str) -> float:
    return float(
        _sklearn_metrics().normalized_mutual_info_score(
            lab.true_codes, lab.pred_codes, average_method=average_method
        )
    )


def _ami(lab: _Labels, average_method: str) -> float:
    return float(
        _sklearn_metrics().adjusted_mutual_info_score(
            lab.true_codes, lab.pred_codes, average_method=average_method
        )
    )


def _ari(lab: _Labels) -> float:
    return float(_sklearn_metrics().adjusted_rand_score(lab.true_codes, lab.pred_codes))


def _rand(lab: _Labels) -> float:
    return float(_sklearn_metrics().rand_score(lab.true_codes, lab.pred_codes))


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def purity(labels_true: ArrayLike, labels_pred: ArrayLike, *, dropna: bool = False) -> float:
    """Purity of a clustering: share of items in the majority class of their cluster.

    With ``n_ij`` the number of items of class ``i`` in cluster ``j`` and ``n`` the
    number of items, ``purity = sum_j max_i n_ij / n`` (the definition used in the
    CRAFT paper). It lies in ``(0, 1]``, equals 1 when every cluster holds a single
    class, and is not adjusted for the number of clusters (one cluster per item
    scores 1).

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    dropna : bool, default False
        If true, drop every pair in which either label is missing; if false, missing
        labels raise ``ValueError``.

    Returns
    -------
    float
        Share of the items whose cluster's majority class is their own class, in [0, 1].

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    Examples
    --------
    >>> purity(["a", "a", "a", "b", "b", "b"], [1, 1, 2, 2, 2, 2])
    0.8333
    >>> purity(["a", None, "b"], [1, 1, 2], dropna=True)
    1.0
    """
    return _purity(_prepare(labels_true, labels_pred, dropna=dropna))


def nmi(
    labels_true: ArrayLike,
    labels_pred: ArrayLike,
    *,
    average_method: AverageMethod = "arithmetic",
    dropna: bool = False,
) -> float:
    """Normalised mutual information between classes and clusters.

    Computed by :func:`sklearn.metrics.normalized_mutual_info_score`:
    ``I(true; pred)`` divided by the `average_method` mean of the two entropies.

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    average_method : {"arithmetic", "geometric", "min", "max"}, default "arithmetic"
        How the two entropies are averaged in the denominator.
    dropna : bool, default False
        If true, drop every pair in which either label is missing; if false, missing
        labels raise ``ValueError``.

    Returns
    -------
    float
        In ``[0, 1]``; 1 for identical partitions.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    Examples
    --------
    >>> nmi(["a", "a", "b", "b"], ["x", "x", "y", "y"])
    1.0
    >>> nmi(["a", "a", "b", "b"], [0, 1, 0, 1])
    0.0
    >>> nmi(["a", "a", "b", "b"], [0, 0, 1, 2], average_method="min")
    1.0
    """
    return _nmi(_prepare(labels_true, labels_pred, dropna=dropna), average_method)


def adjusted_nmi(
    labels_true: ArrayLike,
    labels_pred: ArrayLike,
    *,
    average_method: AverageMethod = "arithmetic",
    dropna: bool = False,
) -> float:
    """Mutual information adjusted for chance (AMI) between classes and clusters.

    Computed by :func:`sklearn.metrics.adjusted_mutual_info_score`. It is 1 for
    identical partitions, about 0 on average for random ones, and can be negative.
    Also available as :func:`ami`.

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    average_method : {"arithmetic", "geometric", "min", "max"}, default "arithmetic"
        How the two entropies are averaged in the normaliser.
    dropna : bool, default False
        If true, drop every pair in which either label is missing; if false, missing
        labels raise ``ValueError``.

    Returns
    -------
    float
        The adjusted mutual information; 0 for chance agreement, 1 for identical partitions.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    Examples
    --------
    >>> adjusted_nmi([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    >>> adjusted_nmi([0, 0, 1, 1], [0, 1, 0, 1])
    -0.5
    >>> ami([0, 0, 1, 1], [5, 5, 7, 7])
    1.0
    """
    return _ami(_prepare(labels_true, labels_pred, dropna=dropna), average_method)


#: Alias of :func:`adjusted_nmi`.
ami = adjusted_nmi


def ari(labels_true: ArrayLike, labels_pred: ArrayLike, *, dropna: bool = False) -> float:
    """Adjusted Rand index between classes and clusters.

    Computed by :func:`sklearn.metrics.adjusted_rand_score`: the Rand index corrected
    for chance, 1 for identical partitions, about 0 for random ones, possibly
    negative.

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    dropna : bool, default False
        If true, drop every pair in which either label is missing; if false, missing
        labels raise ``ValueError``.

    Returns
    -------
    float
        The adjusted Rand index; 0 for chance agreement, 1 for identical partitions.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    Examples
    --------
    >>> ari(["a", "a", "b", "b"], [1, 1, 0, 0])
    1.0
    >>> ari(["a", "a", "b", "b"], [0, 1, 0, 1])
    -0.5
    """
    return _ari(_prepare(labels_true, labels_pred, dropna=dropna))


def rand_index(labels_true: ArrayLike, labels_pred: ArrayLike, *, dropna: bool = False) -> float:
    """Rand index: share of item pairs on which classes and clusters agree.

    Computed by :func:`sklearn.metrics.rand_score`. A pair agrees when both
    partitions put its two items together, or both put them apart.

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    dropna : bool, default False
        If true, drop every pair in which either label is missing; if false, missing
        labels raise ``ValueError``.

    Returns
    -------
    float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    Examples
    --------
    >>> rand_index(["a", "a", "b", "b"], [1, 1, 0, 0])
    1.0
    >>> rand_index(["a", "a", "b", "b"], [0, 1, 0, 1])  # 2 of 6 pairs agree
    0.3333
    """
    return _rand(_prepare(labels_true, labels_pred, dropna=dropna))


def macro_f1(labels_true: ArrayLike, labels_pred: ArrayLike, *, dropna: bool = False) -> float:
    """Macro-F1 after optimal one-to-one matching of clusters to classes.

    Let ``n_ij`` be the number of items of class ``i`` in cluster ``j``
    (``K`` classes, ``M`` clusters), ``r_i`` the size of class ``i`` and ``c_j``
    the size of cluster ``j``.

    1. **Matching.** Clusters are matched one-to-one to classes with the Hungarian
       algorithm (:func:`scipy.optimize.linear_sum_assignment` on the contingency
       table), maximising the number of matched items ``sum n_{i,s(i)}``;
       ``min(K, M)`` pairs are matched. If several matchings reach that maximum, the
       one with the largest macro-F1 is used, so the score never depends on how the
       labels are named or ordered.
    2. **Per-class F1.** A class ``i`` matched to cluster ``j`` has precision
       ``n_ij / c_j``, recall ``n_ij / r_i`` and ``F1_i = 2 n_ij / (r_i + c_j)``.
       A class left unmatched (more classes than clusters) has ``F1_i = 0``.
       Items of a cluster left unmatched (more clusters than classes) are wrong
       predictions: they count against the recall of their true class, and are not a
       prediction of any class.
    3. **Macro-F1** is the unweighted mean of ``F1_i`` over the ``K`` classes.

    This equals ``sklearn.metrics.f1_score(labels_true, match_labels(labels_true,
    labels_pred), labels=<the K classes>, average="macro")`` with the missing labels
    of unmatched clusters read as one extra label outside the ``K`` classes.

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    dropna : bool, default False
        If true, drop every pair in which either label is missing; if false, missing
        labels raise ``ValueError``.

    Returns
    -------
    float
        In ``[0, 1]``; 1 only when the clusters are the classes.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    See Also
    --------
    match_labels : The matched labels themselves.

    Examples
    --------
    Cluster 1 is matched to "a" (F1 = 2*2/(3+2) = 0.8), cluster 2 to "b"
    (F1 = 2*1/(1+2) = 2/3):

    >>> macro_f1(["a", "a", "a", "b"], [1, 1, 2, 2])
    0.7333
    >>> macro_f1(["a", "a", "b", "b"], [7, 7, 3, 3])
    1.0

    Three clusters for two classes: cluster 9 stays unmatched, its item counts as
    missed for "b" (F1 = 2*1/(2+1)):

    >>> macro_f1(["a", "a", "b", "b"], [0, 0, 1, 9])
    0.8333
    """
    return _macro_f1(_prepare(labels_true, labels_pred, dropna=dropna))


def match_labels(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, dropna: bool = False
) -> pd.Series | np.ndarray:
    """Rename clusters to the classes they are matched to.

    Uses the same matching as :func:`macro_f1` (Hungarian algorithm maximising the
    number of matched items, ties broken by macro-F1). Each cluster label is replaced
    by its matched class; clusters left unmatched (more clusters than classes) become
    missing.

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    dropna : bool, default False
        If true, pairs in which either label is missing are left out of the matching
        and are missing in the result; if false, missing labels raise ``ValueError``.

    Returns
    -------
    pandas.Series or numpy.ndarray
        Same length and order as the input, holding class labels of the dtype of the
        classes where it can hold missing values (otherwise a numpy upcast, e.g.
        integers to float with ``NaN``). A Series when either input is a Series (with
        the index and name of `labels_pred` if it is a Series, else of
        `labels_true`), a numpy array otherwise.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    Examples
    --------
    >>> match_labels(["a", "a", "b", "b"], [1, 1, 0, 0])
    array(['a', 'a', 'b', 'b'], dtype=object)
    >>> import pandas as pd
    >>> match_labels(pd.Series([0, 0, 1, 1]), pd.Series([5, 5, 6, 7]))
    0    0.0
    1    0.0
    2    1.0
    3    NaN
    dtype: float64
    """
    lab = _prepare(labels_true, labels_pred, dropna=dropna)
    rows, cols, _ = _hungarian(lab.table())
    cluster_to_class = np.full(len(lab.clusters), -1, dtype=np.intp)
    cluster_to_class[cols] = rows
    codes = np.full(lab.keep.size, -1, dtype=np.intp)
    codes[lab.keep] = cluster_to_class[lab.pred_codes]

    classes = lab.classes
    source = classes.to_numpy() if isinstance(classes.dtype, np.dtype) else classes.array
    values = pd.api.extensions.take(source, codes, allow_fill=True)

    if isinstance(labels_pred, pd.Series):
        return pd.Series(values, index=labels_pred.index, name=labels_pred.name)
    if isinstance(labels_true, pd.Series):
        return pd.Series(values, index=labels_true.index, name=labels_true.name)
    return np.asarray(values)


def contingency_table(
    labels_true: ArrayLike, labels_pred: ArrayLike, *, dropna: bool = False
) -> pd.DataFrame:
    """Count the items per class (rows) and cluster (columns).

    Rows and columns list the labels that occur (unused categories of a categorical
    are left out), sorted when the labels can be sorted (categoricals in category
    order), otherwise in order of first appearance.

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    dropna : bool, default False
        If true, drop every pair in which either label is missing; if false, missing
        labels raise ``ValueError``.

    Returns
    -------
    pandas.DataFrame
        Integer counts; the axes are named after the input Series, or ``"true"``
        and ``"pred"``.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    Examples
    --------
    >>> contingency_table(["a", "a", "b", "b", "b"], [1, 2, 2, 2, 1])
    pred  1  2
    true
    a     1  1
    b     1  2
    """
    lab = _prepare(labels_true, labels_pred, dropna=dropna)
    index = pd.Index(lab.classes, name=_axis_name(labels_true, "true"))
    columns = pd.Index(lab.clusters, name=_axis_name(labels_pred, "pred"))
    return pd.DataFrame(lab.table(), index=index, columns=columns)


def _axis_name(x: Any, default: str) -> Any:
    if isinstance(x, pd.Series) and x.name is not None:
        return x.name
    return default


def cluster_report(
    labels_true: ArrayLike,
    labels_pred: ArrayLike,
    *,
    average_method: AverageMethod = "arithmetic",
    dropna: bool = False,
) -> pd.Series:
    """All comparison metrics at once, one row per metric.

    Parameters
    ----------
    labels_true : array-like or pandas.Series
        Known classes, 1-D, any hashable labels.
    labels_pred : array-like or pandas.Series
        Cluster labels, 1-D, same length as `labels_true`.
    average_method : {"arithmetic", "geometric", "min", "max"}, default "arithmetic"
        Passed to :func:`nmi` and :func:`adjusted_nmi`.
    dropna : bool, default False
        If true, drop every pair in which either label is missing; if false, missing
        labels raise ``ValueError``.

    Returns
    -------
    pandas.Series
        Float scores named ``"score"``, indexed by ``"metric"``: ``purity``, ``nmi``,
        ``adjusted_nmi``, ``ari``, ``rand_index``, ``macro_f1``.

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, are empty, are Series with
        different indexes, or hold missing labels while ``dropna`` is false.

    Examples
    --------
    >>> cluster_report(["a", "a", "a", "b"], [1, 1, 2, 2])
    metric
    purity          0.75
    nmi             0.3...
    adjusted_nmi    0.0
    ari             0.0
    rand_index      0.5
    macro_f1        0.7333
    Name: score, dtype: float64
    """
    lab = _prepare(labels_true, labels_pred, dropna=dropna)
    scores = {
        "purity": _purity(lab),
        "nmi": _nmi(lab, average_method),
        "adjusted_nmi": _ami(lab, average_method),
        "ari": _ari(lab),
        "rand_index": _rand(lab),
        "macro_f1": _macro_f1(lab),
    }
    return pd.Series(scores, name="score", dtype=float).rename_axis("metric")
