"""scikit-learn estimators over sparseclust's functions (needs scikit-learn).

Thin adapters: each ``fit`` calls the public function (:func:`~sparseclust.sparse_kmeans`,
:func:`~sparseclust.sparse_hclust`, :func:`~sparseclust.craft`,
:func:`~sparseclust.covariate_clustering`) and copies the result's attributes to
trailing-underscore attributes (``labels`` -> ``labels_``, ``weights`` -> ``weights_``);
the whole result is kept as ``result_``. ``random_state`` is passed on as ``rng``
(an int, None or Generator as is; a ``RandomState`` gives a seed drawn from it).

Every parameter a wrapper passes on under the function's own name has the function's
default, read from its signature (``_default``), so the two cannot drift apart.

Inputs may be arrays or DataFrames. Arrays get the package's column names ``x0, x1, ...``;
a DataFrame's names are kept in ``feature_names_in_``. ``labels_`` is an int ndarray with
-1 where the result's labels are ``<NA>`` (rows dropped under ``missing="drop"``).

Examples
--------
>>> import numpy as np
>>> from sparseclust.sklearn import SparseKMeans
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((40, 6))
>>> X[:20, :2] += 4.0
>>> est = SparseKMeans(n_clusters=2, wbound=1.5, random_state=0).fit(X)
>>> np.bincount(est.labels_).tolist()
[20, 20]
>>> (est.predict(X) == est.labels_).all()
np.True_
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin, ClusterMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from ._covariate.front import covariate_clustering
from ._craft.front import craft
from ._sparse.hclust import sparse_hclust
from ._sparse.kmeans import sparse_kmeans

__all__ = ["CRAFT", "CovariateClustering", "SparseHierarchical", "SparseKMeans"]


# ---------------------------------------------------------------------- helpers
def _default(func: Callable[..., Any], name: str) -> Any:
    """The default of ``func``'s parameter ``name`` (a wrapper's ``__init__`` default for a
    parameter it passes on: read from the function, never restated). Evaluated once, when
    the class is created (hence the ``noqa: B008`` where ruff cannot tell the value is
    immutable).

    Examples
    --------
    >>> _default(sparse_kmeans, "nstart")
    20
    """
    return inspect.signature(func).parameters[name].default


def _fit_call(est: BaseEstimator, func: Callable[..., Any], *args: Any, **given: Any) -> Any:
    """``func(*args, **given)`` with the estimator's parameters passed on: each one
    ``func`` takes under its own name, ``n_clusters`` as ``k`` and ``random_state`` as
    ``rng`` (through :func:`_rng`); ``given`` wins over them."""
    accepted = inspect.signature(func).parameters
    passed = {}
    for name, value in est.get_params(deep=False).items():
        if name == "n_clusters":
            passed["k"] = value
        elif name == "random_state":
            passed["rng"] = _rng(value)
        elif name in accepted:
            passed[name] = value
    return func(*args, **(passed | given))


def _rng(random_state: Any) -> Any:
    """``random_state`` as the package's ``rng`` (None, int or Generator)."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    raise ValueError(
        f"random_state must be None, an int, a numpy Generator or RandomState; "
        f"got {random_state!r}."
    )


def _is_numeric_frame(X: Any) -> bool:
    return isinstance(X, pd.DataFrame) and all(
        pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in X.dtypes
    )


def _fit_input(est: BaseEstimator, X: Any, *, mixed: bool = False, **kwargs: Any) -> Any:
    """Validate ``X`` the scikit-learn way; return what to pass to the package.

    Numeric DataFrames are validated and passed on unchanged (names, index and dtypes
    kept); arrays come back validated (float, 2-D, finite apart from NaN). With
    ``mixed=True`` (CRAFT) a DataFrame with non-numeric columns is passed on as is.
    """
    if mixed and isinstance(X, pd.DataFrame) and not _is_numeric_frame(X):
        est.n_features_in_ = X.shape[1]
        est.feature_names_in_ = np.asarray(X.columns, dtype=object)
        return X
    _check_numbers(est, X)
    arr = validate_data(est, X, ensure_all_finite="allow-nan", ensure_min_samples=2, **kwargs)
    return X if isinstance(X, pd.DataFrame) else arr


