"""Convex covariate clustering for classification (Andrade, Fukumizu & Okajima):
``covariate_clustering()`` and its result.

Covariates (columns) are clustered while a multinomial logistic regression is fitted:
a pairwise group-lasso penalty ``nu * sum S_ij ||B_.i - B_.j||_2`` fuses the
coefficient columns of similar covariates. The clustering path over ``nu`` comes from
the ADMM of :mod:`._covariate_core`; each distinct clustering is scored by the
approximate marginal likelihood of a logistic regression on the cluster sums
(:mod:`._covariate_select`), and the best is refitted.
"""

from __future__ import annotations

import html
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._data.params import as_rng, check_choice, check_int, check_number, user_stacklevel
from .._data.table import VariableSpec, build_table, transform_like
from .._engine.parallel import run_parallel
from .._results.format import call_string, fmt
from .._results.summary import Summary
from ..exceptions import CalibrationWarning, ConvergenceWarning
from . import core as core
from . import select as sel

__all__ = ["CovariateClusteringResult", "covariate_clustering"]

METHODS = ("convex_fusion", "convex_clustering", "kmeans")
SELECT = ("marginal_likelihood", "cv")
SIGMA_RULES = ("accuracy", "loglik")


@dataclass(frozen=True, eq=False, repr=False, kw_only=True)
class CovariateClusteringResult:
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

    titles: ClassVar[dict[str, str]] = {
        "convex_fusion": "Convex covariate clustering",
        "convex_clustering": "Convex clustering of the covariates (baseline)",
        "kmeans": "k-means of the covariates (baseline)",
    }

    @cached_property
    def n_clusters(self) -> int:
        """Number of covariate clusters selected."""
        return int(self.clusters.nunique())

    @property
    def selected_index(self) -> int:
        """Row of ``path`` selected."""
        return int(np.flatnonzero(self.path["selected"].to_numpy())[0])

    def members(self) -> dict[int, list[str]]:
        """Covariate names in each cluster."""
        return {int(k): list(g.index) for k, g in self.clusters.groupby(self.clusters)}

    # ------------------------------------------------------------------ predict
    def _scores(self, newdata: Any) -> tuple[np.ndarray, pd.Index]:
        t = transform_like(self.variables, newdata, missing="raise")
        Z = sel.summed_features(t.numeric, self.clusters.to_numpy())
        eta = Z @ self.coef.to_numpy() + self.intercept.to_numpy()
        return eta, t.index

    def predict_proba(self, newdata: Any) -> pd.DataFrame:
        """Class probabilities (rows of ``newdata`` x classes)."""
        eta, index = self._scores(newdata)
        eta = eta - eta.max(axis=1, keepdims=True)
        p = np.exp(eta)
        p /= p.sum(axis=1, keepdims=True)
        return pd.DataFrame(p, index=index, columns=self.classes)

    def predict(self, newdata: Any) -> pd.Series:
        """Most probable class of each row of ``newdata``."""
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
        ]
        if not bool(self.path["converged"].iloc[pos]):
            lines.append("The selected clustering came from a nu where the ADMM hit max_iter.")
        lines.append(
            "Use .summary() for clusters and coefficients, .plot_path(), .plot_hierarchy()."
        )
        return lines

    def __repr__(self) -> str:
        return "\n".join(self._lines())

    def __str__(self) -> str:
        return repr(self)

    def _repr_html_(self) -> str:
        lines = self._lines()
        rest = "<br>".join(html.escape(x) for x in lines[1:])
        return f"<div><b>{html.escape(lines[0])}</b><br>{rest}{self.cluster_class.to_html()}</div>"

    def summary(self) -> Summary:
        """Clusters (members, associated class, odds ratio), coefficients, the path, sigma."""
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
            notes.append(f"{n_capped} clusterings include nu values where the ADMM hit max_iter.")
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
        """Covariates with their cluster, and the cluster's associated class."""
        cc = self.cluster_class
        return pd.DataFrame(
            {
                "cluster": self.clusters,
                "associated_class": cc["associated_class"].reindex(self.clusters).to_numpy(),
            },
            index=self.clusters.index,
        )

    def plot_path(self, **kwargs: Any) -> Any:
        """Number of clusters and log marginal likelihood along the path (selected marked)."""
        from ..plotting import plot_covariate_path

        return plot_covariate_path(self, **kwargs)

    plot = plot_path

    def plot_hierarchy(self, ax: Any = None, **kwargs: Any) -> Any:
        """The clustering hierarchy along the path, clusters coloured by associated class."""
        from ..plotting import plot_covariate_hierarchy

        return plot_covariate_hierarchy(self, ax=ax, **kwargs)


