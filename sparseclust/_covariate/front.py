"""Convex covariate clustering for classification (Andrade, Fukumizu & Okajima):
``covariate_clustering()`` and its result.

Covariates (columns) are clustered while a multinomial logistic regression is fitted:
a pairwise group-lasso penalty ``nu * sum S_ij ||B_.i - B_.j||_2`` fuses the
coefficient columns of similar covariates. The clustering path over ``nu`` comes from
the ADMM of :mod:`.core`; each distinct clustering is scored by the approximate
marginal likelihood of a logistic regression on the cluster sums (:mod:`.select`),
and the best is refitted. The steps, in order, are in :mod:`.fit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._data.params import (
    Choice,
    Columns,
    Flag,
    Int,
    Number,
    Numbers,
    Progress,
    Seed,
    Workers,
    as_rng,
    rules,
)
from .._data.screen import screens
from .._data.table import VariableSpec, transform_like
from .._results.base import Printed, dropped_constant_lines, variable_notes
from .._results.format import call_string, fmt
from .._results.summary import Summary
from .._results.tidy import augment_frame
from . import fit as fit
from . import select as sel

__all__ = ["CovariateClusteringResult", "covariate_clustering"]

METHODS = ("convex_fusion", "convex_clustering", "kmeans")
SELECT = ("marginal_likelihood", "cv")
SIGMA_RULES = ("accuracy", "loglik")


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class CovariateClusteringResult(Printed):
    """Result of :func:`covariate_clustering`.

    Attributes
    ----------
    clusters : Series
        The selected clustering: covariate name -> cluster id (0-based, numbered by
        first appearance over the covariates).
    path : DataFrame
        One row per distinct clustering along the path: the tuning range that produced
        it (``nu_min``/``nu_max`` for the convex fusion; ``gamma`` or ``k`` for the
        baselines), ``n_clusters``, ``log_ml`` (approximate log marginal likelihood),
        ``train_accuracy``, ``cv_accuracy`` (with ``select="cv"``), ``converged``,
        and ``selected``.
    labels_path : list of ndarray
        The clustering of every row of ``path`` (covariate cluster codes).
    class_path : list of ndarray
        For every row of ``path``, the associated class code of each of its clusters.
    nu : float
        The selected ``nu`` (the middle of its range on the log scale; for the
        baselines the tuning value).
    coef : DataFrame
        Refitted coefficients: one row per cluster, one column per class.
    intercept : Series
        Refitted intercepts by class.
    cluster_class : DataFrame
        Per cluster: size, associated class (largest coefficient) and odds ratio to the
        runner-up class (appendix A.5).
    sigma : float
        Prior sd of the coefficients (chosen by cross-validation unless given).
    sigma_table : DataFrame or None
        CV accuracy and log-likelihood over the sigma grid.
    sigma_by_rule : dict
        Per sigma rule: ``sigma``, ``n_clusters_selected`` and ``path_row`` (the row of
        ``path`` / ``labels_path`` the marginal likelihood selects under that sigma).
    classes : Index
        The class labels (response levels), in coefficient column order.
    method, select, sigma_rule : str
    margin : float
        Log marginal likelihood of the selected clustering minus the runner-up's.
    n_obs : int
    call : str
    params : dict

    Examples
    --------
    >>> from sparseclust import covariate_clustering
    >>> from sparseclust.simulate import covariate_sim
    >>> sim = covariate_sim(40, m=4, rng=0)
    >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)
    >>> type(fit).__name__, len(fit.clusters)
    ('CovariateClusteringResult', 40)
    """

    clusters: pd.Series
    path: pd.DataFrame
    labels_path: list
    class_path: list
    nu: float
    coef: pd.DataFrame
    intercept: pd.Series
    cluster_class: pd.DataFrame
    sigma: float
    sigma_table: pd.DataFrame | None
    sigma_by_rule: dict
    classes: pd.Index
    method: str
    select: str
    sigma_rule: str
    margin: float
    n_obs: int
    call: str
    params: dict
    variables: VariableSpec
    similarity: Any = None
    #: means and sds the covariates were standardised with (``scale=True``), else None
    center_: np.ndarray | None = None
    scale_: np.ndarray | None = None

    titles: ClassVar[dict[str, str]] = {
        "convex_fusion": "Convex covariate clustering",
        "convex_clustering": "Convex clustering of the covariates (baseline)",
        "kmeans": "k-means of the covariates (baseline)",
    }

    @cached_property
    def n_clusters(self) -> int:
        """Number of covariate clusters selected.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> fit.n_clusters == fit.clusters.nunique()
        True
        """
        return int(self.clusters.nunique())

    @property
    def selected_index(self) -> int:
        """Row of ``path`` selected.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> bool(fit.path["selected"].iloc[fit.selected_index])
        True
        """
        return int(np.flatnonzero(self.path["selected"].to_numpy())[0])

    def members(self) -> dict[int, list[str]]:
        """Covariate names in each cluster.

        Returns
        -------
        dict of int to list of str
            Cluster label to the names of its covariates.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> sum(len(v) for v in fit.members().values()) == sim.data.shape[1]
        True
        """
        return {int(k): list(g.index) for k, g in self.clusters.groupby(self.clusters)}

    # ------------------------------------------------------------------ predict
    def _scores(self, newdata: Any) -> tuple[np.ndarray, pd.Index]:
        t = transform_like(self.variables, newdata, missing="raise")
        X = t.numeric if self.center_ is None else (t.numeric - self.center_) / self.scale_
        Z = sel.summed_features(X, self.clusters.to_numpy())
        eta = Z @ self.coef.to_numpy() + self.intercept.to_numpy()
        return eta, t.index

    def predict_proba(self, newdata: Any) -> pd.DataFrame:
        """Class probabilities (rows of ``newdata`` x classes).

        Parameters
        ----------
        newdata : DataFrame or array
            Rows with the fitted covariates.

        Returns
        -------
        DataFrame
            One column per class; each row sums to 1.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=4, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)
        >>> fit.predict_proba(sim.data.head(2)).sum(axis=1).round(6).tolist()
        [1.0, 1.0]
        """
        eta, index = self._scores(newdata)
        eta = eta - eta.max(axis=1, keepdims=True)
        p = np.exp(eta)
        p /= p.sum(axis=1, keepdims=True)
        return pd.DataFrame(p, index=index, columns=self.classes)

    def predict(self, newdata: Any) -> pd.Series:
        """Most probable class of each row of ``newdata``.

        Parameters
        ----------
        newdata : DataFrame or array
            Rows with the fitted covariates.

        Returns
        -------
        Series
            The predicted class of each row, on ``newdata``'s index.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=4, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)
        >>> len(fit.predict(sim.data))
        40
        """
        eta, index = self._scores(newdata)
        return pd.Series(self.classes[eta.argmax(axis=1)], index=index, name="class")

    # ------------------------------------------------------------------ printing
    def _lines(self) -> list[str]:
        sizes = self.clusters.value_counts().sort_index().tolist()
        pos = self.selected_index
        tune = "nu" if self.method == "convex_fusion" else self.path.columns[0]
        lines = [
            f"{self.titles[self.method]}: {self.n_clusters} clusters of "
            f"{len(self.clusters)} covariates, {len(self.classes)} classes, {self.n_obs} obs",
            f"Call: {self.call}",
            f"Path: {len(self.path)} distinct clusterings; selected by "
            f"{self.select.replace('_', ' ')} at {tune} = {fmt(self.nu)} "
            f"(log ML {fmt(float(self.path['log_ml'].iloc[pos]), 6)}, margin "
            f"{fmt(self.margin)} over the runner-up)",
            f"Cluster sizes: {', '.join(map(str, sizes[:12]))}{', ...' if len(sizes) > 12 else ''}",
            f"sigma = {fmt(self.sigma)} ({self.params.get('sigma_source', 'given')})",
            *dropped_constant_lines(self.variables),
        ]
        if not bool(self.path["converged"].iloc[pos]):
            lines.append(
                "The selected clustering did not converge (the ADMM's max_iter or an inner "
                "solver's cap or stall; see the warning)."
            )
        lines.append(
            "Use .summary() for clusters and coefficients, .plot_path(), .plot_hierarchy()."
        )
        return lines

    def _html_table(self) -> str:
        return self.cluster_class.to_html()

    def summary(self) -> Summary:
        """The clusters (members, associated class, odds ratio), coefficients, the path, sigma.

        Returns
        -------
        Summary
            Prints like R's ``summary()``; ``.tables`` holds the DataFrames.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> sorted(fit.summary().tables)
        ['clusters', 'coefficients', 'path', 'sigma_rules']
        """
        clusters = self.cluster_class.copy()
        clusters["members"] = [", ".join(m) for m in self.members().values()]
        rules = pd.DataFrame(self.sigma_by_rule).T
        notes = [
            "Features of the refitted classifier are the sums of the covariates in each "
            "cluster; the odds ratio is exp(coefficient of the associated class minus the "
            "runner-up's) per unit of the cluster sum.",
            f"Log marginal likelihood margin of the selected clustering over the runner-up: "
            f"{fmt(self.margin)} nats (a small margin means a weak preference).",
        ]
        if self.params.get("sigma_on_edge"):
            notes.append(
                "sigma sits on the edge of the CV grid (classes nearly separable?): the "
                "selected clustering depends on it; see the sigma rules table."
            )
        n_capped = int((~self.path["converged"]).sum())
        if n_capped:
            notes.append(
                f"{n_capped} clusterings did not converge (the ADMM's max_iter or an inner "
                "solver's cap or stall: B-step, closed form, MAP fit, baseline)."
            )
        notes += variable_notes(self.variables)
        tables = {
            "clusters": clusters,
            "coefficients": self.coef,
            "path": self.path,
            "sigma_rules": rules,
        }
        if self.sigma_table is not None:
            tables["sigma_cv"] = self.sigma_table
        return Summary(
            title=f"{self.titles[self.method]}: summary", call=self.call, tables=tables, notes=notes
        )

    def to_frame(self) -> pd.DataFrame:
        """The covariates with their cluster, and the cluster's associated class.

        Returns
        -------
        pandas.DataFrame
            One row per covariate: ``cluster`` and ``associated_class``.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> fit.to_frame().columns.tolist()
        ['cluster', 'associated_class']
        """
        cc = self.cluster_class
        return pd.DataFrame(
            {
                "cluster": self.clusters,
                "associated_class": cc["associated_class"].reindex(self.clusters).to_numpy(),
            },
            index=self.clusters.index,
        )

    # ------------------------------------------------------------ broom-style tables
    def tidy(self) -> pd.DataFrame:
        """One row per (covariate, class): its cluster, the cluster's associated class
        and the refitted coefficient of the cluster for that class.

        Returns
        -------
        pandas.DataFrame
            One row per covariate and class.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> tidy = fit.tidy()
        >>> tidy.columns.tolist(), len(tidy) == sim.data.shape[1] * len(fit.classes)
        (['covariate', 'cluster', 'class', 'associated_class', 'coefficient'], True)
        """
        cc = self.cluster_class["associated_class"]
        rows = [
            (name, int(k), cls, cc.loc[k], float(self.coef.loc[k, cls]))
            for name, k in self.clusters.items()
            for cls in self.classes
        ]
        return pd.DataFrame(
            rows, columns=["covariate", "cluster", "class", "associated_class", "coefficient"]
        )

    def glance(self) -> pd.DataFrame:
        """One row: method, ``n_obs``, ``n_covariates``, ``n_clusters``, ``nu``,
        ``sigma``, ``log_ml`` of the selected clustering, its ``margin`` over the
        runner-up, ``train_accuracy`` and ``converged``.

        Returns
        -------
        pandas.DataFrame
            One row.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> fit.glance()[["n_obs", "n_covariates"]].iloc[0].tolist()
        [40, 10]
        """
        row = self.path.iloc[self.selected_index]
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "n_obs": self.n_obs,
                    "n_covariates": len(self.clusters),
                    "n_clusters": self.n_clusters,
                    "nu": float(self.nu),
                    "sigma": float(self.sigma),
                    "log_ml": float(row["log_ml"]),
                    "margin": float(self.margin),
                    "train_accuracy": float(row.get("train_accuracy", np.nan)),
                    "converged": bool(row["converged"]),
                }
            ]
        )

    def augment(self, data: pd.DataFrame) -> pd.DataFrame:
        """``data`` with the predicted class (``.class``) and each class's probability
        (``.prob_<class>``); ``data`` is not modified.

        Parameters
        ----------
        data : pandas.DataFrame
            Rows with the fitted covariates.

        Returns
        -------
        pandas.DataFrame
            A copy of ``data`` with ``.class`` and the ``.prob_<class>`` columns.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> fit.augment(sim.data.head(3)).columns[-3:].tolist()
        ['.prob_1', '.prob_2', '.prob_3']
        """
        proba = self.predict_proba(data)
        cols = {".class": self.classes[proba.to_numpy().argmax(axis=1)]}
        cols |= {f".prob_{c}": proba[c].to_numpy() for c in self.classes}
        return augment_frame(pd.Series(index=data.index, dtype=float), data, cols)

    def plot_path(self, **kwargs: Any) -> Any:
        """Number of clusters and log marginal likelihood along the path (selected marked).

        Parameters
        ----------
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_covariate_path`.

        Returns
        -------
        matplotlib.figure.Figure
            The figure with its panels.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> import matplotlib.pyplot as plt
        >>> fig = fit.plot_path()
        >>> len(fig.axes)
        2
        >>> plt.close(fig)
        """
        from ..plotting import plot_covariate_path

        return plot_covariate_path(self, **kwargs)

    plot = plot_path

    def plot_hierarchy(self, ax: Any = None, **kwargs: Any) -> Any:
        """The clustering hierarchy along the path, clusters coloured by associated class.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; by default a new figure.
        **kwargs
            Passed to :func:`~sparseclust.plotting.plot_covariate_hierarchy`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Examples
        --------
        >>> from sparseclust import covariate_clustering
        >>> from sparseclust.simulate import covariate_sim
        >>> sim = covariate_sim(40, m=1, rng=0)
        >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1,
        ...                            nu=[1.0, 0.1, 0.01])
        >>> import matplotlib.pyplot as plt
        >>> ax = fit.plot_hierarchy()
        >>> type(ax).__name__
        'Axes'
        >>> plt.close(ax.figure)
        """
        from ..plotting import plot_covariate_hierarchy

        return plot_covariate_hierarchy(self, ax=ax, **kwargs)


# ------------------------------------------------------------------------ public
@rules(
    knn=Int(min=1, none=True),
    method=Choice(METHODS),
    lam=Number(min=0),
    sigma=Number(min=0, min_inclusive=False, none=True),
    sigma_rule=Choice(SIGMA_RULES),
    select=Choice(SELECT),
    n_folds=Int(min=2),
    rho=Number(min=0, min_inclusive=False),
    tol=Number(min=0, min_inclusive=False),
    max_iter=Int(min=1),
    missing=Choice(("raise", "drop")),
    scale=Flag(),
    numeric=Columns(),
    n_jobs=Workers(),
    progress=Progress(),
    nu=Numbers(min=0, none=True, example="[1.0, 0.1, 0.01]"),
    gammas=Numbers(min=0, none=True, example="np.logspace(-2, 2, 20)"),
    rng=Seed(),
)
@screens
def covariate_clustering(
    x: Any = None,
    /,
    *,
    data: Any = None,
    y: Any = None,
    similarity: Any = "ledoit_wolf",
    knn: int | None = None,
    method: str = "convex_fusion",
    nu: Any = None,
    lam: float = 0.1,
    sigma: float | None = None,
    sigma_rule: str = "accuracy",
    select: str = "marginal_likelihood",
    n_folds: int = 5,
    rho: float = 1.0,
    tol: float = 1e-5,
    max_iter: int = 1000,
    gammas: Any = None,
    ks: Any = None,
    missing: str = "raise",
    scale: bool = True,
    numeric: Any = None,
    screen: Any = True,
    progress: bool | None = None,
    n_jobs: int | None = None,
    rng: Any = None,
) -> CovariateClusteringResult:
    """Cluster the covariates of a classification problem (Andrade, Fukumizu & Okajima).

    Multinomial logistic regression with the fusion penalty
    ``lam ||B||_F^2 + nu_n sum_{i<j} S_ij ||B_.i - B_.j||_2`` (``nu_n = n nu``; ``lam``
    not scaled by n, as the authors' code), solved by the paper's ADMM along a path of
    ``nu``; covariates whose coefficient columns fuse form a cluster. Each distinct
    clustering is scored by the approximate marginal likelihood of a logistic
    regression on the covariates summed within clusters (Laplace, diagonal Hessian;
    section 3) and the best is refitted.

    Parameters
    ----------
    x : formula, DataFrame or array
        ``"label ~ ."`` with ``data=``, or the covariates with ``y=``. Numeric
        covariates only.
    data : DataFrame, optional
        The data a formula ``x`` is read from.
    y : array-like, optional
        The class of each row (with a DataFrame/array ``x``).
    similarity : "ledoit_wolf", matrix or ("embedding", W)
        ``S``: ``"ledoit_wolf"`` (section 4: classes centred, pooled Ledoit–Wolf
        covariance, negatives set to 0); a d x d symmetric non-negative matrix
        (array, DataFrame indexed by covariate names, or scipy sparse); or
        ``("embedding", W)`` with covariate embeddings ``W`` (d x m), giving a k-NN
        graph with ``S_ij = exp(-||w_i - w_j||^2 / 2)`` (section 5.1).
    knn : int, optional
        Keep each covariate's ``knn`` largest similarities (union): the Ledoit–Wolf S
        is nearly dense, this makes the path much faster.
    method : {"convex_fusion", "convex_clustering", "kmeans"}
        The proposed method, or a baseline followed by the same logistic regression
        and selection: convex clustering of the covariates (Chi & Lange AMA, rows of
        ``S`` as points, Gaussian-kernel k-NN weights, phi = 0.5) or k-means of the
        rows of ``S`` (the paper's protocol: "both use the same similarity matrix").
    nu : float or sequence, optional
        The path's grid of ``nu`` (per sample: the penalty multiplier is ``n nu``).
        Default ``2^(-0.1 a)``, ``a = 0..299``, and 0: multipliers ``n 2^(-0.1 a)``,
        the paper's grid (section 3) and the authors' scripts'.
    lam : float
        Ridge penalty of the path's logistic regression (authors' 0.1).
    sigma : float, optional
        Prior sd of the refitted coefficients; default chosen by stratified CV on the
        full model by ``sigma_rule``: ``"accuracy"`` (the authors' rule, ties to the
        smaller sigma) or ``"loglik"``. A warning when the choice is on the grid's
        edge; the summary shows the selection under both rules. When the full model
        classifies every held-out sample correctly at every sigma (well separated
        classes, e.g. the section-4 data with d = 200), the accuracy rule falls to
        the grid's smallest value 1e-3; the prior then dominates and the marginal
        likelihoods of the clusterings differ by hundredths of a nat (``margin``),
        so the selection is weak there (the paper's protocol; not changed).
    sigma_rule : {"accuracy", "loglik"}, default "accuracy"
        How sigma is chosen by cross-validation (see ``sigma``).
    select : {"marginal_likelihood", "cv"}
        Selection criterion over the distinct clusterings.
    n_folds : int
        Folds of the cross-validations.
    rho, tol, max_iter : float, float, int
        ADMM step, tolerance (residuals below ``sqrt(c (d + 2 l)) tol``) and cap per nu.
        The inner solvers have caps of their own (see Notes).
    gammas, ks : array-like, optional
        Grids of the baselines (default: 100 gammas; k = 1..d).
    missing : {"raise", "drop"}
        Rows with a missing value: an error naming the columns, or dropped.
    numeric : list of str, optional
        Columns to read as numeric (every covariate must be numeric).
    screen : bool or dict, default True
        Screen the columns whose kind was detected (identifiers and free text dropped,
        numbers stored as text parsed, rare levels of many-level categoricals lumped,
        integer codes named), each decision a ``DataWarning`` kept on the result
        (``.variables.screened``); ``False`` reads every column by its dtype;
        ``{"lump_min": 20}`` sets the rows a level needs not to be lumped. See the
        guide "How columns are read".
    scale : bool, default True
        Standardise the covariates (mean 0, sd 1) before the fit, as the paper does
        (section 5: "we normalize the covariates to have mean 0 and variance 1"); the
        ridge and fusion penalties are not invariant to a covariate's scale, so
        covariates in different units need it. ``coef`` is then per sd of each
        covariate; ``predict`` standardises new data with the fit's means and sds.
        ``scale=False`` keeps raw units (a ``DataWarning`` when the default is left
        and the covariates' sds differ by more than 1000x).
    progress : bool, optional
        A tqdm bar along the path (shown once it has run 2 s). Default: on in an
        interactive terminal or a notebook, off otherwise.
    n_jobs : int, optional
        Score the distinct clusterings in parallel (joblib; ``-1``: all cores).
    rng : None, int or Generator
        Seeds the CV folds and k-means.

    Returns
    -------
    CovariateClusteringResult
        The fit: covariate clusters, coefficients, the path, print and plots.

    Raises
    ------
    ValueError
        For a covariate too large for the solver: above ``sqrt(3.4e38 / (16 n))`` in
        magnitude (9.4e17 for 24 rows; the data front refuses 1e300 already), named
        with its largest magnitude and the fix, standardising.

    Notes
    -----
    **Scale.** With ``scale=True`` (the default) the covariates are standardised and
    none of the cases below arise. With ``scale=False`` they are used as given (the
    ridge and fusion penalties are not invariant to a covariate's scale). Per case:

    * too large for the solver (the bound above): refused with a ``ValueError``;
    * large but below it, or badly scaled (one covariate at 1e10 or 1e12 beside unit
      ones, few rows): fitted. The Ledoit-Wolf similarity divides huge data by a power
      of two before its fourth moments (exact: it is equivariant to a common scale);
      a preconditioner that rounding leaves indefinite is factored with a diagonal
      jitter (any positive definite preconditioner is valid); the solvers, which
      cannot reach their tolerance on such an ill-conditioned problem, stop at their
      caps and say so (below).

    **Bounds.** Every inner loop is capped and a cap reached short of its target is
    reported as non-convergence: a ``ConvergenceWarning`` (naming the covariate of
    largest scale when the scales differ by more than 1e6) and ``converged=False`` in
    ``path``. The ADMM stops at ``max_iter`` per ``nu``; each of its B-steps at 200
    quasi-Newton iterations (1000 with the low-rank preconditioner, 5000 with the
    diagonal one: large ``d``), a B-step stopped short of its target (at that cap,
    or with no descent left) ending that ``nu``; each line search at 34 halvings; the
    exact fits of a clustering at 5000 L-BFGS iterations; after 10 consecutive ``nu``
    with a stalled inner solver the path stops (the smaller ``nu`` are not solved).
    The MAP fits (scipy's L-BFGS: 15000 iterations, 30000 evaluations), the AMA of the
    convex clustering baseline (5000 iterations per gamma) and k-means (300
    iterations) flag their clusterings the same way. Badly scaled covariates that the
    solver does converge on make it slower (a covariate at 1e6 among 120 unit ones,
    40 rows: 215 s instead of 11 s).

    Examples
    --------
    >>> from sparseclust.simulate import covariate_sim
    >>> sim = covariate_sim(40, m=4, rng=0)
    >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)
    >>> fit.n_clusters >= 1, len(fit.clusters)
    (True, 40)
    """
    call = call_string(covariate_clustering, locals())
    generator = as_rng(rng)
    prep = fit.prepare(x, data=data, y=y, numeric=numeric, missing=missing, scale=scale)
    S, s_source = fit.similarity_matrix(similarity, prep, knn)
    sig = fit.choose_sigma(prep, sigma, sigma_rule, n_folds, generator)
    if method == "convex_fusion":
        found = fit.fusion_path(
            prep, S, nu, lam=lam, tol=tol, max_iter=max_iter, rho=rho, progress=progress
        )
    else:
        found = fit.baseline_path(prep, S, method, gammas=gammas, ks=ks, generator=generator)
    chosen = fit.select_clustering(
        prep, found, sig, select=select, n_folds=n_folds, generator=generator, n_jobs=n_jobs
    )
    lab = found.labels[chosen.best]
    model = fit.refit(prep, lab, sig.sigma)
    return CovariateClusteringResult(
        clusters=pd.Series(lab, index=pd.Index(prep.names, name="covariate"), name="cluster"),
        path=chosen.path,
        labels_path=found.labels,
        class_path=chosen.class_path,
        nu=fit.selected_nu(method, found.tune, chosen.best),
        coef=model.coef,
        intercept=model.intercept,
        cluster_class=model.cluster_class,
        sigma=sig.sigma,
        sigma_table=sig.table,
        sigma_by_rule=chosen.by_rule,
        classes=prep.classes,
        method=method,
        select=select,
        sigma_rule=sigma_rule,
        margin=chosen.margin,
        n_obs=prep.X.shape[0],
        call=call,
        params={
            "lam": lam,
            "rho": rho,
            "tol": tol,
            "max_iter": max_iter,
            "similarity": s_source,
            "knn": knn,
            "sigma_source": sig.source,
            "sigma_on_edge": sig.on_edge,
            "scale": scale,
        },
        variables=prep.spec,
        similarity=S,
        center_=prep.center,
        scale_=prep.sd,
    )