def _predict_input(
    est: BaseEstimator, X: Any, names: list[str], *, mixed: bool = False, finite: bool = False
) -> Any:
    """``X`` for ``result.predict``: validated (NaN allowed unless ``finite``), with the
    fitted column names."""
    if mixed and isinstance(X, pd.DataFrame) and not _is_numeric_frame(X):
        return X
    _check_numbers(est, X)
    arr = validate_data(est, X, reset=False, ensure_all_finite=True if finite else "allow-nan")
    index = X.index if isinstance(X, pd.DataFrame) else None
    return pd.DataFrame(arr, columns=names, index=index)


def _non_number(col: pd.Series) -> Any:
    """The first value of ``col`` that is not a number (a string that does not parse,
    a date, a duration), or ``_NUMBERS`` when every value is a number or missing."""
    if pd.api.types.is_datetime64_any_dtype(col) or pd.api.types.is_timedelta64_dtype(col):
        return next(iter(col.dropna()), _NUMBERS)
    for v in col.dropna():
        if isinstance(v, str):
            try:
                float(v)
            except ValueError:
                return v
    return _NUMBERS


_NUMBERS = object()


def _check_numbers(est: BaseEstimator, X: Any) -> None:
    """Refuse a column that is not numbers (an object column mixing numbers and
    strings, strings, dates) with a message naming the column, a value and the fix:
    numpy's own ("could not convert string to float: 'lo'") names neither. 2-D object
    arrays are read with the package's column names ``x0, x1, ...``.

    Examples
    --------
    >>> X = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": pd.Series([1, "lo", 2.5], dtype=object)})
    >>> SparseKMeans(2).fit(X)
    Traceback (most recent call last):
    ...
    ValueError: SparseKMeans needs numeric columns; column 'b' (object) holds 'lo', which is not a number. Convert the column (pd.to_numeric(X['b'], errors='coerce') makes such values NaN), drop it, or encode it (pd.get_dummies) before fitting.
    """
    if isinstance(X, np.ndarray) and X.dtype == object and X.ndim == 2:
        X = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    if not isinstance(X, pd.DataFrame):
        return
    for name, col in X.items():
        if pd.api.types.is_numeric_dtype(col.dtype):
            continue
        bad = _non_number(col)
        if bad is _NUMBERS:
            continue
        extra = (
            " (CRAFT clusters categorical columns as they are)" if isinstance(est, CRAFT) else ""
        )
        raise ValueError(
            f"{type(est).__name__} needs numeric columns{extra}; column {name!r} ({col.dtype}) "
            f"holds {bad!r}, which is not a number. Convert the column (pd.to_numeric(X[{name!r}], "
            "errors='coerce') makes such values NaN), drop it, or encode it (pd.get_dummies) "
            "before fitting."
        )


def _labels(series: pd.Series) -> np.ndarray:
    """Int labels with -1 for ``<NA>``."""
    return series.astype("Int64").fillna(-1).to_numpy(dtype=np.int64)


def _input_names(result: Any) -> list[str]:
    return list(result.variables.names)