# ------------------------------------------------------------------------ helpers
def _similarity(similarity: Any, X: np.ndarray, y: np.ndarray, names: list[str], knn: Any):
    if similarity is None or (isinstance(similarity, str) and similarity == "ledoit_wolf"):
        S = core.ledoit_wolf_similarity(X, y)
        source = "ledoit_wolf"
    elif isinstance(similarity, str):
        raise ValueError(
            f"similarity must be 'ledoit_wolf', a (d x d) matrix (array, DataFrame or scipy "
            f"sparse) or ('embedding', W); got similarity={similarity!r}."
        )
    elif isinstance(similarity, tuple) and len(similarity) == 2 and similarity[0] == "embedding":
        W = similarity[1]
        if isinstance(W, pd.DataFrame):
            missing = [n for n in names if n not in W.index]
            if missing:
                raise ValueError(f"the embedding has no rows for covariates {missing[:5]}.")
            W = W.loc[names].to_numpy(dtype=float)
        S = core.embedding_similarity(np.asarray(W, dtype=float), 10 if knn is None else knn)
        return S, "embedding"
    else:
        S = similarity
        if isinstance(S, pd.DataFrame):
            if list(map(str, S.index)) != names or list(map(str, S.columns)) != names:
                try:
                    S = S.loc[names, names]
                except KeyError:
                    raise ValueError(
                        "similarity's index and columns must be the covariate names "
                        f"{names[:5]}{'...' if len(names) > 5 else ''}."
                    ) from None
            S = S.to_numpy(dtype=float)
        shape = S.shape
        if shape != (len(names), len(names)):
            raise ValueError(
                f"similarity must be {len(names)} x {len(names)} (one row and column per "
                f"covariate); got shape {shape}."
            )
        source = "given"
    if knn is not None:
        S = core.knn_sparsify(S, check_int("knn", knn, min=1))
    return S, source


def _score_one(X, y, c, lab, sigma, select, n_folds, seed):
    Z = sel.summed_features(X, lab)
    B, beta, _ = sel.fit_map(Z, y, c, sigma)
    row = {
        "log_ml": sel.log_marginal_likelihood(Z, y, c, sigma, fit=(B, beta)),
        "train_accuracy": float(np.mean((Z @ B.T + beta).argmax(axis=1) == y)),
    }
    if select == "cv":
        row["cv_accuracy"] = sel.cv_accuracy(
            X, y, lab, c, sigma, n_folds=n_folds, rng=np.random.default_rng(seed)
        )
    return row, sel.associated_class(B)[0]


def _score(X, y, c, labels_list, sigma, select, n_folds, seed, n_jobs=None):
    """Log ML, training accuracy (and CV accuracy, same folds for every clustering) of
    every clustering, and the associated class of each of its clusters."""
    out = run_parallel(
        _score_one,
        [(X, y, c, lab, sigma, select, n_folds, seed) for lab in labels_list],
        n_jobs=n_jobs,
    )
    return pd.DataFrame([r for r, _ in out]), [a for _, a in out]


def _pick(scores: pd.DataFrame, n_clusters: np.ndarray, select: str) -> int:
    """Best row: highest criterion; ties go to fewer clusters."""
    col = "log_ml" if select == "marginal_likelihood" else "cv_accuracy"
    v = scores[col].to_numpy()
    best = np.flatnonzero(v >= v.max() - 1e-12)
    return int(best[np.argmin(n_clusters[best])])


# ------------------------------------------------------------------------ public
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
    numeric: Any = None,
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
    select : {"marginal_likelihood", "cv"}
        Selection criterion over the distinct clusterings.
    n_folds : int
        Folds of the cross-validations.
    rho, tol, max_iter
        ADMM step, tolerance (residuals below ``sqrt(c (d + 2 l)) tol``) and cap per nu.
    gammas, ks
        Grids of the baselines (default: 100 gammas; k = 1..d).
    missing : {"raise", "drop"}
    progress : bool, optional
        tqdm bar along the path.
    n_jobs : int, optional
        Score the distinct clusterings in parallel (joblib; ``-1``: all cores).
    rng : None, int or Generator
        Seeds the CV folds and k-means.

    Returns
    -------
    CovariateClusteringResult

    Examples
    --------
    >>> from sparseclust.simulate import covariate_sim
    >>> sim = covariate_sim(40, m=4, rng=0)
    >>> fit = covariate_clustering(sim.data, y=sim.labels, similarity=sim.sigma, sigma=0.1)
    >>> fit.n_clusters >= 1, len(fit.clusters)
    (True, 40)
    """
    call = call_string(covariate_clustering, locals())
    check_choice("method", method, list(METHODS))
    check_choice("select", select, list(SELECT))
    check_choice("sigma_rule", sigma_rule, list(SIGMA_RULES))
    lam = check_number("lam", lam, min=0)
    rho = check_number("rho", rho, min=0, min_inclusive=False)
    tol = check_number("tol", tol, min=0, min_inclusive=False)
    max_iter = check_int("max_iter", max_iter, min=1)
    n_folds = check_int("n_folds", n_folds, min=2)
    generator = as_rng(rng)
    table = build_table(
        x,
        data=data,
        y=y,
        response=True,
        numeric=numeric,
        missing=missing,
        allow_categorical=False,
        min_rows=4,
    )
    if table.response is None:
        raise ValueError(
            "covariate_clustering needs the classes: a formula 'label ~ .' with data=, or y=."
        )
    X = table.numeric
    names = table.numeric_names
    codes, classes = pd.factorize(table.response, sort=True)
    classes = pd.Index(classes, name=table.response.name)
    c = len(classes)
    if c < 2:
        raise ValueError(f"the response has {c} class; covariate clustering needs at least 2.")
    n, d = X.shape
    if d < 2:
        raise ValueError(f"there is {d} covariate; clustering covariates needs at least 2.")
    y_codes = np.asarray(codes, dtype=np.int64)

    S, s_source = _similarity(similarity, X, y_codes, names, knn)

    # sigma: CV on the full model (both rules from one table)
    sigma_table = None
    on_edge = False
    if sigma is None:
        s_acc, sigma_table, edge_acc = sel.choose_sigma(
            X,
            y_codes,
            c,
            rule="accuracy",
            n_folds=n_folds,
            rng=np.random.default_rng(int(generator.integers(2**63 - 1))),
        )
        s_ll = sel.choose_sigma(
            X,
            y_codes,
            c,
            rule="loglik",
            n_folds=n_folds,
            rng=np.random.default_rng(int(generator.integers(2**63 - 1))),
        )[0]
        sigma_values = {"accuracy": s_acc, "loglik": s_ll}
        sigma_used = sigma_values[sigma_rule]
        grid = sigma_table.index.to_numpy(dtype=float) if sigma_table is not None else []
        on_edge = len(grid) > 0 and sigma_used in (float(np.min(grid)), float(np.max(grid)))
        source = f"CV, rule '{sigma_rule}'"
        if on_edge:
            warnings.warn(
                f"sigma={sigma_used:g} chosen by rule '{sigma_rule}' is on the edge of the CV "
                "grid; the selected clustering depends on it (see .summary().tables['sigma_rules']), "
                "or pass sigma=.",
                CalibrationWarning,
                stacklevel=user_stacklevel(),
            )
    else:
        sigma_used = check_number("sigma", sigma, min=0, min_inclusive=False)
        sigma_values = {"given": sigma_used}
        source = "given"

    # the path of clusterings
    if method == "convex_fusion":
        edges, weights = core.edges_from_similarity(S)
        if progress is None:
            progress = n * d > 200_000
        records = core.clustering_path(
            X,
            y_codes,
            c,
            edges,
            weights,
            nu,
            lam=lam,
            tol=tol,
            max_iter=max_iter,
            rho=rho,
            progress=bool(progress),
        )
        distinct = core.distinct_clusterings(records)
        labels_list = [dc.labels for dc in distinct]
        tune = pd.DataFrame(
            {
                "nu_min": [dc.nu_min for dc in distinct],
                "nu_max": [dc.nu_max for dc in distinct],
            }
        )
        converged = [dc.n_unconverged == 0 for dc in distinct]
        n_capped = sum(not r.converged for r in records)
        if n_capped:
            warnings.warn(
                f"the ADMM hit max_iter={max_iter} at {n_capped} of {len(records)} values of "
                "nu (their clusterings are kept and flagged in .path); raise max_iter.",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
    else:
        P = S.toarray() if hasattr(S, "toarray") else np.asarray(S, dtype=float)
        if method == "convex_clustering":
            runs = sel.convex_clustering_path(P, gammas=gammas)
            col = "gamma"
        else:
            grid = range(1, d + 1) if ks is None else ks
            runs = sel.kmeans_covariates(P, list(grid), rng=generator)
            col = "k"
        seen: dict[bytes, int] = {}
        labels_list, values = [], []
        for v, lab in runs:
            lab = core.canonical_labels(lab)
            if lab.tobytes() not in seen:
                seen[lab.tobytes()] = len(labels_list)
                labels_list.append(lab)
                values.append(v)
        tune = pd.DataFrame({col: values})
        converged = [True] * len(labels_list)

    cv_seed = int(generator.integers(2**63 - 1))
    scores, class_path = _score(
        X, y_codes, c, labels_list, sigma_used, select, n_folds, cv_seed, n_jobs
    )
    n_cl = np.array([int(lab.max()) + 1 for lab in labels_list])
    best = _pick(scores, n_cl, select)
    lml = scores["log_ml"].to_numpy()
    others = np.delete(lml, best)
    margin = float(lml[best] - others.max()) if others.size else float("nan")
    path = pd.concat(
        [tune, pd.DataFrame({"n_clusters": n_cl}), scores],
        axis=1,
    )
    path["converged"] = converged
    path["selected"] = np.arange(len(path)) == best

    # selection under each sigma rule (the summary shows how firm the choice is)
    by_rule = {}
    for rule, s_val in sigma_values.items():
        if s_val == sigma_used:
            row = best
        else:
            sc, _ = _score(
                X, y_codes, c, labels_list, s_val, "marginal_likelihood", n_folds, 0, n_jobs
            )
            row = _pick(sc, n_cl, "marginal_likelihood")
        by_rule[rule] = {"sigma": s_val, "n_clusters_selected": int(n_cl[row]), "path_row": row}

    lab = labels_list[best]
    Z = sel.summed_features(X, lab)
    B, beta, _ = sel.fit_map(Z, y_codes, c, sigma_used)
    cls, odds = sel.associated_class(B)
    cl_index = pd.RangeIndex(B.shape[1], name="cluster")
    coef = pd.DataFrame(B.T, index=cl_index, columns=classes)
    cluster_class = pd.DataFrame(
        {
            "size": np.bincount(lab, minlength=B.shape[1]),
            "associated_class": classes[cls],
            "odds_ratio": odds,
        },
        index=cl_index,
    )
    if method == "convex_fusion":
        lo, hi = float(tune["nu_min"].iloc[best]), float(tune["nu_max"].iloc[best])
        nu_sel = float(np.sqrt(lo * hi)) if lo > 0 else hi / 2 if hi > 0 else 0.0
    else:
        nu_sel = float(tune.iloc[best, 0])
    return CovariateClusteringResult(
        clusters=pd.Series(lab, index=pd.Index(names, name="covariate"), name="cluster"),
        path=path,
        labels_path=labels_list,
        class_path=class_path,
        nu=nu_sel,
        coef=coef,
        intercept=pd.Series(beta, index=classes, name="intercept"),
        cluster_class=cluster_class,
        sigma=sigma_used,
        sigma_table=sigma_table,
        sigma_by_rule=by_rule,
        classes=classes,
        method=method,
        select=select,
        sigma_rule=sigma_rule,
        margin=margin,
        n_obs=n,
        call=call,
        params={
            "lam": lam,
            "rho": rho,
            "tol": tol,
            "max_iter": max_iter,
            "similarity": s_source,
            "knn": knn,
            "sigma_source": source,
            "sigma_on_edge": on_edge,
        },
        variables=table.spec,
        similarity=S,
    )