# ---------------------------------------------------------------- estimators
class SparseKMeans(ClusterMixin, BaseEstimator):
    """Sparse k-means (:func:`sparseclust.sparse_kmeans`) as a scikit-learn clusterer.

    Parameters
    ----------
    n_clusters : int, default 3
        ``k``.
    wbound : float, optional
        L1 bound on the weights (``> 1``). Default ``None``: ``0.5 sqrt(p)``, or
        ``(1 + sqrt(p)) / 2`` for ``p <= 4``, as :func:`sparseclust.sparse_kmeans`
        and :func:`sparseclust.sparse_hclust`. Choose it with
        :func:`sparseclust.kmeans_sparse_permute`.
    weights, algorithm, nstart, max_iter, scale : see :func:`sparseclust.sparse_kmeans`
        The parameters of :func:`sparseclust.sparse_kmeans`, with its defaults.
    random_state : None, int, Generator or RandomState
        Passed on as ``rng``.

    Attributes
    ----------
    labels_ : ndarray of int
    weights_ : ndarray of float
        Feature weights (``result_.weights`` as an array).
    cluster_centers_ : ndarray (n_clusters, n_features)
        ``result_.centers`` (on the scale clustered on).
    inertia_ : float
        The weighted within-cluster sum of squares ``sum_j w_j WCSS_j`` (what the
        fit minimises for its weights); :meth:`score` is its negative on new data.
    n_iter_ : int
    result_ : SparseKMeansResult
    n_features_in_, feature_names_in_
        scikit-learn's input bookkeeping (names only when fitted on a DataFrame).

    Examples
    --------
    >>> from sparseclust.simulate import sparse_sim
    >>> sim = sparse_sim(rng=1)
    >>> model = SparseKMeans(n_clusters=3, wbound=5, random_state=0).fit(sim.data)
    >>> model.labels_.shape, model.weights_.shape
    ((60,), (100,))
    """

    def __init__(
        self,
        n_clusters: int = 3,
        *,
        wbound: float | None = _default(sparse_kmeans, "wbound"),
        weights: str = _default(sparse_kmeans, "weights"),
        algorithm: str = _default(sparse_kmeans, "algorithm"),
        nstart: int = _default(sparse_kmeans, "nstart"),
        max_iter: int = _default(sparse_kmeans, "max_iter"),
        scale: bool = _default(sparse_kmeans, "scale"),
        random_state: Any = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.wbound = wbound
        self.weights = weights
        self.algorithm = algorithm
        self.nstart = nstart
        self.max_iter = max_iter
        self.scale = scale
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> SparseKMeans:
        """Fit on ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The data (a DataFrame keeps its column types).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        SparseKMeans
            The fitted estimator (``labels_``, ``weights_``, ``result_``, ...).

        Examples
        --------
        >>> from sparseclust.simulate import sparse_sim
        >>> from sparseclust.sklearn import SparseKMeans
        >>> X = sparse_sim(rng=1).data
        >>> model = SparseKMeans(n_clusters=3, wbound=5, random_state=0).fit(X)
        >>> model.labels_.shape, model.weights_.shape
        ((60,), (100,))
        """
        data = _fit_input(self, X)
        if self.n_clusters == 1:
            return self._fit_one_cluster(data)
        res = _fit_call(self, sparse_kmeans, data)
        self.result_ = res
        self.labels_ = _labels(res.labels)
        self.weights_ = res.weights.to_numpy(dtype=float)
        self.cluster_centers_ = res.centers.to_numpy(dtype=float)
        self.inertia_ = float((res.weights * res.wcss).sum())
        self.n_iter_ = int(res.n_iter)
        return self

    def score(self, X: Any, y: Any = None) -> float:
        """The negative weighted within-cluster sum of squares of ``X`` about its nearest
        centres (``-sum_i min_k sum_j w_j (x_ij - c_kj)^2``; scikit-learn's
        ``KMeans.score`` with the fit's weights: higher is better).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Rows with the fitted columns (a DataFrame keeps its column types).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        float
            The score (at most 0).

        Examples
        --------
        >>> from sparseclust.simulate import sparse_sim
        >>> from sparseclust.sklearn import SparseKMeans
        >>> X = sparse_sim(rng=1).data
        >>> model = SparseKMeans(n_clusters=3, wbound=5, random_state=0).fit(X)
        >>> bool(abs(model.score(X) + model.inertia_) < 1e-6 * model.inertia_)
        True
        """
        check_is_fitted(self, "result_")
        new = _predict_input(self, X, _input_names(self.result_))
        _, d, unplaced = self.result_.weighted_sqdist(new)
        return -float(d[~unplaced].min(axis=1).sum())

    def _fit_one_cluster(self, data: Any) -> SparseKMeans:
        """``n_clusters=1`` (scikit-learn's checks fit it): every row in one cluster,
        centred at the column means. Sparse k-means has no weights to choose there
        (every between-cluster sum of squares is 0, so every feasible ``w`` is optimal):
        ``weights_`` and ``inertia_`` are NaN and ``result_`` is None
        (:func:`sparseclust.sparse_kmeans` itself refuses ``k=1``)."""
        X = np.asarray(data, dtype=float)
        seen = ~np.isnan(X)
        centre = np.full(X.shape[1], np.nan)
        np.divide(
            np.where(seen, X, 0.0).sum(axis=0), seen.sum(axis=0), out=centre, where=seen.any(axis=0)
        )
        self.result_ = None
        self.labels_ = np.zeros(X.shape[0], dtype=np.int64)
        self.weights_ = np.full(X.shape[1], np.nan)
        self.cluster_centers_ = (np.zeros_like(centre) if self.scale else centre)[None, :]
        self.inertia_ = np.nan
        self.n_iter_ = 0
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Nearest centre in the weighted space (``result_.predict``).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Rows with the fitted columns (a DataFrame keeps its column types).

        Returns
        -------
        numpy.ndarray
            Cluster labels (0-based), one per row.

        Examples
        --------
        >>> from sparseclust.simulate import sparse_sim
        >>> from sparseclust.sklearn import SparseKMeans
        >>> X = sparse_sim(rng=1).data
        >>> model = SparseKMeans(n_clusters=3, wbound=5, random_state=0).fit(X)
        >>> bool((model.predict(X) == model.labels_).all())
        True
        """
        check_is_fitted(self, "result_")
        if self.result_ is None:  # n_clusters=1
            return np.zeros(
                len(validate_data(self, X, reset=False, ensure_all_finite="allow-nan")),
                dtype=np.int64,
            )
        new = _predict_input(self, X, _input_names(self.result_))
        return _labels(self.result_.predict(new))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class SparseHierarchical(ClusterMixin, BaseEstimator):
    """Sparse hierarchical clustering (:func:`sparseclust.sparse_hclust`), tree cut at ``n_clusters``.

    Parameters
    ----------
    n_clusters : int, default 2
        Passed as ``k``.
    wbound, method, dissimilarity, weights, niter : see :func:`sparseclust.sparse_hclust`
        The parameters of :func:`sparseclust.sparse_hclust`, with its defaults.

    Attributes
    ----------
    labels_ : ndarray of int
    weights_ : ndarray of float
    result_ : SparseHClustResult
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> from sparseclust.simulate import sparse_sim
    >>> sim = sparse_sim(rng=1)
    >>> model = SparseHierarchical(n_clusters=3, wbound=5).fit(sim.data)
    >>> sorted(set(model.labels_.tolist()))
    [0, 1, 2]
    """

    def __init__(
        self,
        n_clusters: int = 2,
        *,
        wbound: float | None = _default(sparse_hclust, "wbound"),
        method: str = _default(sparse_hclust, "method"),
        dissimilarity: str = _default(sparse_hclust, "dissimilarity"),
        weights: str = _default(sparse_hclust, "weights"),
        niter: int = _default(sparse_hclust, "niter"),
    ) -> None:
        self.n_clusters = n_clusters
        self.wbound = wbound
        self.method = method
        self.dissimilarity = dissimilarity
        self.weights = weights
        self.niter = niter

    def fit(self, X: Any, y: Any = None) -> SparseHierarchical:
        """Fit on ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The data (a DataFrame keeps its column types).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        SparseHierarchical
            The fitted estimator (``labels_``, ``weights_``, ``result_``, ...).

        Examples
        --------
        >>> from sparseclust.simulate import sparse_sim
        >>> from sparseclust.sklearn import SparseHierarchical
        >>> model = SparseHierarchical(n_clusters=3, wbound=5).fit(sparse_sim(rng=1).data)
        >>> model.labels_.shape
        (60,)
        """
        data = _fit_input(self, X)
        res = _fit_call(self, sparse_hclust, data)
        self.result_ = res
        self.labels_ = _labels(res.labels)
        self.weights_ = res.weights.to_numpy(dtype=float)
        self.n_iter_ = int(res.n_iter)
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class CRAFT(ClusterMixin, BaseEstimator):
    """CRAFT (:func:`sparseclust.craft`): clusters with cluster-specific feature selection.

    DataFrames may mix numeric and categorical columns (detected by dtype).

    Parameters
    ----------
    m : float or "auto", default "auto"
        Fraction of the features each cluster selects; ``"auto"``: chosen from the
        data by BIC (:func:`~sparseclust.craft` Notes).
    n_clusters : int, optional
        Passed as ``k``; with neither it nor ``lam`` K is chosen automatically
        (``k_method``).
    lam, rho, budget, eps_c, eps_v, scale : see :func:`sparseclust.craft`
        The parameters of :func:`sparseclust.craft`, with its defaults.
    alpha, sigma_floor, n_init, max_iter, shuffle : see :func:`sparseclust.craft`
        The parameters of :func:`sparseclust.craft`, with its defaults.
    k_max, k_method, n_pairs, subsample, n_refs, k_rule, n_jobs : see :func:`sparseclust.craft`
        The parameters of :func:`sparseclust.craft` for the automatic choice of K.
    random_state : None, int, Generator or RandomState
        Passed on as ``rng``.

    Attributes
    ----------
    labels_ : ndarray of int
    selected_ : DataFrame of bool
        ``result_.selected`` (clusters x features).
    cluster_centers_ : ndarray (n_clusters, n_numeric_features)
        ``result_.centers``: the clusters' means of the numeric variables, in the
        data's own units (categorical variables have level shares instead,
        ``result_.level_shares``). CRAFT's objective is a penalised likelihood, not
        a sum of squares: there is no ``inertia_`` or ``score``.
    n_iter_ : int
    result_ : CraftResult
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> from sparseclust.simulate import craft_fig2a
    >>> sim = craft_fig2a(rng=0)
    >>> model = CRAFT(m=1 / 3, n_clusters=3, random_state=0).fit(sim.data)
    >>> model.selected_.sum(axis=1).tolist()
    [8, 8, 8]
    """

    def __init__(
        self,
        m: float = _default(craft, "m"),
        *,
        n_clusters: int | None = None,
        lam: float | str | None = _default(craft, "lam"),
        rho: float | None = _default(craft, "rho"),
        budget: str = _default(craft, "budget"),
        eps_c: float | None = _default(craft, "eps_c"),
        eps_v: float | None = _default(craft, "eps_v"),
        scale: bool = _default(craft, "scale"),
        alpha: float = _default(craft, "alpha"),
        sigma_floor: float = _default(craft, "sigma_floor"),
        n_init: int | str = _default(craft, "n_init"),
        max_iter: int = _default(craft, "max_iter"),
        shuffle: bool = _default(craft, "shuffle"),
        k_max: int = _default(craft, "k_max"),
        k_method: str = _default(craft, "k_method"),
        n_pairs: int = _default(craft, "n_pairs"),
        subsample: float = _default(craft, "subsample"),
        n_refs: int = _default(craft, "n_refs"),
        k_rule: str = _default(craft, "k_rule"),
        n_jobs: int | None = _default(craft, "n_jobs"),
        random_state: Any = None,
    ) -> None:
        self.m = m
        self.n_clusters = n_clusters
        self.lam = lam
        self.rho = rho
        self.budget = budget
        self.eps_c = eps_c
        self.eps_v = eps_v
        self.scale = scale
        self.alpha = alpha
        self.sigma_floor = sigma_floor
        self.n_init = n_init
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.k_max = k_max
        self.k_method = k_method
        self.n_pairs = n_pairs
        self.subsample = subsample
        self.n_refs = n_refs
        self.k_rule = k_rule
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> CRAFT:
        """Fit on ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            The data (a DataFrame keeps its column types).
        y : None
            Ignored (scikit-learn's API).

        Returns
        -------
        CRAFT
            The fitted estimator (``labels_``, ``selected_``, ``result_``, ...).

        Examples
        --------
        >>> from sparseclust.simulate import craft_fig2a
        >>> from sparseclust.sklearn import CRAFT
        >>> X = craft_fig2a(n_per_cluster=30, rng=0).data
        >>> model = CRAFT(m=1 / 3, n_clusters=3, random_state=0).fit(X)
        >>> model.labels_.shape, model.selected_.shape
        ((90,), (3, 24))
        """
        data = _fit_input(self, X, mixed=True)
        res = _fit_call(self, craft, data)
        self.result_ = res
        self.labels_ = _labels(res.labels)
        self.selected_ = res.selected
        self.cluster_centers_ = res.centers.to_numpy(dtype=float)
        self.n_iter_ = int(res.n_iter)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Assign rows to the fitted clusters (``result_.predict``).

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_features)
            Rows with the fitted columns (a DataFrame keeps its column types).

        Returns
        -------
        numpy.ndarray
            Cluster labels (0-based), one per row.

        Examples
        --------
        >>> from sparseclust.simulate import craft_fig2a
        >>> from sparseclust.sklearn import CRAFT
        >>> X = craft_fig2a(n_per_cluster=30, rng=0).data
        >>> model = CRAFT(m=1 / 3, n_clusters=3, random_state=0).fit(X)
        >>> bool((model.predict(X.head(10)) == model.labels_[:10]).all())
        True
        """
        check_is_fitted(self, "result_")
        new = _predict_input(self, X, _input_names(self.result_), mixed=True)
        return _labels(self.result_.predict(new))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


class CovariateClustering(ClassifierMixin, BaseEstimator):
    """Covariate clustering for classification (:func:`sparseclust.covariate_clustering`).

    A classifier: ``fit(X, y)`` clusters the covariates and fits a multinomial logistic
    regression on the covariates summed within clusters; ``predict``/``predict_proba``
    use it.

    Parameters
    ----------
    similarity, knn, method, nu, lam, sigma, sigma_rule : see :func:`sparseclust.covariate_clustering`
        The parameters of :func:`sparseclust.covariate_clustering`, with its defaults.
    select, n_folds, rho, tol, max_iter, gammas, ks, n_jobs : see :func:`sparseclust.covariate_clustering`
        The parameters of :func:`sparseclust.covariate_clustering`, with its defaults.
    random_state : None, int, Generator or RandomState
        Passed on as ``rng``.

    Attributes
    ----------
    classes_ : ndarray
    clusters_ : ndarray of int
        Cluster of each covariate (``result_.clusters``).
    coef_ : ndarray (n_covariate_clusters, n_classes)
    intercept_ : ndarray (n_classes,)
    n_iter_ : int
        Clusterings visited along the path (rows of ``result_.path``): the fit's
        outer iterations, as scikit-learn reports them.
    result_ : CovariateClusteringResult
    n_features_in_, feature_names_in_

    Examples
    --------
    >>> from sparseclust.simulate import covariate_sim
    >>> sim = covariate_sim(40, m=4, rng=0)
    >>> model = CovariateClustering(sim.sigma, sigma=0.1).fit(sim.data, sim.labels)
    >>> model.predict(sim.data).shape
    (40,)
    """

    def __init__(
        self,
        similarity: Any = _default(covariate_clustering, "similarity"),  # noqa: B008
        *,
        knn: int | None = _default(covariate_clustering, "knn"),
        method: str = _default(covariate_clustering, "method"),
        nu: Any = _default(covariate_clustering, "nu"),  # noqa: B008
        lam: float = _default(covariate_clustering, "lam"),
        sigma: float | None = _default(covariate_clustering, "sigma"),
        sigma_rule: str = _default(covariate_clustering, "sigma_rule"),
        select: str = _default(covariate_clustering, "select"),
        n_folds: int = _default(covariate_clustering, "n_folds"),
        rho: float = _default(covariate_clustering, "rho"),
        tol: float = _default(covariate_clustering, "tol"),
        max_iter: int = _default(covariate_clustering, "max_iter"),
        gammas: Any = _default(covariate_clustering, "gammas"),  # noqa: B008
        ks: Any = _default(covariate_clustering, "ks"),  # noqa: B008
        n_jobs: int | None = _default(covariate_clustering, "n_jobs"),
        random_state: Any = None,
    ) -> None:
        self.similarity = similarity
        self.knn = knn
        self.method = method
        self.nu = nu
        self.lam = lam
        self.sigma = sigma
        self.sigma_rule = sigma_rule
        self.select = select
        self.n_folds = n_folds
        self.rho = rho
        self.tol = tol
        self.max_iter = max_iter
        self.gammas = gammas
        self.ks = ks
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> CovariateClustering:
        """Fit on covariates ``X`` and classes ``y`` (a column of shape (n, 1) is
        ravelled with a DataConversionWarning, as scikit-learn's classifiers do; a
        continuous ``y`` is refused: "Unknown label type").

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_covariates)
            The covariates.
        y : array-like of shape (n_samples,)
            The class of each row.

        Returns
        -------
        CovariateClustering
            The fitted estimator (``classes_``, ``result_``, ...).

        Examples
        --------
        >>> from sparseclust.simulate import covariate_sim
        >>> from sparseclust.sklearn import CovariateClustering
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> model = CovariateClustering(sim.sigma, sigma=0.1, nu=[1.0, 0.1, 0.01])
        >>> model = model.fit(sim.data, sim.labels)
        >>> model.classes_.tolist(), model.result_.n_clusters
        ([0, 1, 2, 3], 9)
        """
        if len(getattr(y, "shape", ())) == 2 and y.shape[1] == 1:
            y = column_or_1d(y, warn=True)
        _check_numbers(self, X)
        X_in = validate_data(self, X, y, ensure_min_samples=2)[0]
        check_classification_targets(y)
        if X_in.shape[1] < 2:
            raise ValueError(
                f"CovariateClustering clusters the covariates (the columns of X): it needs "
                f"at least 2; got {X_in.shape[1]} feature(s). Pass X with 2 or more columns."
            )
        data = X if isinstance(X, pd.DataFrame) else X_in
        res = _fit_call(self, covariate_clustering, data, y=y, progress=False)
        self.result_ = res
        self.classes_ = np.asarray(res.classes)
        self.clusters_ = res.clusters.to_numpy()
        self.coef_ = res.coef.to_numpy(dtype=float)
        self.intercept_ = res.intercept.to_numpy(dtype=float)
        self.n_iter_ = len(res.path)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, columns in the order of ``classes_``.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_covariates)
            Rows with the fitted covariates.

        Returns
        -------
        numpy.ndarray
            Shape (n_samples, n_classes); each row sums to 1.

        Examples
        --------
        >>> from sparseclust.simulate import covariate_sim
        >>> from sparseclust.sklearn import CovariateClustering
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> model = CovariateClustering(sim.sigma, sigma=0.1, nu=[1.0, 0.1, 0.01])
        >>> model = model.fit(sim.data, sim.labels)
        >>> model.predict_proba(sim.data.head(2)).shape
        (2, 4)
        """
        check_is_fitted(self, "result_")
        new = _predict_input(self, X, _input_names(self.result_), finite=True)
        return self.result_.predict_proba(new).to_numpy(dtype=float)

    def predict(self, X: Any) -> np.ndarray:
        """Most probable class.

        Parameters
        ----------
        X : DataFrame or array-like of shape (n_samples, n_covariates)
            Rows with the fitted covariates.

        Returns
        -------
        numpy.ndarray
            One class per row, from ``classes_``.

        Examples
        --------
        >>> from sparseclust.simulate import covariate_sim
        >>> from sparseclust.sklearn import CovariateClustering
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> model = CovariateClustering(sim.sigma, sigma=0.1, nu=[1.0, 0.1, 0.01])
        >>> model = model.fit(sim.data, sim.labels)
        >>> model.predict(sim.data.head(4)).shape
        (4,)
        """
        check_is_fitted(self, "result_")
        new = _predict_input(self, X, _input_names(self.result_), finite=True)
        return self.result_.predict(new).to_numpy()
